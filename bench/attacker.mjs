// A caller in another pod loading one companion port, as docs/security.md#under-load lists the shapes. Runs in a
// process of its own (the bench pins it to the other core), for `seconds`, then prints one JSON line of what it did.
//   node bench/attacker.mjs <shape> <port> <seconds> [options as JSON]
// Shapes:
//   held-headers     hold `connections` (default 3000) connections that sent a request line and one header, then a
//                    byte a second, never ending the headers; reopen whatever the companion closes
//   idle-keepalive   hold `connections` connections that each sent one valid request (keep-alive) and then nothing
//   valid-flood      `connections` (default 256) loops of valid requests for `path` with `headers`, each on a new
//                    connection once the companion closed the last (it answers one request per connection)
//   refused-flood    the same with a header probe the table refuses (403): Original-Tcp-Port 1 on /osm-healthcheck
//   malformed-flood  the same with bytes that are not HTTP
// Options: { host, from (a local address to send from), connections, path, headers, distinctPaths (valid-flood:
// each request's Original-Http-Path another path, /flood/<n>: without a table, a distinct check each) }.

import { connect } from 'node:net';

const [shape, portText, secondsText, optionsText = '{}'] = process.argv.slice(2);
const SHAPES = ['held-headers', 'idle-keepalive', 'valid-flood', 'refused-flood', 'malformed-flood'];
if (!SHAPES.includes(shape) || !(Number(portText) > 0) || !(Number(secondsText) > 0)) {
  process.stderr.write(`usage: attacker.mjs <${SHAPES.join('|')}> <port> <seconds> [options JSON]\n`);
  process.exit(2);
}
const port = Number(portText);
const options = JSON.parse(optionsText);
const host = options.host ?? '127.0.0.1';
const held = shape === 'held-headers' || shape === 'idle-keepalive';
const connections = options.connections ?? (held ? 3000 : 256);
const until = performance.now() + Number(secondsText) * 1000;
const stats = { shape, opened: 0, closedByCompanion: 0, answers: 0, refusedAtConnect: 0, peakOpen: 0 };
let open = 0;

const headerLines = (headers) =>
  Object.entries(headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
const valid = (path, headers, connection) =>
  `GET ${path} HTTP/1.1\r\nHost: pod\r\nUser-Agent: kube-probe/1.30\r\n${headerLines(headers)}Connection: ${connection}\r\n\r\n`;

const path = options.path ?? '/osm-liveness-probe/app';
let sent = 0;
const REQUEST = {
  'held-headers': () => `GET ${path} HTTP/1.1\r\nX-Held: `,
  'idle-keepalive': () => valid(path, options.headers, 'keep-alive'),
  'valid-flood': () =>
    valid(
      path,
      options.distinctPaths
        ? { ...options.headers, 'Original-Http-Path': `/flood/${sent++}` }
        : options.headers,
      'close',
    ),
  'refused-flood': () => valid('/osm-healthcheck', { 'Original-Tcp-Port': '1' }, 'close'),
  'malformed-flood': () => '\x16\x03\x01\x00\xff\x01\x00\x00\xfbNOT HTTP AT ALL\r\n\r\n',
}[shape];

/** One connection slot: opens, sends its shape's bytes, and when the companion closes it, opens the next. */
function slot() {
  if (performance.now() >= until) return;
  const socket = connect({
    host,
    port,
    ...(options.from === undefined ? {} : { localAddress: options.from }),
  });
  let connected = false;
  let drip;
  socket.setNoDelay(true);
  socket.on('connect', () => {
    connected = true;
    stats.opened++;
    open++;
    if (open > stats.peakOpen) stats.peakOpen = open;
    socket.write(REQUEST());
    if (shape === 'held-headers') drip = setInterval(() => socket.write('a'), 1000);
  });
  socket.on('data', (chunk) => {
    if (chunk.subarray(0, 9).toString('latin1').startsWith('HTTP/1.1 ')) stats.answers++;
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    clearInterval(drip);
    if (connected) {
      open--;
      stats.closedByCompanion++;
    } else stats.refusedAtConnect++;
    // A held shape reopens at once; a flood's loop sends its next request on a new connection.
    setImmediate(slot);
  });
}

const started = [];
// Held shapes open their connections in batches, as fast as the companion accepts them.
for (let i = 0; i < connections; i++) {
  started.push(slot());
  if (held && i % 200 === 199) await new Promise((resolve) => setImmediate(resolve));
}
await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - performance.now())));
process.stdout.write(`${JSON.stringify(stats)}\n`);
process.exit(0);
