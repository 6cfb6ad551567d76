// Builds dist/cli.mjs once before the suite, so tests that spawn the CLI run the code under test.

import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
