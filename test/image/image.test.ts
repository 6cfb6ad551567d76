// The image: the Dockerfile says what the pod spec that `inject` writes relies on and ships only what runs,
// scripts/image-build.sh runs the Dockerfile's own build steps and every subcommand from the layout (as root
// chrooted into a runtime root that scripts/runtime-root.sh assembled, as the Dockerfile does), and
// scripts/image-measure.sh (a real buildah build, not run here) passes the Dockerfile's build arguments.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPANION_UID } from '../../src/scheme.js';
import {
  CA_BUNDLE,
  DPKG,
  IP,
  IPTABLES,
  OPENSSL,
  root,
  SHELLCHECK,
  skipWithout,
  TINI,
  tool,
} from '../helpers/system-tools.js';
import { expectFixedLayer, expectLicensesInImage, expectSbomOfImage, unpackBuilt } from './built-image.js';
import { parseDockerfile, runCommands } from './dockerfile.js';
import { localRegistry, pushAndRead, REGISTRY_TOOLS } from './local-registry.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STAGES = parseDockerfile(readFileSync(`${ROOT}Dockerfile`, 'utf8'));
const DOCKERFILE = readFileSync(`${ROOT}Dockerfile`, 'utf8');
const SCRIPT = readFileSync(`${ROOT}scripts/image-build.sh`, 'utf8');
const MEASURE = readFileSync(`${ROOT}scripts/image-measure.sh`, 'utf8');
const ARCH_BUILD = readFileSync(`${ROOT}scripts/arch-build.sh`, 'utf8');
const FINAL = STAGES.at(-1);
const RUNTIME = STAGES.find((s) => s.name === 'runtime');
const collapse = (text: string) => text.replace(/\s+/g, ' ');

function argsOf(keyword: string): string[] {
  return (FINAL?.instructions ?? []).filter((i) => i.keyword === keyword).map((i) => i.args);
}

