// A real kube-apiserver (one of the versions of test/helpers/envtest-binaries.ts) on Debian's etcd, for what the
// API server itself decides: validation, defaulting, LimitRanger, ResourceQuota, PodSecurity,
// ValidatingAdmissionPolicy, mutating webhooks. One per version per test file (2-6 s to /readyz), on free loopback ports, with its data under os.tmpdir() (the checkout
// may be unreadable to others); stop() ends both processes and removes the folder. No controller-manager runs, so
// no pod ever runs and a ResourceQuota's status is the test's to write.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiServerArgs } from '../../bench/envtest.mjs';
import { type ApiServerBinary, apiServerBinaries } from './envtest-binaries.js';
import { KubeClient } from './envtest-client.js';
import { ended, freePort, reachable, retry, started } from './loopback-process.js';
import { type Need, tool } from './system-tools.js';
import { makeTestCert } from './tls.js';

export const ETCD = tool('etcd', 'apt-get install etcd-server');

/** Every API server the suites run against, newest first: suites over the versions run once per entry. */
export const ENVTEST_SERVERS: readonly ApiServerBinary[] = apiServerBinaries();
/** The newest, for suites that need one API server of any version. */
export const NEWEST_SERVER = ENVTEST_SERVERS[0] as ApiServerBinary;
export const KUBE_APISERVER: Need = NEWEST_SERVER.need;

/** What a suite on `server` needs. */
export const envtestNeeds = (server: ApiServerBinary = NEWEST_SERVER): readonly Need[] => [ETCD, server.need];
export const ENVTEST_NEEDS = envtestNeeds();

/** A user of the token file: `system:serviceaccount:NS:NAME` is bound by RBAC subjects of kind ServiceAccount. */
export interface EnvtestUser {
  name: string;
  groups?: readonly string[];
}

export interface Envtest {
  url: string;
  /** etcd's client URL (plain HTTP on loopback): for what only etcd can do, such as compacting its history. */
  etcdUrl: string;
  /** `v1.26.3`: the binary's version. */
  version: string;
  /** A file holding the serving certificate's CA (PEM), for processes that read one (webhook --kube-ca). */
  caFile: string;
  /** As system:masters. */
  admin: KubeClient;
  /** As `user` (one given to startEnvtest). */
  as(user: string): KubeClient;
  /** A file holding `user`'s bearer token, for processes that read one (webhook --kube-token-file). */
  tokenFile(user: string): string;
  stop(): Promise<void>;
}

const ADMIN: EnvtestUser = { name: 'admin', groups: ['system:masters'] };

/**
 * etcd and a kube-apiserver on free loopback ports, with `users` in its token file. `apiServerEnv` goes into the
 * API server's environment only (e.g. HTTPS_PROXY, which Go's HTTP client, and so its webhook calls, honour).
 */
export async function startEnvtest(
  users: readonly EnvtestUser[] = [],
  server: ApiServerBinary = NEWEST_SERVER,
  apiServerEnv: NodeJS.ProcessEnv = {},
): Promise<Envtest> {
  const dir = await mkdtemp(join(tmpdir(), 'osm-hc-envtest-'));
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const apiserver = await server.path();
    const tokens = new Map([
      ...[ADMIN, ...users].map((u) => [u.name, randomBytes(16).toString('hex')] as const),
    ]);
    const csv = [ADMIN, ...users].map(
      (u) => `${tokens.get(u.name)},${u.name},${u.name},"${(u.groups ?? []).join(',')}"`,
    );
    await writeFile(join(dir, 'tokens.csv'), `${csv.join('\n')}\n`, { mode: 0o600 });
    for (const [name, token] of tokens) await writeFile(join(dir, `${tokenName(name)}.token`), token);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writeFile(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }));
    await writeFile(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    const cert = makeTestCert();
    stops.push(async () => cert.cleanup());

    const etcd = await retry('etcd', async (attempt) => {
      const [client, peer] = [await freePort(), await freePort()];
      const url = `http://127.0.0.1:${client}`;
      const child = await started(
        'etcd',
        [
          `--data-dir=${join(dir, `etcd-${attempt}`)}`,
          `--listen-client-urls=${url}`,
          `--advertise-client-urls=${url}`,
          `--listen-peer-urls=http://127.0.0.1:${peer}`,
        ],
        () => reachable(`${url}/health`),
      );
      return { child, url };
    });
    stops.push(() => ended(etcd.child.process));

    const api = await retry('kube-apiserver', async () => {
      const port = await freePort();
      const url = `https://127.0.0.1:${port}`;
      const admin = new KubeClient(url, cert.cert, tokens.get(ADMIN.name) ?? '');
      const child = await started(
        apiserver,
        apiServerArgs({ etcdUrl: etcd.url, dir, certFile: cert.certFile, keyFile: cert.keyFile, port }),
        async () => (await admin.request('GET', '/readyz').catch(() => undefined))?.status === 200,
        apiServerEnv,
      );
      return { child, url, admin };
    });
    stops.push(() => ended(api.child.process));

    return {
      url: api.url,
      etcdUrl: etcd.url,
      version: server.version,
      caFile: cert.certFile,
      admin: api.admin,
      as: (user) => new KubeClient(api.url, cert.cert, tokenOf(tokens, user)),
      tokenFile: (user) => {
        tokenOf(tokens, user);
        return join(dir, `${tokenName(user)}.token`);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function tokenOf(tokens: Map<string, string>, user: string): string {
  const token = tokens.get(user);
  if (token === undefined) throw new Error(`envtest: no user "${user}" (give it to startEnvtest)`);
  return token;
}

const tokenName = (user: string) => user.replace(/[^a-z0-9-]/gi, '_');
