// What a copy of dist/ (the npm package, the image) owes the packages bundled into it: each one's license text,
// in dist/THIRD-PARTY-NOTICES, for exactly the packages esbuild's metafile says the bundles hold (build/, written
// by the build the global setup ran), under a license licenses/allowed.json accepts. And the project's own
// LICENSE, and npm's install-script policy (package.json allowScripts), each entry with its reason in
// docs/development.md.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import {
  ALLOWED_FILE,
  bundledInputs,
  isAccepted,
  licenseProblems,
  NOTICES_FILE,
  noticedPackages,
  noticesText,
  packageDirs,
  readPackages,
} from '../../scripts/third-party.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ALLOWED = JSON.parse(readFileSync(ALLOWED_FILE, 'utf8')) as Record<string, string>;
const METAFILE = JSON.parse(readFileSync(`${ROOT}build/metafile.json`, 'utf8'));
const NOTICES = readFileSync(`${ROOT}dist/${NOTICES_FILE}`, 'utf8');
const BUNDLED = readPackages(bundledInputs(METAFILE), ROOT);

type Pkg = ReturnType<typeof readPackages>[number];
const pkg = (over: Partial<Pkg>): Pkg => ({
  name: 'left-pad',
  version: '1.3.0',
  license: 'MIT',
  dir: 'node_modules/left-pad',
  files: [{ name: 'LICENSE', text: 'MIT License\n\nCopyright (c) someone\n' }],
  ...over,
});
/** The `name@version` of each package the notices text does not list. */
const missingFrom = (text: string, packages: readonly Pkg[]): string[] => {
  const listed = new Set(noticedPackages(text).map((p) => `${p.name}@${p.version}`));
  return packages.map((p) => `${p.name}@${p.version}`).filter((id) => !listed.has(id));
};

describe('dist/THIRD-PARTY-NOTICES', () => {
  it('lists every package the bundles hold, by the metafile, and no other', () => {
    // 70 and more: Fastify, pino, execa, yaml, client-node and what they bring.
    expect(BUNDLED.length).toBeGreaterThan(70);
    expect(missingFrom(NOTICES, BUNDLED)).toEqual([]);
    expect(noticedPackages(NOTICES).map((p) => `${p.name}@${p.version}`)).toEqual(
      BUNDLED.map((p) => `${p.name}@${p.version}`),
    );
  });

  it("holds each package's license and the text of each of its license files", () => {
    for (const p of BUNDLED) {
      expect(
        noticedPackages(NOTICES).find((n) => n.name === p.name && n.version === p.version)?.license,
      ).toBe(p.license);
      expect(p.files.length, `${p.name}: no license text`).toBeGreaterThan(0);
      for (const file of p.files) expect(NOTICES, `${p.name}: ${file.name}`).toContain(file.text.trimEnd());
    }
  });

  it('every bundled license is one licenses/allowed.json accepts', () => {
    expect(licenseProblems(BUNDLED, ALLOWED)).toEqual([]);
  });

  it('a package tree-shaken to nothing ships nothing: not listed', () => {
    const metafile = {
      outputs: {
        'dist/a.mjs': {
          inputs: {
            'node_modules/used/index.js': { bytesInOutput: 10 },
            'node_modules/shaken/index.js': { bytesInOutput: 0 },
            'node_modules/used/node_modules/@scope/nested/lib/x.js': { bytesInOutput: 3 },
            'src/cli.ts': { bytesInOutput: 100 },
          },
        },
      },
    };
    expect(packageDirs(bundledInputs(metafile))).toEqual([
      'node_modules/used',
      'node_modules/used/node_modules/@scope/nested',
    ]);
  });

  it('a package left out of the notices is caught', () => {
    const packages = [pkg({}), pkg({ name: 'right-pad', version: '2.0.0' })];
    expect(missingFrom(noticesText(packages), packages)).toEqual([]);
    expect(missingFrom(noticesText(packages.slice(0, 1)), packages)).toEqual(['right-pad@2.0.0']);
  });

  it.each([
    { license: 'MIT', accepted: true },
    { license: 'GPL-3.0-only', accepted: false },
    { license: 'AGPL-3.0-or-later', accepted: false },
    { license: 'SSPL-1.0', accepted: false },
    { license: '(MIT OR GPL-3.0-only)', accepted: true },
    { license: '(MIT AND GPL-3.0-only)', accepted: false },
    { license: '(MIT AND BSD-3-Clause)', accepted: true },
    { license: 'Apache-2.0 WITH LLVM-exception', accepted: false },
    { license: 'UNLICENSED', accepted: false },
  ])('license $license: accepted $accepted', ({ license, accepted }) => {
    expect(isAccepted(license, ALLOWED)).toBe(accepted);
    expect(licenseProblems([pkg({ license })], ALLOWED).length === 0).toBe(accepted);
  });

  it('a package without a license, or without license text, fails', () => {
    expect(licenseProblems([pkg({ license: undefined })], ALLOWED)).toEqual([
      'left-pad@1.3.0 (node_modules/left-pad): its package.json names no license',
    ]);
    expect(licenseProblems([pkg({ files: [] })], ALLOWED)).toEqual([
      'left-pad@1.3.0 (node_modules/left-pad): no LICENSE, COPYING or NOTICE file to ship its text, nor one in licenses/supplied/',
    ]);
  });
});

describe("the project's own license", () => {
  it('LICENSE is the Apache License 2.0 that package.json names', () => {
    const license = readFileSync(`${ROOT}LICENSE`, 'utf8');
    expect(license).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
    expect(JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).license).toBe('Apache-2.0');
  });
});

describe("npm's install-script policy (package.json allowScripts)", () => {
  const policy = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).allowScripts as Record<
    string,
    boolean
  >;
  const development = readFileSync(`${ROOT}docs/development.md`, 'utf8');

  it.each(Object.keys(policy))('%s: its decision and reason are in docs/development.md', (name) => {
    expect(development).toMatch(
      new RegExp(`\\| \`${name}\` \\| [^|]+ \\| ${policy[name] ? 'allowed' : 'denied'}`),
    );
  });

  it('covers every installed package with an install script: npm has none left to review', async () => {
    const npm = await execa('npm', ['install-scripts', 'ls', '--json'], { cwd: ROOT, reject: false });
    // npm before 11.x has no install-scripts command and runs every script; CI's npm has it.
    if (/Unknown command/.test(npm.stderr) && process.env.CI !== 'true') {
      console.warn(`\n!!! SKIPPED the allowScripts coverage: npm ${npm.stderr.split('\n')[0]}\n`);
      return;
    }
    expect(npm.exitCode, npm.stderr).toBe(0);
    expect(JSON.parse(npm.stdout)).toEqual({ allowScripts: [] });
    // npm reads the whole tree: seconds alone, twenty on a busy machine.
  }, 120_000);
});
