// The osm-healthcheck process: dispatch.ts's exit status for its argv, and a quiet end when its reader goes away.

import { main } from './dispatch.js';

/** The exit status of a process a closed pipe ended: 128 + SIGPIPE (13), as a shell reports `yes | head -1`. */
const BROKEN_PIPE_STATUS = 141;

// A reader that closed its end (`osm-healthcheck inject ... | head -1`) wants nothing more: end at once and
// quietly, as a Unix tool killed by SIGPIPE does (Node ignores the signal, so the write fails with EPIPE instead).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(BROKEN_PIPE_STATUS);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`osm-healthcheck: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
