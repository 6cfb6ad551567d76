// A real kube-apiserver on Debian's etcd for the webhook benchmark (bench/webhook-cluster.mjs), started as the test
// helper test/helpers/envtest.ts starts it: free loopback ports, data under os.tmpdir(), a serving certificate made
// with openssl, one system:masters token. `request` keeps its connections open: filling thousands of objects.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './procs.mjs';

/** The binary, as the envtest suites find it. */
export const APISERVER_ENV = 'OSM_HC_KUBE_APISERVER';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The kube-apiserver binary `env` names, checked before anything starts. */
export function apiserverBinary(env) {
  const path = env[APISERVER_ENV];
  try {
    accessSync(path ?? '', constants.X_OK);
    return path;
  } catch {
    throw new Error(
      `${APISERVER_ENV} must name an executable kube-apiserver (v1.36.3), got ${JSON.stringify(path ?? '')}`,
    );
  }
}

const SHARED = new URL('../../shared/envtest/', import.meta.url);

/**
 * The kube-apiserver `env` names, else v1.36.3 from ../shared/envtest beside the checkout (its README), unpacked
 * once into bench/.tmp and checked against the SHA256SUMS there before it is used.
 */
export function apiserverOrShared(env) {
  if (env[APISERVER_ENV] !== undefined) return apiserverBinary(env);
  const target = new URL('.tmp/kube-apiserver-v1.36.3', import.meta.url).pathname;
  if (existsSync(target)) return target;
  const gz = new URL('kube-apiserver-v1.36.3-linux-amd64.gz', SHARED).pathname;
  if (!existsSync(gz))
    throw new Error(`no kube-apiserver: set ${APISERVER_ENV}, or keep ${gz} (../shared/envtest/README.md)`);
  const bytes = spawnSync('gunzip', ['-c', gz], { maxBuffer: 1 << 30 }).stdout;
  const sum = createHash('sha256').update(bytes).digest('hex');
  const wanted = readFileSync(new URL('SHA256SUMS', SHARED), 'utf8').split(/\s+/)[0];
  if (sum !== wanted) throw new Error(`${gz}: unpacked sha256 ${sum}, SHA256SUMS says ${wanted}`);
  mkdirSync(new URL('.tmp/', import.meta.url), { recursive: true });
  writeFileSync(`${target}.part`, bytes, { mode: 0o755 });
  renameSync(`${target}.part`, target);
  return target;
}

/** A key and a self-signed certificate for 127.0.0.1, which is also its own CA. */
function makeCert(dir) {
  const [certFile, keyFile] = [join(dir, 'serving.crt'), join(dir, 'serving.key')];
  const made = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]);
  if (made.status !== 0) throw new Error(`openssl req: ${made.stderr}`);
  return { certFile, keyFile };
}

async function until(what, check, child, limitMs = 60_000) {
  const deadline = performance.now() + limitMs;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} not ready within ${limitMs} ms`);
}

function ended(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** etcd and `binary` (a kube-apiserver) on free loopback ports, ready; stop() ends both and removes their data. */
/**
 * kube-apiserver's flags for a throwaway API server on loopback (../shared/envtest/README.md): RBAC with a token
 * file, no ServiceAccount plugin (no controller-manager makes the namespaces' `default` ServiceAccount, which it
 * requires), and privileged containers allowed, as kubeadm and managed clusters run it (the default, false,
 * refuses every privileged container). The admission tests and the webhook benchmark start it alike.
 */
export function apiServerArgs({ etcdUrl, dir, certFile, keyFile, port }) {
  return [
    `--etcd-servers=${etcdUrl}`,
    `--cert-dir=${join(dir, 'certs')}`,
    `--tls-cert-file=${certFile}`,
    `--tls-private-key-file=${keyFile}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
    '--authorization-mode=RBAC',
    '--allow-privileged=true',
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--disable-admission-plugins=ServiceAccount',
  ];
}

export async function startEnvtest(binary) {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-bench-envtest-'));
  const { certFile, keyFile } = makeCert(dir);
  const token = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16)).join('');
  writeFileSync(join(dir, 'tokens.csv'), `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  const tokenFile = join(dir, 'admin.token');
  writeFileSync(tokenFile, token);
  spawnSync('openssl', ['genrsa', '-out', join(dir, 'sa.key'), '2048']);
  spawnSync('openssl', ['rsa', '-in', join(dir, 'sa.key'), '-pubout', '-out', join(dir, 'sa.pub')]);
  const children = [];
  const stop = async () => {
    for (const child of children.reverse()) await ended(child);
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const ca = spawnSync('cat', [certFile], { encoding: 'utf8' }).stdout;
  let url;
  const request = (method, path, body) =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(
        new URL(path, url),
        {
          method,
          ca,
          agent,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json',
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode, text }));
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  try {
    const [client, peer, secure] = await freePorts(3);
    const etcdUrl = `http://127.0.0.1:${client}`;
    const etcd = spawn(
      'etcd',
      [
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        // The bench fills thousands of objects: no fsync wait per write, and room for them.
        '--unsafe-no-fsync',
        '--quota-backend-bytes=8589934592',
      ],
      { stdio: 'ignore' },
    );
    children.push(etcd);
    await until('etcd', async () => (await fetch(`${etcdUrl}/health`)).ok, etcd);
    url = `https://127.0.0.1:${secure}`;
    const apiserver = spawn(binary, apiServerArgs({ etcdUrl, dir, certFile, keyFile, port: secure }), {
      stdio: 'ignore',
    });
    children.push(apiserver);
    await until('kube-apiserver', async () => (await request('GET', '/readyz')).status === 200, apiserver);
    return { url, caFile: certFile, certFile, keyFile, tokenFile, ca, request, stop, pid: apiserver.pid };
  } catch (err) {
    await stop();
    throw err;
  }
}
