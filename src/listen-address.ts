// Where the companion's, the webhook's and its metrics' servers listen by default: `::` (dual stack), falling
// back to 0.0.0.0 where the kernel has IPv6 off. One rule, whatever does the listening.

import type { Server } from 'node:net';

/** `attempt(host)` on `host`, or on `::` then 0.0.0.0 when none is given; what it resolves to (the port bound). */
export async function onListenAddress<T>(
  host: string | undefined,
  attempt: (host: string) => Promise<T>,
): Promise<T> {
  if (host !== undefined) return attempt(host);
  try {
    return await attempt('::');
  } catch (err) {
    const { code } = err as NodeJS.ErrnoException;
    if (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL') throw err;
    return attempt('0.0.0.0');
  }
}

/** The port `server` listens on once listening, else `port` as asked. */
export function boundPort(server: Server, port: number): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : port;
}

/**
 * `server` listening on `port` at `host` (or the default, as onListenAddress), with the port it bound. `backlog`:
 * connections the kernel holds before they are accepted (capped by net.core.somaxconn); node's default is 511.
 */
export function listenOn(
  server: Server,
  port: number,
  host: string | undefined,
  backlog?: number,
): Promise<number> {
  return onListenAddress(
    host,
    (h) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(
          { port, host: h, ipv6Only: false, ...(backlog === undefined ? {} : { backlog }) },
          () => {
            server.off('error', reject);
            resolve(boundPort(server, port));
          },
        );
      }),
  );
}
