// Builds dist/cli.mjs once before the suite, so tests that spawn the CLI run the code under test, and stages a
// copy every user can read for the tests that run it as another uid (test/helpers/staged-cli.ts). vitest calls
// this for the root and for each project (vitest.config.ts): the first call builds and stages, every call provides
// the one copy, and the last teardown removes it.

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { type Staged, stageCli } from './helpers/staged-cli.js';

/** The run's one build: vitest loads this file afresh for each project, in the one main process. */
const RUN = Symbol.for('osm-healthcheck.test-run');
type Run = { staged: Staged; users: number };
const shared = globalThis as { [RUN]?: Run };

export default function setup(project: TestProject): () => void {
  if (shared[RUN] === undefined) {
    const root = fileURLToPath(new URL('..', import.meta.url));
    // scripts/test.mjs (npm test) built it once for both its vitest processes.
    if (process.env.OSM_HC_DIST_BUILT !== '1') {
      execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
    }
    shared[RUN] = { staged: stageCli(root), users: 0 };
  }
  const run = shared[RUN];
  run.users += 1;
  project.provide('stagedCliDir', run.staged.dir);
  return () => {
    run.users -= 1;
    if (run.users === 0) {
      run.staged.remove();
      delete shared[RUN];
    }
  };
}
