import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // expect.poll waits for something a process or server does a moment later (a log line, a watch): on a machine
    // busy with other work that moment can pass 1 s, vitest's default, without anything being wrong.
    expect: { poll: { timeout: 10_000 } },
    // Network-namespace suites change iptables state: run files one at a time to keep them apart.
    fileParallelism: false,
    // Every webhook a test starts (and its children: they inherit it) serves /metrics on an ephemeral port, not
    // on the fixed default: several run at once, here and in other checkouts on the machine. A test that names a
    // port, or another value of the variable, gives its own.
    env: { OSM_HEALTHCHECK_METRICS_PORT: '0' },
  },
});
