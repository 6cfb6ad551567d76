// Packs an image's root filesystem (scripts/image-build.sh's) into an OCI image layout, one layer, so that the same
// files give the same digest: the layer is a tar in name order, every entry owned by 0:0 and dated
// SOURCE_DATE_EPOCH (the commit's time), with no atime, ctime or process id in its PAX headers (GNU tar, as
// reproducible-builds.org gives it), gzipped without a name or time (gzip -n); the image config is the
// Dockerfile's final stage (ENV, ENTRYPOINT, CMD, USER, WORKDIR, EXPOSE), created at SOURCE_DATE_EPOCH.
// Prints the manifest's digest, the image's digest.
// Usage: SOURCE_DATE_EPOCH=N node scripts/image-pack.mjs ROOTFS OUTDIR ARCH REVISION
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [rootfs, out, arch, revision] = process.argv.slice(2);
const epoch = process.env.SOURCE_DATE_EPOCH;
if (!rootfs || !out || !['amd64', 'arm64'].includes(arch ?? '') || !revision || !/^\d+$/.test(epoch ?? '')) {
  console.error('usage: SOURCE_DATE_EPOCH=N node scripts/image-pack.mjs ROOTFS OUTDIR amd64|arm64 REVISION');
  process.exit(2);
}
const created = new Date(Number(epoch) * 1000).toISOString().replace('.000Z', 'Z');
const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8').replace(/\\\n/g, ' ');
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
/** The arguments of the final stage's instructions of `keyword`. */
const instructions = (keyword) =>
  [...finalStage.matchAll(new RegExp(`^${keyword} (.*)$`, 'gm'))].map(([, args]) => args.trim());
const only = (keyword) => {
  const [args, ...more] = instructions(keyword);
  if (args === undefined || more.length > 0)
    throw new Error(`image-pack: the Dockerfile's final stage needs one ${keyword}`);
  return args;
};

const blobs = join(out, 'blobs', 'sha256');
mkdirSync(blobs, { recursive: true });
const digestOf = (data) => `sha256:${createHash('sha256').update(data).digest('hex')}`;
/** Writes `data` as a blob; its descriptor. */
function blob(mediaType, data) {
  const digest = digestOf(data);
  writeFileSync(join(blobs, digest.slice('sha256:'.length)), data);
  return { mediaType, digest, size: data.length };
}

const tar = execFileSync(
  'tar',
  [
    '--sort=name',
    '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    `--mtime=@${epoch}`,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-C',
    rootfs,
    '-cf',
    '-',
    '.',
  ],
  { maxBuffer: 2 ** 31 - 1 },
);
const gzip = execFileSync('gzip', ['-n', '-6'], { input: tar, maxBuffer: 2 ** 31 - 1 });
const layer = blob('application/vnd.oci.image.layer.v1.tar+gzip', gzip);

const env = only('ENV')
  .split(/\s+/)
  .filter((pair) => pair.includes('='));
const config = {
  created,
  architecture: arch,
  ...(arch === 'arm64' ? { variant: 'v8' } : {}),
  os: 'linux',
  config: {
    User: only('USER'),
    ExposedPorts: Object.fromEntries(
      only('EXPOSE')
        .split(/\s+/)
        .map((port) => [`${port}/tcp`, {}]),
    ),
    Env: env,
    Entrypoint: JSON.parse(only('ENTRYPOINT')),
    Cmd: JSON.parse(only('CMD')),
    WorkingDir: only('WORKDIR'),
  },
  rootfs: { type: 'layers', diff_ids: [digestOf(tar)] },
  history: [{ created, created_by: 'scripts/image-build.sh (the Dockerfile, without a Docker engine)' }],
};
const manifest = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  config: blob('application/vnd.oci.image.config.v1+json', Buffer.from(JSON.stringify(config))),
  layers: [layer],
  annotations: { 'org.opencontainers.image.created': created, 'org.opencontainers.image.revision': revision },
};
const manifestBlob = blob(manifest.mediaType, Buffer.from(JSON.stringify(manifest)));
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const index = {
  schemaVersion: 2,
  manifests: [
    {
      ...manifestBlob,
      platform: { architecture: arch, os: 'linux', ...(arch === 'arm64' ? { variant: 'v8' } : {}) },
      annotations: { 'org.opencontainers.image.ref.name': version },
    },
  ],
};
writeFileSync(join(out, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
writeFileSync(join(out, 'index.json.new'), JSON.stringify(index));
renameSync(join(out, 'index.json.new'), join(out, 'index.json'));
console.log(manifestBlob.digest);
