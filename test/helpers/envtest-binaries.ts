// The kube-apiserver binaries the envtest suites run, one per Kubernetes version the project is checked on, found
// and checked here rather than by CI: `../shared/envtest` beside the checkout holds each version gzipped with the
// SHA256SUMS of the unpacked file (its README). Each is unpacked once into a cache folder the tests own, under the
// name of its checksum, and checked before it is moved into place, so a file found there was checked. An
// environment variable names a binary of one's own instead; a version not found skips its suites, saying where
// it looked, and under CI=true fails them.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  readFileSync,
} from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { parseKubeVersion } from '../../src/kube-version.js';
import { ROOT } from './cli.js';
import type { Need } from './system-tools.js';

/** One binary for every envtest suite, whatever its version (only that version's suites run then). */
export const APISERVER_ENV = 'OSM_HC_KUBE_APISERVER';
/** The versions the project is checked on, newest first: the first is the one suites with a single server use. */
export const SUPPORTED_VERSIONS = ['v1.36.3', 'v1.32.13', 'v1.26.3'] as const;
export const SHARED_ENVTEST = join(ROOT, '..', 'shared', 'envtest');

export interface ApiServerBinary {
  /** `v1.36.3`, as its `--version` says. */
  version: string;
  /** Major and minor, for what a test expects of that version. */
  minor: number;
  need: Need;
  /** The path of the checked binary, unpacking it the first time. */
  path(): Promise<string>;
}

/** `OSM_HC_KUBE_APISERVER_1_26_3`: one version's binary of one's own. */
export const versionEnv = (version: string) => `${APISERVER_ENV}_${version.slice(1).replaceAll('.', '_')}`;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const minorOf = (version: string) => parseKubeVersion(version)?.minor ?? 0;

/** A binary given by path: used as it is. */
function given(version: string, path: string, variable: string): ApiServerBinary {
  return {
    version,
    minor: minorOf(version),
    need: {
      what: `kube-apiserver ${version}`,
      present: executable(path),
      how: `${variable}=${path} is no executable`,
    },
    path: async () => path,
  };
}

export interface Sources {
  /** ../shared/envtest beside the checkout. */
  shared: string;
  /** Where the variables are read. */
  env: NodeJS.ProcessEnv;
  /** The cache folder; by default the checkout's node_modules/.cache, else one under os.tmpdir(). */
  cache?: string;
}

const DEFAULT_SOURCES: Sources = { shared: SHARED_ENVTEST, env: process.env };

/** Where `version` is looked for: its own folder first, then the top of ../shared/envtest (the newest lives there). */
function candidates(shared: string, version: string): { gz: string; sums: string }[] {
  const name = `kube-apiserver-${version}-linux-amd64.gz`;
  return [join(shared, version), shared].map((dir) => ({
    gz: join(dir, name),
    sums: join(dir, 'SHA256SUMS'),
  }));
}

function fromShared(sources: Sources, version: string): ApiServerBinary {
  const places = candidates(sources.shared, version);
  const found = places.find((p) => existsSync(p.gz) && existsSync(p.sums));
  const how =
    `${places.map((p) => p.gz).join(' or ')} with the SHA256SUMS of the unpacked file beside it ` +
    `(../shared/envtest/README.md), or ${versionEnv(version)}=<an unpacked kube-apiserver ${version}>`;
  let unpacked: Promise<string> | undefined;
  return {
    version,
    minor: minorOf(version),
    need: { what: `kube-apiserver ${version}`, present: found !== undefined, how },
    path: () => {
      if (found === undefined)
        return Promise.reject(new Error(`envtest: no kube-apiserver ${version}: ${how}`));
      unpacked ??= unpack(found.gz, found.sums, sources.cache);
      return unpacked;
    },
  };
}

/** The binaries the suites run against: the one $OSM_HC_KUBE_APISERVER names, else one per supported version. */
export function apiServerBinaries(sources: Sources = DEFAULT_SOURCES): ApiServerBinary[] {
  const one = sources.env[APISERVER_ENV];
  if (one !== undefined && one !== '') return [given(versionOf(one), one, APISERVER_ENV)];
  return SUPPORTED_VERSIONS.map((version) => {
    const own = sources.env[versionEnv(version)];
    return own !== undefined && own !== ''
      ? given(version, own, versionEnv(version))
      : fromShared(sources, version);
  });
}

/** `Kubernetes v1.26.3` from `kube-apiserver --version`; `unknown` where it does not run. */
function versionOf(path: string): string {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    return /v\d+\.\d+\.\d+/.exec(out)?.[0] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The cache folder: node_modules/.cache of the checkout (its owner's), else one of this user's under os.tmpdir(). */
async function cacheRoot(): Promise<string> {
  const inCheckout = join(ROOT, 'node_modules', '.cache', 'osm-healthcheck', 'envtest');
  try {
    await mkdir(inCheckout, { recursive: true });
    accessSync(inCheckout, constants.W_OK);
    return inCheckout;
  } catch {
    const own = join(tmpdir(), `osm-hc-envtest-${userInfo().username}`);
    await mkdir(own, { recursive: true, mode: 0o700 });
    return own;
  }
}

/** `gz` unpacked into <cache>/<sha256>/kube-apiserver once, checked against `sums` before it is moved there. */
async function unpack(gz: string, sums: string, cache?: string): Promise<string> {
  const wanted = /^([0-9a-f]{64})\s+\*?kube-apiserver$/m.exec(readFileSync(sums, 'utf8'))?.[1];
  if (wanted === undefined) throw new Error(`envtest: ${sums} has no line for kube-apiserver`);
  const dir = join(cache ?? (await cacheRoot()), wanted);
  const target = join(dir, 'kube-apiserver');
  if (executable(target)) return target;
  await mkdir(dir, { recursive: true });
  const partial = join(dir, `kube-apiserver.${process.pid}.partial`);
  const hash = createHash('sha256');
  const gunzip = createGunzip();
  gunzip.on('data', (chunk: Buffer) => hash.update(chunk));
  try {
    await pipeline(createReadStream(gz), gunzip, createWriteStream(partial));
    const got = hash.digest('hex');
    if (got !== wanted) throw new Error(`envtest: ${gz} unpacks to sha256 ${got}, ${sums} says ${wanted}`);
    await chmod(partial, 0o755);
    await rename(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
  return target;
}
