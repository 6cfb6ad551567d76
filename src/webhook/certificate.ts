// The webhook's serving certificate: read and checked at start-up, then watched so that cert-manager's rotation
// takes effect without a restart. A new pair that does not load is reported and the old one stays in use.

import { X509Certificate } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { HealthcheckError } from '../errors.js';

export interface KeyPair {
  /** PEM: the certificate (chain) and its private key. */
  cert: string;
  key: string;
  /** SHA-256 fingerprint of the leaf certificate, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint: string;
  notAfter: string;
}

export interface WatchOptions {
  certFile: string;
  keyFile: string;
  /** The pair in use now; a change to the same content again is no reload. */
  current: KeyPair;
  onReload(pair: KeyPair): void;
  onError(err: HealthcheckError): void;
  /** Quiet time after the last change before reading: the two files are written one after the other. */
  debounceMs: number;
  /** Also compare the files' stat this often: fs.watch misses changes on some filesystems (NFS, overlays). */
  pollMs: number;
}

function tlsError(message: string, cause: unknown): HealthcheckError {
  return new HealthcheckError('OSM_HC_TLS', `${message}: ${(cause as Error).message}`, { cause });
}

/** Reads both files and proves they make a usable pair; throws HealthcheckError (OSM_HC_TLS) naming the file. */
export async function loadKeyPair(certFile: string, keyFile: string): Promise<KeyPair> {
  const read = async (file: string, what: string) => {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw tlsError(`cannot read the TLS ${what} ${file}`, err);
    }
  };
  const cert = await read(certFile, 'certificate');
  const key = await read(keyFile, 'key');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw tlsError(`${certFile} holds no PEM certificate`, err);
  }
  try {
    // Fails on an unreadable key and on a key that is not the certificate's ("key values mismatch").
    createSecureContext({ cert, key });
  } catch (err) {
    throw tlsError(`the key ${keyFile} cannot be used with the certificate ${certFile}`, err);
  }
  return { cert, key, fingerprint: leaf.fingerprint256, notAfter: leaf.validTo };
}

/** Inode, size and mtime of both files (through symlinks, as Kubernetes secret volumes swap them). */
async function signature(files: readonly string[]): Promise<string> {
  const parts = await Promise.all(
    files.map((file) =>
      stat(file).then(
        (s) => `${s.ino}:${s.size}:${s.mtimeMs}`,
        (err: NodeJS.ErrnoException) => err.code ?? 'error',
      ),
    ),
  );
  return parts.join('|');
}

/**
 * Watches the files' directories (a Kubernetes secret volume replaces a `..data` symlink, so watching the
 * files themselves would miss every rotation after the first) and polls their stat as a fallback.
 */
export async function watchKeyPair(options: WatchOptions): Promise<{ close(): void }> {
  const files = [options.certFile, options.keyFile];
  let current = options.current;
  let seen = await signature(files);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const reload = async (): Promise<void> => {
    seen = await signature(files);
    try {
      const next = await loadKeyPair(options.certFile, options.keyFile);
      if (closed || (next.cert === current.cert && next.key === current.key)) return;
      current = next;
      options.onReload(next);
    } catch (err) {
      // Reported once per change: `seen` already holds this state, so the poll does not try it again.
      if (!closed) options.onError(err as HealthcheckError);
    }
  };
  const run = (): void => {
    if (running !== undefined) {
      again = true;
      return;
    }
    running = reload().finally(() => {
      running = undefined;
      if (again && !closed) {
        again = false;
        run();
      }
    });
  };
  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(run, options.debounceMs);
    timer.unref();
  };

  const watchers: FSWatcher[] = [];
  for (const dir of new Set(files.map((file) => dirname(file)))) {
    try {
      const watcher = watch(dir, { persistent: false }, schedule);
      // A watcher that fails (its directory went away) leaves the poll to notice changes.
      watcher.on('error', () => watcher.close());
      watchers.push(watcher);
    } catch {
      // Same: no inotify here, the poll still works.
    }
  }
  const poll = setInterval(() => {
    signature(files).then((now) => {
      if (now !== seen) schedule();
    });
  }, options.pollMs);
  poll.unref();

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(poll);
      for (const watcher of watchers) watcher.close();
    },
  };
}
