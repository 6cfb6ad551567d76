// The rule that puts a test file in the isolated lane (test/lanes.ts), on a tree made here and on the project's own.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { aloneFiles, isolatedFiles } from './lanes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('isolatedFiles', () => {
  const root = mkdtempSync(join(tmpdir(), 'osm-hc-lanes-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('test/helpers/system-tools.ts', 'export function root(why: string) { return why; }\n');
  write(
    'test/lab.ts',
    "import { root } from './helpers/system-tools.js';\nexport const run = ['ip', 'netns', 'add'];\n",
  );
  write('test/helpers/pod.ts', "import { run } from '../lab.js';\nexport const pod = run;\n");
  write('test/deep/pod.test.ts', "import { pod } from '../helpers/pod.js';\n");
  write('test/deep/netns.test.ts', "execa('ip', ['netns', 'list']);\n");
  write(
    'test/root.test.ts',
    "import { root } from './helpers/system-tools.js';\nskipWithout('x', [root('y')]);\n",
  );
  write('test/port.test.ts', '// first line\n// lane: isolated: listens on 8080\n');
  write('test/pure.test.ts', "import { skipWithout } from './helpers/system-tools.js';\n");
  write('test/prose.test.ts', "const note = 'a test says // lane: isolated on a line of its own';\n");
  write(
    'test/alone.test.ts',
    "// lane: alone: holds time under its own load\nimport { root } from './helpers/system-tools.js';\n",
  );
  const lanes = isolatedFiles(root);

  it('takes a file that makes network namespaces, or imports what does, at any depth', () => {
    expect(lanes.get('test/deep/netns.test.ts')).toMatch(/network namespaces/);
    expect(lanes.get('test/deep/pod.test.ts')).toBe(
      'makes or enters network namespaces, and changes iptables there (test/lab.ts)',
    );
  });

  it("takes root's suites and those that say so; not one that only imports the markers' definitions", () => {
    expect(lanes.get('test/root.test.ts')).toMatch(/needs root/);
    expect(lanes.get('test/port.test.ts')).toMatch(/says so/);
    expect(lanes.has('test/pure.test.ts')).toBe(false);
    expect(lanes.has('test/lab.ts')).toBe(false);
  });

  it('takes the lane line only on a line of its own', () => {
    expect(lanes.has('test/prose.test.ts')).toBe(false);
  });

  it('leaves a file that runs alone to the alone lane, root or not', () => {
    expect(lanes.has('test/alone.test.ts')).toBe(false);
    expect(aloneFiles(root)).toEqual(['test/alone.test.ts']);
    expect(aloneFiles(ROOT)).toEqual(['test/node/under-load.test.ts']);
  });

  it("puts the project's network-namespace, root and fixed-port suites in it, and its pure suites beside them", () => {
    const own = isolatedFiles(ROOT);
    for (const file of [
      'test/init/bypass.test.ts',
      'test/e2e/pod.test.ts',
      'test/analyze/probes/pod-proxy.test.ts',
      'test/image/image.test.ts',
      'test/commands/demo.test.ts',
    ]) {
      expect(own.has(file), file).toBe(true);
    }
    for (const file of [
      'test/rewrite/pod.test.ts',
      'test/analyze/cluster.test.ts',
      'test/webhook/mutate.test.ts',
    ]) {
      expect(own.has(file), file).toBe(false);
    }
  });
});
