// What a suite needs from the machine beyond Node and node_modules (a tool on PATH, a file, root), and the one
// rule for when it is missing: on a developer's machine the suite skips, saying LOUDLY what it lacks and how to get
// it; in CI (CI=true, which .ci/run sets after installing every tool) it runs and fails, so a missing tool never
// passes silently. docs/development.md lists the tools; .ci/run installs them.

import { existsSync } from 'node:fs';
import { onPath } from './on-path.js';

export interface Need {
  /** What is needed, as the warning names it: `tini`, `/etc/ssl/certs/ca-certificates.crt`, `root`. */
  what: string;
  present: boolean;
  /** How to get it, as the warning says it. */
  how: string;
}

/** An executable on PATH; `how` defaults to Debian's package of the same name. */
export function tool(bin: string, how = `apt-get install ${bin}`): Need {
  return { what: bin, present: onPath(bin) !== undefined, how };
}

/** A file that must exist (the CA bundle a script copies). */
export function file(path: string, how: string): Need {
  return { what: path, present: existsSync(path), how };
}

/** Root, for what only root may do (chroot, network namespaces, iptables). */
export function root(why: string): Need {
  return { what: 'root', present: process.getuid?.() === 0, how: `run as root: ${why}; CI runs as root` };
}

/**
 * Time, for the suites that run a benchmark end to end (minutes, and meaningless numbers on a busy machine): they
 * run where OSM_HC_HEAVY=1 or CI=true (.ci/run), and skip loudly in a developer's `npm test`, whose tests keep each
 * benchmark's code working on a tiny input instead.
 */
export function heavy(what: string): Need {
  const present = process.env.OSM_HC_HEAVY === '1' || process.env.CI === 'true';
  return { what: `OSM_HC_HEAVY=1 (${what})`, present, how: 'OSM_HC_HEAVY=1 npm test; .ci/run sets CI=true' };
}

// The tools several suites need, named once.
export const OPENSSL = tool('openssl');
export const SHELLCHECK = tool('shellcheck');
export const TINI = tool('tini');
export const CA_BUNDLE = file('/etc/ssl/certs/ca-certificates.crt', 'apt-get install ca-certificates');
export const DPKG = tool('dpkg-query', 'a Debian system');
export const IP = tool('ip', 'apt-get install iproute2');
export const IPTABLES = tool('iptables', 'apt-get install iptables');
/** nft, for the node agent's native nftables backend (Debian's nftables package). */
export const NFT = tool('nft', 'apt-get install nftables');

/** The needs of `needs` that are missing, as one line for a message. */
export function missing(needs: readonly Need[]): string {
  return needs
    .filter((n) => !n.present)
    .map((n) => `${n.what} (${n.how})`)
    .join(', ');
}

/**
 * True when `suite` must skip: something it needs is missing and this is not CI. Says so loudly either way; with
 * CI=true it returns false, so the suite runs and fails on what is missing.
 */
export function skipWithout(suite: string, needs: readonly Need[]): boolean {
  const lacking = missing(needs);
  if (lacking === '') return false;
  if (process.env.CI === 'true') {
    console.error(
      `\n!!! ${suite}: missing ${lacking}; CI=true, so it runs and fails (.ci/run installs the Debian packages among these).\n`,
    );
    return false;
  }
  console.warn(
    `\n!!! SKIPPED ${suite}: it needs ${lacking}. .ci/run installs the Debian packages among them; with CI=true this fails instead.\n`,
  );
  return true;
}
