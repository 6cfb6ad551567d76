// A real kube-apiserver (v1.36.3, ../shared/envtest) on Debian's etcd, for what the API server itself decides:
// validation, defaulting, LimitRanger, ResourceQuota, PodSecurity, ValidatingAdmissionPolicy, mutating webhooks.
// One per test file (about 2 s to /readyz), on free loopback ports, with its data under os.tmpdir() (the checkout
// may be unreadable to others); stop() ends both processes and removes the folder. No controller-manager runs, so
// no pod ever runs and a ResourceQuota's status is the test's to write.

import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  readFileSync,
} from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { ROOT } from './cli.js';
import { KubeClient } from './envtest-client.js';
import { ended, freePort, reachable, retry, started } from './loopback-process.js';
import { type Need, tool } from './system-tools.js';
import { makeTestCert } from './tls.js';

/** Set by .ci/run: the unpacked, checked binary. Else the gz beside the checkout is unpacked per suite. */
export const APISERVER_ENV = 'OSM_HC_KUBE_APISERVER';
const SHARED = join(ROOT, '..', 'shared', 'envtest');
const GZ = join(SHARED, 'kube-apiserver-v1.36.3-linux-amd64.gz');

export const ETCD = tool('etcd', 'apt-get install etcd-server');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The kube-apiserver binary: $OSM_HC_KUBE_APISERVER, or ../shared/envtest's gz to unpack. */
export const KUBE_APISERVER: Need = {
  what: 'kube-apiserver v1.36.3',
  present: executable(process.env[APISERVER_ENV] ?? '') || existsSync(GZ),
  how: `${APISERVER_ENV}=<unpacked binary>, or ${GZ} beside the checkout (.ci/run unpacks it)`,
};

export const ENVTEST_NEEDS = [ETCD, KUBE_APISERVER] as const;

/** A user of the token file: `system:serviceaccount:NS:NAME` is bound by RBAC subjects of kind ServiceAccount. */
export interface EnvtestUser {
  name: string;
  groups?: readonly string[];
}

export interface Envtest {
  url: string;
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

export async function startEnvtest(users: readonly EnvtestUser[] = []): Promise<Envtest> {
  const dir = await mkdtemp(join(tmpdir(), 'osm-hc-envtest-'));
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const apiserver = await apiserverBinary(dir);
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
        [
          `--etcd-servers=${etcd.url}`,
          `--cert-dir=${join(dir, 'certs')}`,
          `--tls-cert-file=${cert.certFile}`,
          `--tls-private-key-file=${cert.keyFile}`,
          `--secure-port=${port}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          '--service-cluster-ip-range=10.0.0.0/24',
          '--service-account-issuer=https://kubernetes.default.svc',
          `--service-account-key-file=${join(dir, 'sa.pub')}`,
          `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
          '--authorization-mode=RBAC',
          // As kubeadm and managed clusters run it: the default (false) refuses every privileged container.
          '--allow-privileged=true',
          `--token-auth-file=${join(dir, 'tokens.csv')}`,
          // No controller-manager makes the namespaces' `default` ServiceAccount, which this plugin requires.
          '--disable-admission-plugins=ServiceAccount',
        ],
        async () => (await admin.request('GET', '/readyz').catch(() => undefined))?.status === 200,
      );
      return { child, url, admin };
    });
    stops.push(() => ended(api.child.process));

    return {
      url: api.url,
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

/** $OSM_HC_KUBE_APISERVER as .ci/run checked it, else the gz unpacked into `dir` and checked here. */
async function apiserverBinary(dir: string): Promise<string> {
  const given = process.env[APISERVER_ENV];
  if (given !== undefined && executable(given)) return given;
  const target = join(dir, 'kube-apiserver');
  const hash = createHash('sha256');
  const gunzip = createGunzip();
  gunzip.on('data', (chunk: Buffer) => hash.update(chunk));
  await pipeline(createReadStream(GZ), gunzip, createWriteStream(target));
  const sums = readFileSync(join(SHARED, 'SHA256SUMS'), 'utf8');
  const wanted = /^([0-9a-f]{64})\s+\*?kube-apiserver$/m.exec(sums)?.[1];
  const got = hash.digest('hex');
  if (wanted !== got) throw new Error(`envtest: ${GZ} unpacks to sha256 ${got}, SHA256SUMS says ${wanted}`);
  await chmod(target, 0o755);
  return target;
}
