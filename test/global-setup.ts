// Builds dist/cli.mjs once before the suite, so tests that spawn the CLI run the code under test, and stages a
// copy every user can read for the tests that run it as another uid (test/helpers/staged-cli.ts).

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { stageCli } from './helpers/staged-cli.js';

export default function setup(project: TestProject): () => void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  const staged = stageCli(root);
  project.provide('stagedCliDir', staged.dir);
  return () => staged.remove();
}