describe('Dockerfile', () => {
  it('builds on the Node base, assembles the runtime on Debian and ends on an empty base holding only what runs', () => {
    expect(STAGES.map((s) => [s.name, s.from])).toEqual([
      ['build', `\${NODE_IMAGE}`],
      ['node', `\${NODE_IMAGE}`],
      ['runtime', `\${DEBIAN_IMAGE}`],
      ['sbom', `\${NODE_IMAGE}`],
      ['', 'scratch'],
    ]);
  });

  it.each([
    { name: 'NODE_IMAGE', want: /^node:24-bookworm-slim$/ },
    // Bookworm: the glibc and libstdc++ that the Node base's binary was built against.
    { name: 'DEBIAN_IMAGE', want: /^debian:bookworm-slim$/ },
  ])('the base $name is an ARG with a public default', ({ name, want }) => {
    expect(new RegExp(`^ARG ${name}=(\\S+)$`, 'm').exec(DOCKERFILE)?.[1]).toMatch(want);
  });

  it.each([
    {
      name: "tini is PID 1 and runs the CLI through serve's supervisor, so pod args are subcommands",
      keyword: 'ENTRYPOINT',
      want: '["/usr/bin/tini", "--", "/app/supervise.sh", "node", "/app/dist/cli.mjs"]',
    },
    { name: 'the default command is serve', keyword: 'CMD', want: '["serve"]' },
    {
      name: "NODE_ENV is production, PATH Debian's (an empty base has none), glibc's malloc one arena",
      keyword: 'ENV',
      want: 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_ENV=production MALLOC_ARENA_MAX=1',
    },
    {
      name: "the default user is the companion's non-root uid",
      keyword: 'USER',
      want: `${COMPANION_UID}:${COMPANION_UID}`,
    },
  ])('$name', ({ keyword, want }) => {
    expect(argsOf(keyword)).toEqual([want]);
  });

  it('the runtime stage installs iptables (both backends, ip6tables), nftables (nft), tini and the CA bundle, then lays out their files', () => {
    expect(runCommands(RUNTIME ?? { name: '', from: '', instructions: [] })).toEqual([
      'apt-get update',
      'apt-get install -y --no-install-recommends iptables nftables tini ca-certificates',
      'runtime-root.sh /rootfs iptables nftables tini dash coreutils libc6 libstdc++6 libgcc-s1 netbase',
    ]);
  });

  it('the final stage runs nothing: it has no shell of its own to run it with', () => {
    expect(runCommands(FINAL ?? { name: '', from: '', instructions: [] })).toEqual([]);
  });

  it("copies the runtime root, Node's binary and license (no npm, npx, corepack, yarn), dist, the SBOM, LICENSE, init and serve's supervisor: no node_modules", () => {
    expect(argsOf('COPY')).toEqual([
      '--from=runtime /rootfs /',
      '--from=node /usr/local/bin/node /usr/local/bin/node',
      '--from=node /usr/local/LICENSE /usr/local/share/doc/node/LICENSE',
      '--from=build /src/dist dist',
      '--from=sbom /sbom.cdx.json sbom.cdx.json',
      'LICENSE LICENSE',
      'init init',
      'image/supervise.sh supervise.sh',
      'image/osm-healthcheck /osm-healthcheck',
    ]);
  });

  it("/osm-healthcheck (osm-edge's healthcheck container's command) execs the entrypoint with serve in their mode", () => {
    const entrypoint = JSON.parse(argsOf('ENTRYPOINT')[0] ?? '[]') as string[];
    const script = readFileSync(`${ROOT}image/osm-healthcheck`, 'utf8');
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script.split('\n').filter((line) => !line.startsWith('#') && line !== '')).toEqual([
      `exec ${entrypoint.join(' ')} serve --osm-edge-compat "$@"`,
    ]);
    // Executable in the checkout: COPY keeps the mode, and a container's command must be executable.
    expect(statSync(`${ROOT}image/osm-healthcheck`).mode & 0o111).toBe(0o111);
  });

  it('scripts/image-build.sh assembles the runtime root from the same packages, for either architecture', () => {
    const assemble = runCommands(RUNTIME ?? { name: '', from: '', instructions: [] }).at(-1) ?? '';
    const packages = assemble.split(' ').slice(2).join(' ');
    expect(SCRIPT).toContain(`runtime_packages=(${packages})\n`);
    // Bash's array expansion, not a template literal's placeholder.
    const all = '"$' + '{runtime_packages[@]}"';
    expect(SCRIPT).toContain(`"$root/scripts/runtime-root.sh" "$image" ${all}\n`);
    expect(ARCH_BUILD).toContain(`runtime-root.sh /rootfs ${all}`);
  });

  it.each(
    STAGES.filter((s) => s.name === 'node' || s.name === 'runtime').flatMap((stage) =>
      runCommands(stage)
        .filter((command) => !command.startsWith('runtime-root.sh'))
        .map((command) => ({ name: `${stage.name}: ${command}`, command })),
    ),
  )(
    'scripts/arch-build.sh (another architecture) runs the same step in the stand-in: $name',
    ({ command }) => {
      expect(collapse(ARCH_BUILD)).toContain(command);
    },
  );

  it.each(
    STAGES.filter((s) => s.name === 'build').flatMap((stage) =>
      runCommands(stage).map((command) => ({ name: `${stage.name}: ${command}`, command })),
    ),
  )('scripts/image-build.sh runs the same step: $name', ({ command }) => {
    expect(collapse(SCRIPT)).toContain(command);
  });

  it("scripts/image-build.sh strips node as the node stage does (with this machine's binutils)", () => {
    const node = STAGES.find((s) => s.name === 'node');
    const strip = node && runCommands(node).find((c) => c.startsWith('strip '));
    expect(strip).toBe('strip --strip-all /usr/local/bin/node');
    expect(SCRIPT).toContain('strip --strip-all "$work/node/node"');
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

describe('scripts/image-measure.sh', () => {
  it.each([...DOCKERFILE.matchAll(/^ARG (\w+)=/gm)].map(([, name]) => ({ name: name ?? '' })))(
    'builds against local bases: passes --build-arg $name',
    ({ name }) => {
      expect(MEASURE).toContain(`--build-arg ${name}=`);
    },
  );
});

describe.skipIf(skipWithout('shellcheck of the image scripts', [SHELLCHECK]))('shellcheck', () => {
  it.each([
    'scripts/image-build.sh',
    'scripts/arch-build.sh',
    'scripts/build-trust.sh',
    'scripts/emulation.sh',
    'scripts/standin-root.sh',
    'scripts/image-index.sh',
    'scripts/image-archive.sh',
    'scripts/image-measure.sh',
    'scripts/runtime-root.sh',
    'image/osm-healthcheck',
  ])(
    '%s',
    async (script) => {
      // -x: the sourced scripts (arch-build.sh, emulation.sh) are checked where they are sourced, too.
      const result = await execa('shellcheck', ['-x', script], { cwd: ROOT, reject: false });
      expect(result.stdout).toBe('');
      expect(result.exitCode).toBe(0);
      // A second of CPU each, but with the image builds beside it on a busy 2-core machine, 20 s passed.
    },
    60_000,
  );
});

/**
 * The image that `first` (a build's --out) holds: its SBOM valid and exactly its contents, the licenses a copy owes,
 * the layer fixed; then a second build of the commit (--no-checks) gives the same digest and SBOM.
 */
async function expectReproducibleImage(first: string, arch: 'amd64' | 'arm64'): Promise<void> {
  const image = await unpackBuilt(first);
  try {
    expect(image.config.architecture).toBe(arch);
    // The Dockerfile's final stage, as a builder would write its config.
    expect(image.config.config).toEqual({
      Entrypoint: JSON.parse(argsOf('ENTRYPOINT')[0] ?? '[]'),
      Cmd: JSON.parse(argsOf('CMD')[0] ?? '[]'),
      Env: (argsOf('ENV')[0] ?? '').split(' '),
      User: argsOf('USER')[0],
      WorkingDir: argsOf('WORKDIR')[0],
      ExposedPorts: Object.fromEntries((argsOf('EXPOSE')[0] ?? '').split(' ').map((p) => [`${p}/tcp`, {}])),
    });
    // SOURCE_DATE_EPOCH: the commit's time.
    const { stdout: epoch } = await execa('git', ['-C', ROOT, 'log', '-1', '--format=%ct']);
    expect(image.config.created).toBe(new Date(Number(epoch) * 1000).toISOString().replace('.000Z', 'Z'));
    const { stdout: nodeVersion } = await execa('chroot', [image.root, '/usr/local/bin/node', '--version']);
    await expectSbomOfImage(image, nodeVersion);
    expectLicensesInImage(image, ROOT);
    await expectFixedLayer(image, first);
  } finally {
    image.remove();
  }
  const second = mkdtempSync(join(tmpdir(), 'osm-hc-second-'));
  try {
    const args = [`${ROOT}scripts/image-build.sh`, '--arch', arch, '--out', second, '--no-checks'];
    const result = await execa('bash', args, { reject: false, all: true });
    expect(result.exitCode, result.all).toBe(0);
    expect(result.all).toContain(`image digest (${arch}): ${image.digest}\n`);
    expect(readFileSync(join(second, 'sbom.cdx.json'), 'utf8')).toBe(
      readFileSync(join(first, 'sbom.cdx.json'), 'utf8'),
    );
  } finally {
    rmSync(second, { recursive: true, force: true });
  }
}

/** What image-build.sh prints once serve (with a gRPC probe), wait, check, inject and the webhook ran in the image. */
function expectEverySubcommandRan(all: string): void {
  expect(all).toMatch(/\/healthz: 200 ok\n/);
  expect(all).toMatch(
    /\/osm-startup-probe\/app: 200 startup app: grpc 127\.0\.0\.1:\d+ service "" -> SERVING /,
  );
  expect(all).toContain('wait: ok');
  expect(all).toContain('the probe passed');
  expect(all).toContain('inject: liveness probe rewritten');
  expect(all).toContain('webhook /healthz: 200 ok');
  expect(all).toContain('webhook /metrics build_info: 1');
}

const IS_ROOT = process.getuid?.() === 0;
/**
 * As root it assembles the runtime root from this machine's packages (iptables, tini, the CA bundle) and runs
 * `init` in a network namespace; either way the webhook's throwaway certificate comes from openssl.
 */
const BUILD_NEEDS = IS_ROOT ? [OPENSSL, TINI, CA_BUNDLE, DPKG, IPTABLES, IP] : [OPENSSL];

describe.skipIf(skipWithout('scripts/image-build.sh (test/image/image.test.ts)', BUILD_NEEDS))(
  'scripts/image-build.sh',
  () => {
    // Made when the suite runs, not when it is collected: a skipped suite leaves nothing behind.
    let out = '';
    beforeAll(() => {
      out = mkdtempSync(join(tmpdir(), 'osm-hc-built-amd64-'));
    });
    afterAll(() => rmSync(out, { recursive: true, force: true }));

    it('lays out the image without npm, node_modules or sources (as root: without dpkg, apt or perl) and runs every subcommand from it', async () => {
      const args = IS_ROOT ? ['--out', out] : [];
      const result = await execa('bash', [`${ROOT}scripts/image-build.sh`, ...args], {
        reject: false,
        all: true,
      });
      expect(result.exitCode, result.all).toBe(0);
      const version = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).version;
      expect(result.all).toContain(`== --version\n${version}\n`);
      expectEverySubcommandRan(result.all);
      if (IS_ROOT) {
        // Chrooted into the runtime root with Node's binary, dist/ and init/, as the image runs.
        expect(result.all).toContain('== runtime stage: scripts/runtime-root.sh');
        expect(result.all).toContain(
          '/bin/sh, sleep, tini, iptables-nft, iptables-legacy, ip6tables, nft, the CA bundle: run in the image',
        );
        // osm-edge's healthcheck container: 15904 alone beside the sidecar's 15901-15903, tini PID 1.
        expect(result.all).toContain('listening: {"healthcheck":15904}\n');
        expect(result.all).toMatch(
          /200 healthcheck: tcp 127\.0\.0\.1:8080 connected in \d+ ms\n404 [^\n]*ECONNREFUSED[^\n]*\n400 [^\n]*\n15901: SIDECAR\n15902: SIDECAR\n15903: SIDECAR\n/,
        );
        expect(result.all).toContain('/osm-healthcheck: stopped on SIGTERM, exit 0');
        for (const backend of ['nft', 'legacy']) {
          expect(result.all).toMatch(
            new RegExp(
              `# IPv4: iptables-${backend}-restore --noflush\\n(?:.*\\n)*?-A OSM_HEALTHCHECK -p tcp -m tcp --dport 15901:15904 -j ACCEPT\\n`,
            ),
          );
        }
        // The node agent's native nftables backend: nft and its libraries run in the image.
        expect(result.all).toMatch(
          /# IPv6: nft -f -\n(?:.*\n)*?\t\tip6 daddr fd00:88::\/64 tcp dport 15901-15904 meta skuid >= 0 snat to fd16:9254:7127:1337:ffff:ffff:ffff:ffff\n/,
        );
      } else {
        expect(result.all).toContain('!!! SKIPPED the runtime stage');
        expect(result.all).toContain('!!! SKIPPED init --dry-run');
        expect(result.all).toContain('!!! SKIPPED /osm-healthcheck');
      }
      expect(result.all).toMatch(/image-build: ok\n?$/);
    }, 300_000);

    // As root only: without the runtime root there is no image to pack.
    it.skipIf(!IS_ROOT)(
      'carries an SBOM of exactly its contents and the licenses it owes; a second build of the commit gives the same digest',
      async () => {
        await expectReproducibleImage(out, 'amd64');
      },
      300_000,
    );

    it.skipIf(
      !IS_ROOT || skipWithout('the push to a local registry (test/image/image.test.ts)', REGISTRY_TOOLS),
    )(
      'pushed to a registry, the image keeps the digest the build printed: the one cosign signs (docs/image.md)',
      async () => {
        const registry = await localRegistry();
        try {
          const printed = readFileSync(join(out, 'digest'), 'utf8').trim();
          const version = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).version;
          const served = await pushAndRead(join(out, 'oci'), version, `${registry.host}/osm-healthcheck`);
          expect(served).toBe(printed);
        } finally {
          await registry.stop();
        }
      },
      120_000,
    );
  },
);

// arm64 under emulation: about 4 minutes cold here (the stand-in bases: debootstrap and its second stage under
// qemu, apt-get and strip in them), about 1 warm; it needs root, qemu-user-static, binfmt-support, debootstrap and
// changes the kernel's binfmt_misc, so it runs when asked for: .ci/run asks (OSM_HC_IMAGE_ARCHES=arm64), as
// docs/image.md says; by hand: OSM_HC_IMAGE_ARCHES=arm64 npx vitest run test/image/image.test.ts.
const ARM64 = (process.env.OSM_HC_IMAGE_ARCHES ?? '').split(',').includes('arm64');
if (!ARM64) {
  console.warn(
    '\n!!! SKIPPED the arm64 image build (scripts/image-build.sh --arch arm64, under qemu: ~4 min cold, ' +
      '~1 warm): set OSM_HC_IMAGE_ARCHES=arm64 to run it (as root; .ci/run does).\n',
  );
}
const ARM64_NEEDS = [
  root('the arm64 stand-in bases (debootstrap) and every stage run chrooted'),
  tool('qemu-aarch64-static', 'apt-get install qemu-user-static'),
  tool('update-binfmts', 'apt-get install binfmt-support'),
  tool('debootstrap'),
  OPENSSL,
  IP,
];

describe.skipIf(!ARM64 || skipWithout('the arm64 image build (test/image/image.test.ts)', ARM64_NEEDS))(
  'scripts/image-build.sh --arch arm64',
  () => {
    // Made when the suite runs, not when it is collected: a skipped suite leaves nothing behind.
    let out = '';
    beforeAll(() => {
      out = mkdtempSync(join(tmpdir(), 'osm-hc-built-arm64-'));
    });
    afterAll(() => rmSync(out, { recursive: true, force: true }));

    it('builds every stage in arm64 stand-ins under qemu and runs every subcommand chrooted into the arm64 root', async () => {
      const args = [`${ROOT}scripts/image-build.sh`, '--arch', 'arm64', '--out', out];
      const result = await execa('bash', args, { reject: false, all: true });
      expect(result.exitCode, result.all).toBe(0);
      expect(result.all).toContain('architecture: arm64, under qemu-aarch64 (binfmt_misc)');
      expect(result.all).toContain('node in the image: process.arch arm64');
      expect(result.all).toContain(
        '/bin/sh, sleep, tini, iptables-legacy, ip6tables-legacy, the CA bundle: run in the image; iptables-nft, ip6tables-nft, nft: present (under qemu, not run)',
      );
      expectEverySubcommandRan(result.all);
      // qemu user mode has no netlink: the nft backend is said not to run, the legacy one runs.
      expect(result.all).toContain('!!! init --dry-run --backend nft NOT RUN: under qemu user mode');
      expect(result.all).toMatch(
        /# IPv4: iptables-legacy-restore --noflush\n(?:.*\n)*?-A OSM_HEALTHCHECK -p tcp -m tcp --dport 15901:15904 -j ACCEPT\n/,
      );
      expect(result.all).toMatch(/image-build: ok\n?$/);
    }, 2_400_000);

    it('carries an SBOM of exactly its contents and the licenses it owes; a second build of the commit gives the same digest', async () => {
      await expectReproducibleImage(out, 'arm64');
    }, 1_200_000);
  },
);
