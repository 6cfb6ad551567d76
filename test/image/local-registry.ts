// A registry on loopback (Debian's docker-registry, the CNCF distribution server) in a temp dir, and skopeo's push
// of an OCI image layout to it: what `cosign sign REGISTRY/IMAGE@DIGEST` then signs is the digest the registry
// serves, which must be the one the build printed.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { ended, freePort, reachable, retry, started } from '../helpers/loopback-process.js';
import { tool } from '../helpers/system-tools.js';

export const REGISTRY_TOOLS = [tool('docker-registry'), tool('skopeo')];

export interface LocalRegistry {
  host: string;
  stop(): Promise<void>;
}

export async function localRegistry(): Promise<LocalRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-registry-'));
  const registry = await retry('docker-registry', async () => {
    const host = `127.0.0.1:${await freePort()}`;
    writeFileSync(
      join(dir, 'config.yml'),
      `version: 0.1\nlog: {level: warn}\nstorage: {filesystem: {rootdirectory: ${dir}/data}}\nhttp: {addr: ${host}}\n`,
    );
    const child = await started('docker-registry', ['serve', join(dir, 'config.yml')], () =>
      reachable(`http://${host}/v2/`),
    );
    return { host, child };
  });
  return {
    host: registry.host,
    stop: async () => {
      await ended(registry.child.process);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Pushes the layout's image `ref` to `repository` (no TLS: loopback) keeping its digest; the digest served back. */
export async function pushAndRead(layout: string, ref: string, repository: string): Promise<string> {
  // No policy to check on a push from a local layout (the machine's may refuse all by default).
  await execa('skopeo', [
    '--insecure-policy',
    'copy',
    '--preserve-digests',
    '--dest-tls-verify=false',
    `oci:${layout}:${ref}`,
    `docker://${repository}:${ref}`,
  ]);
  const raw = await execa(
    'skopeo',
    ['inspect', '--raw', '--tls-verify=false', `docker://${repository}:${ref}`],
    {
      encoding: 'buffer',
    },
  );
  return `sha256:${createHash('sha256').update(raw.stdout).digest('hex')}`;
}
