// The image: the Dockerfile says what the pod spec that `inject` writes relies on, scripts/image-build.sh runs the
// Dockerfile's own build steps, and the result it lays out runs --version, serve and init --dry-run.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { COMPANION_UID } from '../../src/scheme.js';
import { parseDockerfile, runCommands } from './dockerfile.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STAGES = parseDockerfile(readFileSync(`${ROOT}Dockerfile`, 'utf8'));
const SCRIPT = readFileSync(`${ROOT}scripts/image-build.sh`, 'utf8');
const FINAL = STAGES.at(-1);
const collapse = (text: string) => text.replace(/\s+/g, ' ');

function argsOf(keyword: string): string[] {
  return (FINAL?.instructions ?? []).filter((i) => i.keyword === keyword).map((i) => i.args);
}

describe('Dockerfile', () => {
  it('builds in stages on Node 24 LTS, ending in an unnamed runtime stage', () => {
    expect(STAGES.map((s) => s.name)).toEqual(['build', 'deps', '']);
    const nodeImage = /ARG NODE_IMAGE=(\S+)/.exec(readFileSync(`${ROOT}Dockerfile`, 'utf8'))?.[1];
    expect(nodeImage).toMatch(/^node:24-(alpine|.*slim)$/);
    for (const stage of STAGES) expect(stage.from).toMatch(/^\$\{NODE_IMAGE\}$/);
  });

  it.each([
    {
      name: 'tini is PID 1 and runs the CLI, so pod args are subcommands',
      keyword: 'ENTRYPOINT',
      want: '["/usr/bin/tini", "--", "node", "/app/dist/cli.mjs"]',
    },
    { name: 'the default command is serve', keyword: 'CMD', want: '["serve"]' },
    { name: 'NODE_ENV is production', keyword: 'ENV', want: 'NODE_ENV=production' },
    {
      name: "the default user is the companion's non-root uid",
      keyword: 'USER',
      want: `${COMPANION_UID}:${COMPANION_UID}`,
    },
  ])('$name', ({ keyword, want }) => {
    expect(argsOf(keyword)).toEqual([want]);
  });

  it('installs both iptables backends, ip6tables and tini, and copies only dist, init and production deps', () => {
    expect(runCommands(FINAL ?? { name: '', from: '', instructions: [] })).toContain(
      'apt-get install -y --no-install-recommends iptables tini',
    );
    expect(argsOf('COPY')).toEqual([
      '--from=deps /app/package.json package.json',
      '--from=deps /app/node_modules node_modules',
      '--from=build /src/dist dist',
      'init init',
    ]);
    const deps = STAGES.find((s) => s.name === 'deps');
    expect(deps && runCommands(deps).some((c) => c.startsWith('npm ci --omit=dev'))).toBe(true);
  });

  it.each(
    STAGES.filter((s) => s.name !== '').flatMap((stage) =>
      runCommands(stage).map((command) => ({ name: `${stage.name}: ${command}`, command })),
    ),
  )('scripts/image-build.sh runs the same step: $name', ({ command }) => {
    expect(collapse(SCRIPT)).toContain(command);
  });

  it.each(
    STAGES.flatMap((s) => s.instructions)
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(' ').slice(0, -1))
      .map((source) => ({ name: source, source })),
  )('scripts/image-build.sh copies $name from the checkout too', ({ source }) => {
    expect(SCRIPT).toContain(`$root/${source}`);
  });
});

describe('scripts/image-build.sh', () => {
  it('builds the image layout in a temp dir and runs --version, serve and init --dry-run', async () => {
    const result = await execa('bash', [`${ROOT}scripts/image-build.sh`], { reject: false, all: true });
    expect(result.exitCode, result.all).toBe(0);
    const version = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).version;
    expect(result.all).toContain(`== --version\n${version}\n`);
    expect(result.all).toMatch(/\/healthz: 200 ok\n/);
    expect(result.all).toMatch(/\/osm-startup-probe\/app: 503 startup app: grpc 127\.0\.0\.1:9 /);
    if (process.getuid?.() === 0) {
      expect(result.all).toContain('-A OSM_HEALTHCHECK -p tcp -m tcp --dport 15901:15904 -j ACCEPT');
    } else {
      expect(result.all).toContain('!!! SKIPPED init --dry-run');
    }
    expect(result.all).toMatch(/image-build: ok\n?$/);
  }, 180_000);
});
