// The sealed mode with real packets: a node namespace with a bridge and two pods on it (node-lab.ts), osm-edge's
// interception in one, the node agent (`osm-healthcheck node`) in the node namespace, and `init --seal-via` in the
// pod, all from the built CLI. kubelet's own prober code (test/e2e/node-prober.ts, from the node, as kubelet
// probes) reaches the sealed pod's real companion, IPv4 and IPv6; the other pod's connections to 15901-15904
// land in the mesh's proxy, and without the mesh the companion itself closes them; restarting the agent or
// flushing its rules fails no probe; without the agent, or where its SNAT is bypassed, init keeps the open
// bypass, says why, and the companion answers every caller as before.

import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPANION_UID } from '../../src/scheme.js';
import { SEAL_SOURCES } from '../../src/seal/sources.js';
import { type Bundle, bundle } from '../e2e/bundle.js';
import type { ProbeCall } from '../e2e/kubelet-standin.js';
import { proberCall } from '../e2e/pod.js';
import type { ProbeAction } from '../e2e/pod-spec.js';
import type { Running } from '../e2e/processes.js';
import { stagedCli } from '../helpers/staged-cli.js';
import { backendWorks, LAB_READY, warnUnlessRoot } from './lab.js';
import { APP_PORT, BRIDGE, NodeLab, POD_CIDRS, SEALED_POD } from './node-lab.js';

warnUnlessRoot('test/init/sealed.test.ts (the sealed mode in network namespaces)');

const PORTS = [15901, 15902, 15903, 15904] as const;
const LIVENESS: ProbeAction = {
  type: 'httpGet',
  scheme: 'HTTP',
  port: 15901,
  path: '/osm-liveness-probe/app',
  headers: [],
};
const TABLE = {
  liveness: { app: { httpGet: { path: '/healthz', port: APP_PORT, scheme: 'HTTP' } } },
  readiness: { app: { tcpSocket: { port: APP_PORT } } },
};
const APP = `
require('node:http').createServer((req, res) => res.end('ok')).listen({ port: ${APP_PORT}, host: '::' },
  () => process.stdout.write('ready\\n'));`;

const NFT_WORKS = LAB_READY && (await backendWorks('nft'));

