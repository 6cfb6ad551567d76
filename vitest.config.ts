import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Network-namespace suites change iptables state: run files one at a time to keep them apart.
    fileParallelism: false,
  },
});
