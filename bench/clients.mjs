// Kubelet-style probes as a client sees them (a new connection per probe, `Connection: close`, kube-probe
// User-Agent, one deadline), the autocannon load run, and a Prometheus scrape of the companion's heap.
// Each probe resolves to { ok, status, ms }.

import { request } from 'node:http';
import { connect } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import autocannon from 'autocannon';
import { service } from 'grpc-health-check';

const KUBELET_HEADERS = { 'user-agent': 'kube-probe/1.30', accept: '*/*', connection: 'close' };

/** GET http://127.0.0.1:port/path as kubelet's httpGet prober does; ok for 200-399 (kubelet: warning is ok). */
export function httpProbe(port, path, headers = {}, timeoutMs = 1000) {
  const start = performance.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok, status) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ok, status, ms: performance.now() - start });
    };
    const req = request(
      { host: '127.0.0.1', port, path, agent: false, headers: { ...KUBELET_HEADERS, ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => finish(res.statusCode >= 200 && res.statusCode < 400, res.statusCode));
        res.on('error', () => finish(false, 0));
      },
    );
    const timer = setTimeout(() => finish(false, 'timeout'), timeoutMs);
    req.on('error', () => finish(false, 0));
    req.end();
  });
}

/** kubelet's tcpSocket prober: connect, close without a byte. */
export function tcpProbe(port, timeoutMs = 1000) {
  const start = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: timeoutMs });
    const finish = (ok) => {
      socket.destroy();
      resolve({ ok, status: ok ? 200 : 0, ms: performance.now() - start });
    };
    socket.on('connect', () => finish(true));
    socket.on('timeout', () => finish(false));
    socket.on('error', () => finish(false));
  });
}

/** kubelet's grpc prober: a fresh channel per probe, Health/Check with service "", only SERVING is ok. */
export function grpcProbe(port, timeoutMs = 1000) {
  const start = performance.now();
  const check = service.Check;
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': 'kube-probe/1.30',
    'grpc.use_local_subchannel_pool': 1,
    'grpc.enable_retries': 0,
  });
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      check.path,
      check.requestSerialize,
      check.responseDeserialize,
      { service: '' },
      new grpc.Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, response) => {
        client.close();
        const ok = err === null && response?.status === 'SERVING';
        resolve({ ok, status: ok ? 200 : 0, ms: performance.now() - start });
      },
    );
  });
}

/** One autocannon run (keep-alive connections, no pipelining): requests/s, p99 ms, and what came back. */
export async function load({ port, path, headers, connections, seconds }) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    headers,
    connections,
    duration: seconds,
    pipelining: 1,
  });
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    count: result.requests.total,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/**
 * V8's heap in use, in MiB, from one Prometheus exposition text (prom-client's default
 * `nodejs_heap_size_used_bytes`, with or without labels); null when the text has no such sample.
 */
export function heapUsedMiB(exposition) {
  const match = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? ([^\s]+)/m.exec(exposition);
  const bytes = match === null ? Number.NaN : Number(match[1]);
  return Number.isFinite(bytes) ? bytes / 2 ** 20 : null;
}

/**
 * GET /metrics on `port`: `{ status, heapUsed }`, status the HTTP status (or `timeout`, `connection error`),
 * heapUsed in MiB only from a 200 that has it, else null.
 */
export function scrapeHeapUsed(port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, heapUsed: res.statusCode === 200 ? heapUsedMiB(text) : null });
      });
      res.on('error', () => resolve({ status: 'connection error', heapUsed: null }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ status: 'timeout', heapUsed: null });
    }, timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve({ status: 'connection error', heapUsed: null });
    });
    req.end();
  });
}