describe.skipIf(!NFT_WORKS)('the sealed mode in network namespaces', () => {
  let lab: NodeLab;
  let dir: string;
  let prober: Bundle;
  const cli = () => stagedCli();
  let kubelet: { v4: ProbeCall; v6: ProbeCall };
  let agent: Running | undefined;
  let companion: Running | undefined;

  const sealFile = () => join(dir, 'seal');
  const startAgent = async (extra: string[] = []) => {
    agent = lab.procs.start('node agent', lab.node, [
      process.execPath,
      cli(),
      'node',
      '--pod-cidr',
      POD_CIDRS,
      '--resync',
      '1',
      ...extra,
    ]);
    await agent.waitFor((line) => line.includes('node agent ready'), 15_000);
  };
  const stopAgent = async () => {
    if (agent === undefined) return;
    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    agent = undefined;
  };
  const init = (extra: string[] = []) =>
    lab.run(lab.pod, [
      process.execPath,
      cli(),
      'init',
      '--seal-via',
      BRIDGE.v4,
      '--seal-file',
      sealFile(),
      '--ipv6',
      'on',
      ...extra,
    ]);
  const startCompanion = async () => {
    if (companion !== undefined) await lab.procs.kill(companion);
    companion = lab.procs.start('companion', lab.pod, [
      'setpriv',
      `--reuid=${COMPANION_UID}`,
      `--regid=${COMPANION_UID}`,
      '--clear-groups',
      'env',
      `POD_IP=${SEALED_POD.v4}`,
      `OSM_HEALTHCHECK_PROBES=${JSON.stringify(TABLE)}`,
      process.execPath,
      cli(),
      'serve',
      '--seal-file',
      sealFile(),
    ]);
    return companion.waitFor((line) => line.includes('"msg":"serving"'), 15_000);
  };
  const probeBoth = async () => ({
    v4: (await kubelet.v4(LIVENESS, 1000)).outcome,
    v6: (await kubelet.v6(LIVENESS, 1000)).outcome,
  });
  const fromOtherPod = () =>
    lab.dial(
      lab.other,
      PORTS.flatMap((port) => [[SEALED_POD.v4, port] as const, [SEALED_POD.v6, port] as const]),
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'osm-hc-sealed-'));
    chmodSync(dir, 0o755);
    lab = await NodeLab.create('seal');
    await lab.installMesh('nft');
    await lab.startMeshListeners();
    const app = lab.procs.start('app', lab.pod, [process.execPath, '-e', APP]);
    await app.waitFor((line) => line === 'ready', 10_000);
    prober = await bundle(new URL('../e2e/node-prober.ts', import.meta.url));
    const proberProcess = lab.procs.start('node prober', lab.node, [process.execPath, prober.path]);
    await proberProcess.waitFor((line) => line === 'ready', 15_000);
    kubelet = { v4: proberCall(proberProcess, SEALED_POD.v4), v6: proberCall(proberProcess, SEALED_POD.v6) };
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
    prober?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('with the node agent', () => {
    it('init proves the seal: the agent connects from the seal source, and init seals both families', async () => {
      // A node and an API server, but no token: the agent seals all the same, and says there are no pod events.
      const token = join(dir, 'no-such-token');
      await startAgent([
        '--node-name',
        'node-lab',
        '--kube-api',
        'https://127.0.0.1:1',
        '--kube-token-file',
        token,
      ]);
      await agent?.waitFor(
        (line) => line.includes(`no pod events (Sealed, NotSealed): no token at ${token}`),
        5_000,
      );
      const result = await init();
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        `IPv4: TCP to 15901-15904 bypasses the mesh only from ${SEAL_SOURCES.v4}, the node agent's source: sealed`,
      );
      expect(result.stdout).toContain(
        `IPv6: TCP to 15901-15904 bypasses the mesh only from ${SEAL_SOURCES.v6}`,
      );
      expect(result.stdout).toContain(`sealed: 15901-15904 bypass the mesh only from ${SEAL_SOURCES.v4}`);
      expect(JSON.parse(readFileSync(sealFile(), 'utf8'))).toEqual({ sealed: true, source: SEAL_SOURCES.v4 });
      // The proof's exemption to the agent is gone again: root's TCP to the node goes where the mesh sends it.
      const rules = await lab.run(lab.pod, ['iptables-nft', '-t', 'nat', '-S', 'OSM_HEALTHCHECK_OUTPUT']);
      expect(rules.stdout).not.toContain('--uid-owner 0');
    });

    it("kubelet's prober reaches the sealed companion from the node, IPv4 and IPv6", async () => {
      await startCompanion();
      expect(companion?.lines.join('\n')).toContain('"sealed":true');
      expect(await probeBoth()).toEqual({ v4: 'success', v6: 'success' });
    });

    it("another pod's connections to 15901-15904 land in the mesh's proxy, never the companion", async () => {
      expect(await fromOtherPod()).toEqual(Array(8).fill('PROXY'));
    });

    it('a pod that takes the seal source as its own address gets no answer: the reply goes to the node', async () => {
      const add = await lab.run(lab.other, ['ip', 'addr', 'add', `${SEAL_SOURCES.v4}/32`, 'dev', 'eth0']);
      expect(add.exitCode, add.stderr).toBe(0);
      try {
        const spoof = await lab.run(lab.other, [
          process.execPath,
          '-e',
          `const s = require('node:net').connect({ host: '${SEALED_POD.v4}', port: 15904, localAddress: '${SEAL_SOURCES.v4}', timeout: 2000 });
           s.on('connect', () => { console.log('connected'); s.destroy(); });
           s.on('timeout', () => { console.log('timeout'); s.destroy(); });
           s.on('error', (e) => console.log('error ' + e.code));`,
        ]);
        expect(spoof.stdout.trim()).toBe('timeout');
      } finally {
        await lab.run(lab.other, ['ip', 'addr', 'del', `${SEAL_SOURCES.v4}/32`, 'dev', 'eth0']);
      }
    });

    it("the companion checks too: without the mesh, it closes the other pod's connections unanswered", async () => {
      await lab.removeMeshInbound('nft');
      try {
        const answers = await fromOtherPod();
        // The listeners accept, then destroy: nothing is ever written back.
        for (const answer of answers) expect(['', 'error ECONNRESET']).toContain(answer);
        expect(await probeBoth()).toEqual({ v4: 'success', v6: 'success' });
      } finally {
        await lab.restoreMeshInbound('nft');
      }
    });

    it('restarting the agent fails no probe: its rules stay while it is down', async () => {
      const outcomes: string[] = [];
      let probing = true;
      const loop = (async () => {
        while (probing) {
          const { v4, v6 } = await probeBoth();
          outcomes.push(v4, v6);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      await stopAgent();
      await new Promise((r) => setTimeout(r, 500));
      await startAgent();
      await new Promise((r) => setTimeout(r, 500));
      probing = false;
      await loop;
      expect(outcomes.length).toBeGreaterThan(4);
      expect(outcomes.filter((o) => o !== 'success')).toEqual([]);
    });

    it('puts back what another process flushed, as kube-proxy does', async () => {
      const flush = await lab.run(lab.node, ['iptables-nft', '-t', 'nat', '-F', 'POSTROUTING']);
      expect(flush.exitCode, flush.stderr).toBe(0);
      // Until the next round (--resync 1), the host's connections leave unSNATed and land in the proxy.
      await agent?.waitFor((line) => line.includes('restored'), 5_000);
      expect(await probeBoth()).toEqual({ v4: 'success', v6: 'success' });
    });
  });

  describe("the fallback keeps today's behaviour", () => {
    it('without the agent, init keeps the open bypass and says why', async () => {
      // A new pod: init runs before its companion.
      if (companion !== undefined) await lab.procs.kill(companion);
      await stopAgent();
      const cleanup = await lab.run(lab.node, [process.execPath, cli(), 'node', '--cleanup']);
      expect(cleanup.exitCode, cleanup.stderr).toBe(0);
      const result = await init();
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain('IPv4: TCP to 15901-15904 bypasses the mesh (nat chain');
      expect(result.stdout).toMatch(
        /^open: 15901-15904 bypass the mesh from every source, as without the node agent, because no proof connection from the node agent: no answer from the agent at 10\.253\.0\.1:15910: connect ECONNREFUSED/m,
      );
      expect(JSON.parse(readFileSync(sealFile(), 'utf8')).sealed).toBe(false);
    });

    it("the companion answers kubelet from the node's own address and every other pod, as before", async () => {
      await startCompanion();
      expect(await probeBoth()).toEqual({ v4: 'success', v6: 'success' });
      const answers = await lab.dial(lab.other, [[SEALED_POD.v4, 15904]]);
      // The companion's 404 for a request that is no HTTP at all: it got the connection.
      expect(answers[0]).not.toBe('PROXY');
      expect(answers[0]).not.toBe('');
    });

    it("where the host's connection skips the agent's SNAT (its rules gone), the proof says so and init stays open", async () => {
      // An agent whose rules another process removed and that puts them back only an hour later.
      if (companion !== undefined) await lab.procs.kill(companion);
      await startAgent(['--resync', '3600']);
      const flush = await lab.run(lab.node, [process.execPath, cli(), 'node', '--cleanup']);
      expect(flush.exitCode, flush.stderr).toBe(0);
      const result = await init();
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        `because the node agent's connection arrived from ${BRIDGE.v4}, not from ${SEAL_SOURCES.v4}`,
      );
      await stopAgent();
    });
  });
});
