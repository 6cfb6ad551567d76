// The floor: the least a Node process can do for /osm-healthcheck — raw node:http, one port, the same TCP check
// (connect to 127.0.0.1:<Original-Tcp-Port>, close, 200 or 503). The companion is measured against this.
//   node bench/floor.mjs <port>    (prints `listening` once it does)

import { createServer } from 'node:http';
import { connect } from 'node:net';

const port = Number(process.argv[2]);

createServer((req, res) => {
  const target = Number(req.headers['original-tcp-port']);
  if (!(target > 0 && target < 65536)) return res.writeHead(400).end('healthcheck: no target port given\n');
  const socket = connect({ host: '127.0.0.1', port: target, timeout: 900 });
  const answer = (status, text) => {
    socket.destroy();
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
  };
  socket.on('connect', () => answer(200, `tcp 127.0.0.1:${target} connected`));
  socket.on('timeout', () => answer(503, `tcp 127.0.0.1:${target} failed: timeout`));
  socket.on('error', (err) => answer(503, `tcp 127.0.0.1:${target} failed: ${err.message}`));
}).listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
