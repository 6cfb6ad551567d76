// analyze's built bundle loads a kubeconfig's proxy agents only when a cluster names a proxy-url
// (scripts/bundle-options.mjs): they must still load and carry the requests, HTTP CONNECT and SOCKS alike.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runCli } from '../helpers/cli.js';
import { kubeconfigFor } from '../helpers/kubeconfig.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'osm-hc-proxy-url-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A kubeconfig whose cluster is reached through `proxy`. */
function kubeconfigThrough(proxy: string): string {
  const config = parse(kubeconfigFor('https://127.0.0.1:6443', 'token'));
  config.clusters[0].cluster['proxy-url'] = proxy;
  const file = join(dir, `kubeconfig-${files++}`);
  writeFileSync(file, stringify(config));
  return file;
}

const listening = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );

describe("analyze's kubeconfig proxy-url, in the built bundle", () => {
  it('an http proxy is asked to CONNECT to the API server', async () => {
    const asked: string[] = [];
    const proxy = createHttpServer();
    proxy.on('connect', (req, socket) => {
      asked.push(String(req.url));
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    const port = await listening(proxy);
    try {
      const exit = await runCli(['analyze', '--kubeconfig', kubeconfigThrough(`http://127.0.0.1:${port}`)]);
      expect(asked).toContain('127.0.0.1:6443');
      expect(exit.code).toBe(3);
      expect(exit.stderr).toContain('cannot reach the API server https://127.0.0.1:6443');
    } finally {
      proxy.close();
    }
  });

  it('a socks5 proxy gets the SOCKS greeting', async () => {
    const greetings: number[] = [];
    const proxy = createServer((socket) => {
      socket.once('data', (bytes) => {
        greetings.push(bytes[0] ?? -1);
        socket.destroy();
      });
    });
    const port = await listening(proxy);
    try {
      const exit = await runCli(['analyze', '--kubeconfig', kubeconfigThrough(`socks5://127.0.0.1:${port}`)]);
      expect(greetings).toContain(5);
      expect(exit.code).toBe(3);
      expect(exit.stderr).toContain('cannot reach the API server https://127.0.0.1:6443');
    } finally {
      proxy.close();
    }
  });
});
