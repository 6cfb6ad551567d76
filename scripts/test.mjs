// `npm test`'s vitest part: the lanes of vitest.config.ts. The isolated and the side-by-side lane run as two vitest
// processes at once: one vitest process runs a project of one file at a time (the isolated lane) only after every
// other project is done, so the lanes would follow each other; two processes let the isolated files run one by one
// beside the rest. Then the alone lane, on a machine doing nothing else: suites whose claim is about time under a
// load they make themselves (test/lanes.ts, `// lane: alone`). dist/ is built once here, before any starts
// (OSM_HC_DIST_BUILT tells the global setup). Their lines are passed on as they come, each marked with its lane by
// vitest; the exit status is the worst of them. Arguments go to every lane (`npm test -- test/init`): a lane with no
// file left passes.

import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const lane = (project) => {
  const child = spawn(
    process.execPath,
    [vitest, 'run', '--project', project, '--passWithNoTests', ...process.argv.slice(2)],
    { cwd: root, env: { ...process.env, OSM_HC_DIST_BUILT: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  createInterface({ input: child.stdout }).on('line', (line) => process.stdout.write(`${line}\n`));
  createInterface({ input: child.stderr }).on('line', (line) => process.stderr.write(`${line}\n`));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ project, code, signal })));
};

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {});
const ends = await Promise.all(['isolated', 'side-by-side'].map(lane));
ends.push(await lane('alone'));
for (const { project, code, signal } of ends) {
  process.stdout.write(`lane ${project}: ${signal ?? `exit ${code}`}\n`);
}
process.exitCode = ends.some(({ code }) => code !== 0) ? 1 : 0;
