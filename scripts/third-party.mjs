// The third-party packages the bundles in dist/ really hold, read from esbuild's metafile (not the lockfile: a
// dependency the bundles leave out ships nothing), and the notices file that carries each one's license text with
// every copy of dist/ (the npm package, the image). MIT, ISC, BSD and Apache-2.0 all ask for that. scripts/build.mjs
// writes it and fails on a license licenses/allowed.json does not accept; test/image/licenses.test.ts holds
// the file against the build's metafile; scripts/sbom.mjs lists the same packages in the image's SBOM.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const NOTICES_FILE = 'THIRD-PARTY-NOTICES';
/** The licenses the project accepts, each with what it asks of a copy (licenses/allowed.json). */
export const ALLOWED_FILE = new URL('../licenses/allowed.json', import.meta.url);
/** License texts for packages that ship none, by name@version, each saying where it comes from. */
const SUPPLIED_DIR = new URL('../licenses/supplied/', import.meta.url);

/** The input paths of an esbuild metafile that put bytes into an output: an input tree-shaken away ships nothing. */
export function bundledInputs(metafile) {
  const inputs = Object.values(metafile.outputs).flatMap((output) =>
    Object.entries(output.inputs)
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([input]) => input),
  );
  return [...new Set(inputs)].sort();
}

/** The package directories (…/node_modules/[@scope/]name) that metafile input paths are in, sorted. */
export function packageDirs(inputs) {
  const dirs = new Set();
  for (const input of inputs) {
    const path = input.replaceAll('\\', '/');
    // The last node_modules: a package nested in another's node_modules is a package of its own.
    const at = path.lastIndexOf('node_modules/');
    if (at === -1) continue;
    const [first = '', second = ''] = path.slice(at + 'node_modules/'.length).split('/');
    dirs.add(`${path.slice(0, at)}node_modules/${first.startsWith('@') ? `${first}/${second}` : first}`);
  }
  return [...dirs].sort();
}

/** A package.json's license as one SPDX expression: `license`, or the old `licenses` array (either one). */
export function licenseOf(manifest) {
  const { license, licenses } = manifest;
  if (typeof license === 'string') return license;
  if (license && typeof license.type === 'string') return license.type;
  if (Array.isArray(licenses) && licenses.length > 0) {
    const types = licenses.map((l) => (typeof l === 'string' ? l : l?.type)).filter(Boolean);
    return types.length === 1 ? types[0] : `(${types.join(' OR ')})`;
  }
  return undefined;
}

/**
 * Whether an SPDX expression is one the project accepts: a choice (OR) when one of its licenses is allowed, else
 * (AND, WITH, one license) when every license in it is.
 */
export function isAccepted(expression, allowed) {
  const ids = expression
    .replace(/[()]/g, ' ')
    .split(/\s+/)
    .filter((t) => t !== '' && !/^(AND|OR)$/.test(t));
  if (/\bAND\b|\bWITH\b/.test(expression) || !/\bOR\b/.test(expression))
    return ids.every((id) => id in allowed);
  return ids.some((id) => id in allowed);
}

const LICENSE_FILE = /^(licen[cs]e|copying|notice)([-._].*)?$/i;

/** Each bundled package, once per name and version: its license and the text of its license files. */
export function readPackages(inputs, cwd = process.cwd()) {
  const byId = new Map();
  for (const dir of packageDirs(inputs)) {
    const manifest = JSON.parse(readFileSync(join(cwd, dir, 'package.json'), 'utf8'));
    const id = `${manifest.name}@${manifest.version}`;
    if (byId.has(id)) continue;
    const files = readdirSync(join(cwd, dir))
      .filter((name) => LICENSE_FILE.test(name))
      .sort()
      .map((name) => ({ name, text: readFileSync(join(cwd, dir, name), 'utf8') }));
    if (files.length === 0 && existsSync(new URL(id, SUPPLIED_DIR)))
      files.push({ name: `licenses/supplied/${id}`, text: readFileSync(new URL(id, SUPPLIED_DIR), 'utf8') });
    byId.set(id, {
      name: manifest.name,
      version: manifest.version,
      license: licenseOf(manifest),
      dir,
      files,
    });
  }
  return [...byId.values()].sort(
    (a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version),
  );
}

/** What keeps the packages from shipping: no license, one not accepted, no license text to go with them. */
export function licenseProblems(packages, allowed) {
  const problems = [];
  for (const p of packages) {
    const id = `${p.name}@${p.version} (${p.dir})`;
    if (p.license === undefined) problems.push(`${id}: its package.json names no license`);
    else if (!isAccepted(p.license, allowed))
      problems.push(`${id}: license '${p.license}' is not accepted (licenses/allowed.json)`);
    if (p.files.length === 0)
      problems.push(
        `${id}: no LICENSE, COPYING or NOTICE file to ship its text, nor one in licenses/supplied/`,
      );
  }
  return problems;
}

const RULE = '='.repeat(80);

/** The notices file: a header, then per package its name, version and license, and its license files' text. */
export function noticesText(packages) {
  const header = [
    'osm-healthcheck bundles the third-party packages below into dist/ (esbuild; no node_modules ships).',
    'Each one is listed with its version and license, followed by the text of its license files.',
    `Packages: ${packages.length}.`,
  ];
  const sections = packages.map((p) =>
    [
      RULE,
      `${p.name} ${p.version}`,
      `License: ${p.license}`,
      ...p.files.flatMap((f) => ['', `--- ${f.name}`, '', f.text.trimEnd()]),
    ].join('\n'),
  );
  return `${[header.join('\n'), ...sections].join('\n\n')}\n`;
}

/** The packages a notices file lists, as `name version` lines under each rule. */
export function noticedPackages(text) {
  return [...text.matchAll(new RegExp(`^${RULE}\\n(\\S+) (\\S+)\\nLicense: (.*)$`, 'gm'))].map(
    ([, name, version, license]) => ({ name, version, license }),
  );
}
