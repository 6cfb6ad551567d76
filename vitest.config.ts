import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { aloneFiles, isolatedFiles } from './test/lanes.js';

const ROOT = fileURLToPath(new URL('.', import.meta.url));

/**
 * The files that change the machine for everyone (network namespaces and iptables, root's powers, fixed ports):
 * one at a time, by the rule in test/lanes.ts. The rest run side by side; `npm test` (scripts/test.mjs) runs the
 * two lanes in two processes at once, since one vitest process runs a one-worker project after all the others.
 */
const ISOLATED = [...isolatedFiles(ROOT).keys()];
/**
 * Alone: the files whose claim is about time under a load they make themselves (a `// lane: alone` line), run one at
 * a time after both other lanes have ended (scripts/test.mjs), so no other suite's load blurs it.
 */
const ALONE = aloneFiles(ROOT);

/**
 * Side by side: most suites wait on processes, sockets and API servers more than they compute, so one more than
 * the cores keeps a 2-core machine busy without starving a timing-sensitive test.
 */
const SIDE_BY_SIDE = Number(process.env.OSM_HC_TEST_WORKERS ?? availableParallelism() + 1);

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // expect.poll waits for something a process or server does a moment later (a log line, a watch): on a machine
    // busy with other work that moment can pass 1 s, vitest's default, without anything being wrong.
    expect: { poll: { timeout: 10_000 } },
    // Every webhook a test starts (and its children: they inherit it) serves /metrics on an ephemeral port, not
    // on the fixed default: several run at once, here and in other checkouts on the machine. A test that names a
    // port, or another value of the variable, gives its own.
    env: { OSM_HEALTHCHECK_METRICS_PORT: '0' },
    projects: [
      {
        extends: true,
        // fileParallelism false: one worker, one file at a time.
        test: { name: 'isolated', include: ISOLATED, fileParallelism: false },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, fileParallelism: false },
      },
      {
        extends: true,
        test: {
          name: 'side-by-side',
          include: ['test/**/*.test.ts'],
          exclude: [...ISOLATED, ...ALONE],
          maxWorkers: SIDE_BY_SIDE,
        },
      },
    ],
  },
});
