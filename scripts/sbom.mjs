// The image's SBOM, CycloneDX 1.6 JSON, read off the image's own root filesystem, so it lists what is there and
// nothing else: the npm packages bundled into /app/dist (its THIRD-PARTY-NOTICES, which the build writes from
// esbuild's metafile), Node's binary (version, SHA-256), the Debian packages of the runtime root (its dpkg status,
// their licenses from their copyright files), and every file of /app/dist with its SHA-256. The Dockerfile's sbom
// stage and scripts/image-build.sh run it; the image carries its output at /app/sbom.cdx.json
// (docs/image.md). Same root, same bytes: no clock (the timestamp is SOURCE_DATE_EPOCH's) and a serial number
// derived from the content.
// Usage: node scripts/sbom.mjs --rootfs DIR --node-version vX.Y.Z > sbom.cdx.json
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { NOTICES_FILE, noticedPackages } from './third-party.mjs';

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** Records of a Debian control file (dpkg's status): one object per paragraph, continuation lines joined. */
export function controlRecords(text) {
  return text
    .split(/\n\s*\n/)
    .filter((p) => p.trim() !== '')
    .map((paragraph) => {
      const record = {};
      let key;
      for (const line of paragraph.split('\n')) {
        const field = /^([A-Za-z0-9-]+):\s?(.*)$/.exec(line);
        if (field && !line.startsWith(' ')) {
          key = field[1];
          record[key] = field[2];
        } else if (key) record[key] += `\n${line}`;
      }
      return record;
    });
}

/**
 * A Debian package's licenses, from its copyright file: the License fields of a machine-readable one (DEP-5), as
 * Debian names them (GPL-2+, BSD-3-clause: not all SPDX ids), else a pointer to the file.
 */
export function debianLicenses(copyright, pkg) {
  const where = `see /usr/share/doc/${pkg}/copyright`;
  if (copyright === undefined || !/^Format:\s*\S*copyright-format/m.test(copyright)) return [where];
  const names = [...copyright.matchAll(/^License:[ \t]*(\S.*)$/gm)].map(([, name]) => name.trim());
  return names.length > 0 ? [...new Set(names)].sort() : [where];
}

/** The purl of an npm package: a scope's @ is %40. */
export const npmPurl = (name, version) => `pkg:npm/${name.replace(/^@/, '%40')}@${version}`;

const ELF_MACHINES = { '3e00': 'amd64', b700: 'arm64' };

/** Every file under `dir`, relative to `root`, sorted. */
function filesUnder(root, dir) {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

/** The SBOM of the image root `rootfs`, whose Node says `nodeVersion`. */
export function imageSbom({ rootfs, nodeVersion, epoch }) {
  const { name, version, license } = JSON.parse(
    readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
  );
  const node = readFileSync(join(rootfs, 'usr/local/bin/node'));
  const arch = ELF_MACHINES[node.subarray(18, 20).toString('hex')];
  if (arch === undefined)
    throw new Error(`sbom: ${rootfs}/usr/local/bin/node is not an amd64 or arm64 ELF binary`);
  const osRelease = readFileSync(join(rootfs, 'usr/lib/os-release'), 'utf8');
  const distro = `${/^ID=(.*)$/m.exec(osRelease)?.[1]}-${/^VERSION_ID="?([^"\n]*)"?$/m.exec(osRelease)?.[1]}`;

  const npm = noticedPackages(readFileSync(join(rootfs, 'app/dist', NOTICES_FILE), 'utf8')).map((p) => ({
    type: 'library',
    'bom-ref': npmPurl(p.name, p.version),
    name: p.name,
    version: p.version,
    licenses: /\s/.test(p.license) ? [{ expression: p.license }] : [{ license: { id: p.license } }],
    purl: npmPurl(p.name, p.version),
  }));
  const debs = controlRecords(readFileSync(join(rootfs, 'var/lib/dpkg/status'), 'utf8')).map((record) => {
    const pkg = record.Package;
    const copyright = join(rootfs, 'usr/share/doc', pkg, 'copyright');
    const purl = `pkg:deb/debian/${pkg}@${encodeURIComponent(record.Version)}?arch=${record.Architecture}&distro=${distro}`;
    return {
      type: 'library',
      'bom-ref': purl,
      name: pkg,
      version: record.Version,
      licenses: debianLicenses(existsSync(copyright) ? readFileSync(copyright, 'utf8') : undefined, pkg).map(
        (l) => ({ license: { name: l } }),
      ),
      purl,
    };
  });
  const nodePurl = `pkg:generic/node@${nodeVersion.replace(/^v/, '')}`;
  const nodeComponent = {
    type: 'application',
    'bom-ref': nodePurl,
    name: 'node',
    version: nodeVersion.replace(/^v/, ''),
    description: 'Node.js, /usr/local/bin/node (stripped of its symbols)',
    hashes: [{ alg: 'SHA-256', content: sha256(node) }],
    licenses: [{ license: { id: 'MIT' } }],
    purl: nodePurl,
  };
  const bundle = {
    type: 'application',
    'bom-ref': `pkg:npm/${name}@${version}`,
    name,
    version,
    description: "osm-healthcheck's bundled CLI, /app/dist",
    licenses: [{ license: { id: license } }],
    purl: `pkg:npm/${name}@${version}`,
    components: filesUnder(rootfs, 'app/dist').map((file) => ({
      type: 'file',
      'bom-ref': `file:/${file}`,
      name: `/${file}`,
      hashes: [{ alg: 'SHA-256', content: sha256(readFileSync(join(rootfs, file))) }],
    })),
  };
  const body = {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    version: 1,
    metadata: {
      ...(epoch === undefined ? {} : { timestamp: new Date(Number(epoch) * 1000).toISOString() }),
      tools: { components: [{ type: 'application', name: 'osm-healthcheck scripts/sbom.mjs', version }] },
      component: {
        type: 'container',
        'bom-ref': `${name}-image@${version}`,
        name,
        version,
        properties: [{ name: 'oci:architecture', value: arch }],
      },
    },
    components: [bundle, nodeComponent, ...npm, ...debs],
  };
  // A serial number of the content (RFC 4122's layout, version 5's nibble): the same root gives the same bytes.
  const hex = sha256(JSON.stringify(body));
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((Number.parseInt(hex[16], 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  return {
    bomFormat: body.bomFormat,
    specVersion: body.specVersion,
    serialNumber: `urn:uuid:${uuid}`,
    ...body,
  };
}

// Run as a script (not imported): through whatever symlinks its path was given by.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { rootfs: { type: 'string' }, 'node-version': { type: 'string' } },
  });
  if (!values.rootfs || !/^v\d+\.\d+\.\d+$/.test(values['node-version'] ?? '')) {
    console.error('usage: node scripts/sbom.mjs --rootfs DIR --node-version vX.Y.Z');
    process.exit(2);
  }
  const sbom = imageSbom({
    rootfs: values.rootfs,
    nodeVersion: values['node-version'],
    epoch: process.env.SOURCE_DATE_EPOCH,
  });
  process.stdout.write(`${JSON.stringify(sbom, null, 2)}\n`);
}
