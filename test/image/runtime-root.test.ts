// scripts/runtime-root.sh on this machine's Debian packages (CI's is bookworm, as the image's base), with the
// Dockerfile's own package list: the root holds exactly the files of the packages its dpkg status lists, that
// list is closed under Pre-Depends and Depends (but for what only maintainer scripts need), and no package
// manager, perl or npm is in it. Running every subcommand chrooted into such a root is image.test.ts's part
// (scripts/image-build.sh as root).

import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPANION_UID } from '../../src/scheme.js';
import { CA_BUNDLE, DPKG, IPTABLES, root, skipWithout, TINI } from '../helpers/system-tools.js';
import { parseDockerfile, runCommands } from './dockerfile.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = `${ROOT}scripts/runtime-root.sh`;
const runtime = parseDockerfile(readFileSync(`${ROOT}Dockerfile`, 'utf8')).find((s) => s.name === 'runtime');
const assemble = runtime && runCommands(runtime).find((c) => c.startsWith('runtime-root.sh /rootfs '));
const PACKAGES = assemble?.split(' ').slice(2) ?? [];
/**
 * Depended on, left out on purpose: only maintainer scripts run these (dash's dpkg-divert and add-shell;
 * base-files', listed for the scanners' sake with only /etc/os-release and /etc/debian_version, awk).
 */
const MAINTAINER_ONLY = ['dpkg', 'debianutils', 'awk'];
/** dpkg-query -f formats: ${field} is dpkg's syntax, not a template literal's. */
const FIELD = (name: string) => `\${${name}}`;
/** Files the script adds that no package of the root owns. */
const EXTRAS = [
  '/etc/ld.so.cache',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/ssl/certs/ca-certificates.crt',
  '/var/lib/dpkg/status',
];
/** The refusals need dpkg-query only; the real run root (ldconfig -r chroots) and the packages it lays out. */
const SKIP_REFUSALS = skipWithout('scripts/runtime-root.sh refusals', [DPKG]);
const SKIP = skipWithout('scripts/runtime-root.sh on real packages', [
  root('ldconfig -r chroots'),
  DPKG,
  TINI,
  IPTABLES,
  CA_BUNDLE,
]);

const run = (args: string[]) => execa('sh', [SCRIPT, ...args], { reject: false, all: true });
const lines = (text: string) => text.split('\n').filter((line) => line !== '');

it('the Dockerfile assembles its runtime root from the packages that run', () => {
  expect(PACKAGES).toEqual([
    'iptables',
    'nftables',
    'tini',
    'dash',
    'coreutils',
    'libc6',
    'libstdc++6',
    'libgcc-s1',
    'netbase',
  ]);
});

describe.skipIf(SKIP_REFUSALS)('scripts/runtime-root.sh refuses', () => {
  const taken = mkdtempSync(join(tmpdir(), 'osm-hc-rr-taken-'));
  afterAll(() => rmSync(taken, { recursive: true, force: true }));
  it.each([
    { name: 'no arguments', args: [], code: 2, want: 'usage:' },
    { name: 'no package', args: [join(taken, 'new')], code: 2, want: 'usage:' },
    { name: 'a DEST that exists', args: [taken, 'dash'], code: 1, want: `${taken} exists` },
    {
      name: 'a package that is not installed',
      args: [join(taken, 'new'), 'osm-hc-no-such-package'],
      code: 1,
      want: 'osm-hc-no-such-package is not installed',
    },
  ])('$name', async ({ args, code, want }) => {
    const result = await run(args);
    expect(result.exitCode, result.all).toBe(code);
    expect(result.all).toContain(want);
  });
});

