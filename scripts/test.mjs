// `npm test`'s vitest part: the two lanes of vitest.config.ts as two vitest processes side by side. One vitest
// process runs a project of one file at a time (the isolated lane) only after every other project is done, so the
// lanes would follow each other; two processes let the isolated files run one by one beside the rest. dist/ is
// built once here, before either starts (OSM_HC_DIST_BUILT tells the global setup). Their lines are passed on as
// they come, each marked with its lane by vitest; the exit status is the worse of the two. Arguments go to both
// (`npm test -- test/init`): a lane with no file left passes.

import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const lanes = ['isolated', 'side-by-side'].map((project) => {
  const child = spawn(
    process.execPath,
    [vitest, 'run', '--project', project, '--passWithNoTests', ...process.argv.slice(2)],
    { cwd: root, env: { ...process.env, OSM_HC_DIST_BUILT: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  createInterface({ input: child.stdout }).on('line', (line) => process.stdout.write(`${line}\n`));
  createInterface({ input: child.stderr }).on('line', (line) => process.stderr.write(`${line}\n`));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ project, code, signal })));
});

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {});
const ends = await Promise.all(lanes);
for (const { project, code, signal } of ends) {
  process.stdout.write(`lane ${project}: ${signal ?? `exit ${code}`}\n`);
}
process.exitCode = ends.some(({ code }) => code !== 0) ? 1 : 0;
