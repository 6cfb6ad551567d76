// What scripts/image-build.sh --out DIR leaves (an OCI image layout, the SBOM beside it, the digest), unpacked and
// held against itself: the SBOM validated against CycloneDX 1.6's published JSON schema by CycloneDX's own library,
// and listing exactly what the image's layer holds (its npm packages, Node, its Debian packages, dist/'s files);
// the licenses a copy owes in the image; the layer's entries owned by root and dated SOURCE_DATE_EPOCH.

import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { execa } from 'execa';
import { PackageURL } from 'packageurl-js';
import { expect } from 'vitest';
import { NOTICES_FILE, noticedPackages } from '../../scripts/third-party.mjs';

export interface BuiltImage {
  digest: string;
  /** The OCI layout's manifest, config and the layer unpacked in `root`. */
  manifest: { layers: { digest: string }[]; config: { digest: string } };
  config: { architecture: string; created: string; config: Record<string, unknown> };
  root: string;
  sbom: Sbom;
  remove(): void;
}

interface Component {
  type: string;
  name: string;
  version?: string;
  purl?: string;
  hashes?: { alg: string; content: string }[];
  components?: Component[];
}
interface Sbom {
  specVersion: string;
  components: Component[];
}

const blobPath = (out: string, digest: string) =>
  join(out, 'oci/blobs/sha256', digest.replace('sha256:', ''));
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The layout `out` holds: its digest checked against the manifest's bytes, its one layer unpacked (root only). */
export async function unpackBuilt(out: string): Promise<BuiltImage> {
  const digest = readFileSync(join(out, 'digest'), 'utf8').trim();
  const index = JSON.parse(readFileSync(join(out, 'oci/index.json'), 'utf8'));
  expect(index.manifests.map((m: { digest: string }) => m.digest)).toEqual([digest]);
  const manifestBytes = readFileSync(blobPath(out, digest));
  expect(`sha256:${sha256(manifestBytes)}`).toBe(digest);
  const manifest = JSON.parse(manifestBytes.toString('utf8'));
  const config = JSON.parse(readFileSync(blobPath(out, manifest.config.digest), 'utf8'));
  expect(manifest.layers).toHaveLength(1);
  const root = mkdtempSync(join(tmpdir(), 'osm-hc-built-'));
  await execa('tar', ['-xzpf', blobPath(out, manifest.layers[0].digest), '-C', root]);
  const sbom = JSON.parse(readFileSync(join(out, 'sbom.cdx.json'), 'utf8')) as Sbom;
  return {
    digest,
    manifest,
    config,
    root,
    sbom,
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Each record's fields of a Debian control file. */
function controlRecords(text: string): Record<string, string>[] {
  return text
    .split(/\n\n+/)
    .filter((p) => p.trim() !== '')
    .map((p) => Object.fromEntries([...p.matchAll(/^([A-Za-z0-9-]+): ?(.*)$/gm)].map(([, k, v]) => [k, v])));
}

function filesUnder(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => `/${relative(root, join(e.parentPath, e.name))}`)
    .sort();
}

/** The packages esbuild's module markers (`// node_modules/x/...`) name in dist/'s unminified bundles, by name. */
function markedPackages(root: string): string[] {
  const dirs = new Set<string>();
  for (const file of filesUnder(root, 'app/dist').filter((f) => /\.(mjs|cjs|js)$/.test(f))) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const [, dir] of text.matchAll(/^\s*\/\/ ((?:\S*\/)?node_modules\/(?:@[^/\s]+\/)?[^/\s]+)\//gm))
      dirs.add(dir ?? '');
  }
  return [...dirs].map((dir) => dir.slice(dir.lastIndexOf('node_modules/') + 'node_modules/'.length)).sort();
}

/** The SBOM beside the image and in it: valid CycloneDX 1.6, listing exactly what the image's layer holds. */
export async function expectSbomOfImage(image: BuiltImage, nodeVersion: string): Promise<void> {
  const { root, sbom } = image;
  const text = JSON.stringify(sbom);
  // CycloneDX's own validator, on the schema the library ships: null is valid, anything else the errors.
  const validator = new Validation.JsonStrictValidator(Spec.Version.v1dot6);
  expect(await validator.validate(text)).toBeNull();
  expect(sbom.specVersion).toBe('1.6');
  expect(JSON.parse(readFileSync(join(root, 'app/sbom.cdx.json'), 'utf8'))).toEqual(sbom);

  const byType = (purlType: string) =>
    sbom.components.filter((c) => c.purl !== undefined && PackageURL.fromString(c.purl).type === purlType);

  // npm: what dist/THIRD-PARTY-NOTICES lists in the image, and by name what esbuild's markers show the bundles hold.
  const noticed = noticedPackages(readFileSync(join(root, 'app/dist', NOTICES_FILE), 'utf8'));
  const npm = byType('npm').filter((c) => c.name !== 'osm-healthcheck');
  expect(npm.map((c) => `${c.name}@${c.version}`).sort()).toEqual(
    noticed.map((p) => `${p.name}@${p.version}`).sort(),
  );
  expect(npm.map((c) => c.name).sort()).toEqual(markedPackages(root));

  // Debian: exactly the records of the image's dpkg status, name, version and architecture.
  const status = controlRecords(readFileSync(join(root, 'var/lib/dpkg/status'), 'utf8'));
  expect(
    byType('deb')
      .map((c) => {
        const purl = PackageURL.fromString(c.purl ?? '');
        return `${purl.name} ${purl.version} ${purl.qualifiers?.arch}`;
      })
      .sort(),
  ).toEqual(status.map((r) => `${r.Package} ${r.Version} ${r.Architecture}`).sort());
  expect(status.length).toBeGreaterThan(10);

  // Node: the image's binary, its version and SHA-256.
  const [node, ...otherNodes] = byType('generic').filter((c) => c.name === 'node');
  expect(otherNodes).toEqual([]);
  expect(node?.version).toBe(nodeVersion.replace(/^v/, ''));
  expect(node?.hashes).toEqual([
    { alg: 'SHA-256', content: sha256(readFileSync(join(root, 'usr/local/bin/node'))) },
  ]);

  // The bundle: every file of /app/dist with its SHA-256, and no other.
  const bundle = sbom.components.find((c) => c.name === 'osm-healthcheck');
  expect((bundle?.components ?? []).map((f) => `${f.name} ${f.hashes?.[0]?.content}`)).toEqual(
    filesUnder(root, 'app/dist').map((f) => `${f} ${sha256(readFileSync(join(root, f)))}`),
  );

  // Nothing else: the bundle, Node, the npm and the Debian packages.
  expect(sbom.components.length).toBe(2 + npm.length + status.length);
}

/** What a copy of the image owes: the project's license, Node's, and every bundled package's (dist/'s notices). */
export function expectLicensesInImage(image: BuiltImage, repo: string): void {
  const { root } = image;
  expect(readFileSync(join(root, 'app/LICENSE'), 'utf8')).toBe(readFileSync(join(repo, 'LICENSE'), 'utf8'));
  expect(readFileSync(join(root, 'usr/local/share/doc/node/LICENSE'), 'utf8')).toMatch(
    /^Node\.js is licensed for use as follows:/,
  );
  expect(readFileSync(join(root, 'app/dist', NOTICES_FILE), 'utf8')).toBe(
    readFileSync(join(repo, 'dist', NOTICES_FILE), 'utf8'),
  );
}

/** The layer's entries: owned by 0:0 and dated the image's creation time (SOURCE_DATE_EPOCH), in name order. */
export async function expectFixedLayer(image: BuiltImage, out: string): Promise<void> {
  const listing = await execa(
    'tar',
    ['-tvzf', blobPath(out, image.manifest.layers[0]?.digest ?? ''), '--numeric-owner', '--full-time'],
    { env: { TZ: 'UTC' } },
  );
  const entries = listing.stdout.split('\n').map((line) => line.split(/\s+/));
  const created = image.config.created.replace('T', ' ').replace('Z', '');
  expect(entries.length).toBeGreaterThan(300);
  expect(new Set(entries.map((e) => e[1]))).toEqual(new Set(['0/0']));
  expect(new Set(entries.map((e) => `${e[3]} ${e[4]}`))).toEqual(new Set([created]));
  // GNU tar's --sort=name: each directory's entries by their names' bytes, depth first.
  const names = entries.map((e) => e[5] ?? '');
  expect(names).toEqual([...names].sort(byPathSegments));
}

function byPathSegments(a: string, b: string): number {
  const [as, bs] = [a.split('/').filter(Boolean), b.split('/').filter(Boolean)];
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const order = Buffer.compare(Buffer.from(as[i] ?? ''), Buffer.from(bs[i] ?? ''));
    if (order !== 0) return order;
  }
  return as.length - bs.length;
}