describe.skipIf(SKIP)('scripts/runtime-root.sh on this machine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-rr-'));
  const dest = join(dir, 'root');
  let files: string[] = [];
  let listed: string[] = [];
  const query = (args: string[]) => execa('dpkg-query', [`--admindir=${dest}/var/lib/dpkg`, ...args]);

  beforeAll(async () => {
    const result = await run([dest, ...PACKAGES]);
    expect(result.exitCode, result.all).toBe(0);
    files = lines((await execa('find', [dest, '!', '-type', 'd', '-printf', '/%P\\n'])).stdout);
    listed = lines((await query(['-W', `-f=${FIELD('binary:Package')}\\n`])).stdout);
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds no package manager, perl, npm, npx, corepack or yarn', () => {
    const unwanted =
      /\/(dpkg|dpkg-[^/]*|apt|apt-[^/]*|debconf|perl|perl5[^/]*|npm|npx|corepack|yarn|yarnpkg)$/;
    expect(files.filter((f) => unwanted.test(f))).toEqual([]);
    expect(listed.filter((p) => /^(dpkg|apt|debconf|perl-base)(:|$)/.test(p))).toEqual([]);
  });

  it('lists exactly the packages whose files it holds: every file is theirs, each has files in it', async () => {
    // Packages still name /lib, /bin and /sbin paths, which the usrmerge links put under /usr.
    const canonical = (path: string) => path.replace(/^\/(bin|sbin|lib|lib64)\//, '/usr/$1/');
    const owned = new Map<string, string>();
    for (const pkg of listed) {
      for (const path of lines((await execa('dpkg-query', ['-L', pkg])).stdout))
        owned.set(canonical(path), pkg);
    }
    // update-alternatives' links: /etc/alternatives/NAME, and the links to it (/usr/sbin/iptables).
    const isAlternativeLink = (f: string) =>
      f.startsWith('/etc/alternatives/') ||
      (lstatSync(`${dest}${f}`).isSymbolicLink() &&
        readlinkSync(`${dest}${f}`).startsWith('/etc/alternatives/'));
    const unowned = files.filter((f) => !owned.has(f) && !EXTRAS.includes(f) && !isAlternativeLink(f));
    expect(unowned).toEqual([]);
    const holders = new Set(files.map((f) => owned.get(f)));
    expect(listed.filter((pkg) => !holders.has(pkg))).toEqual([]);
  });

  it('lists every Pre-Depends and Depends of what it lists, but what only maintainer scripts need', async () => {
    const names = new Set(listed.map((p) => p.replace(/:.*/, '')));
    const records = lines(
      (await query(['-W', `-f=${FIELD('Package')}\\t${FIELD('Pre-Depends')}, ${FIELD('Depends')}\\n`]))
        .stdout,
    );
    const unmet = records.flatMap((record) => {
      const [pkg = '', deps = ''] = record.split('\t');
      return deps
        .split(',')
        .map((dep) => dep.replace(/\([^)]*\)/g, '').trim())
        .filter((dep) => dep !== '')
        .filter((dep) => !dep.split('|').some((choice) => names.has(choice.trim().replace(/:.*/, ''))))
        .filter((dep) => !MAINTAINER_ONLY.includes(dep))
        .map((dep) => `${pkg} -> ${dep}`);
    });
    expect(unmet).toEqual([]);
    expect(names).toEqual(new Set([...PACKAGES, ...names]));
  });

  it.each([
    { name: 'iptables', link: '/usr/sbin/iptables' },
    { name: 'ip6tables', link: '/usr/sbin/ip6tables' },
  ])("keeps update-alternatives' $name link to a backend it holds", async ({ name, link }) => {
    const { stdout: target } = await execa('readlink', [`${dest}/etc/alternatives/${name}`]);
    expect(target).toMatch(new RegExp(`^/usr/sbin/${name}-(nft|legacy)$`));
    expect(files).toContain(target);
    expect((await execa('readlink', [`${dest}${link}`])).stdout).toBe(`/etc/alternatives/${name}`);
  });

  it("has root and the companion's user, a world-writable sticky /tmp and glibc's shared-library cache", () => {
    expect(readFileSync(`${dest}/etc/passwd`, 'utf8')).toMatch(/^root:x:0:0:/m);
    expect(readFileSync(`${dest}/etc/passwd`, 'utf8')).toMatch(
      new RegExp(`^nonroot:x:${COMPANION_UID}:${COMPANION_UID}:`, 'm'),
    );
    expect(readFileSync(`${dest}/etc/group`, 'utf8')).toMatch(
      new RegExp(`^nonroot:x:${COMPANION_UID}:`, 'm'),
    );
    expect(statSync(`${dest}/tmp`).mode & 0o7777).toBe(0o1777);
    expect(files).toEqual(expect.arrayContaining(['/etc/ld.so.cache', '/etc/os-release', '/etc/protocols']));
  });
});
