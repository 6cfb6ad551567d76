// The shape every subcommand has, and where the commands that probe send their probes. Flags: ../flags.ts.

import { isIP } from 'node:net';
import { badFlagValue } from '../flags.js';

export interface Command {
  name: string;
  /** The full `--help` text of the subcommand. */
  usage: string;
  /** Resolves when the command is done (for `serve`: after a graceful shutdown); throws on failure. */
  run(argv: readonly string[]): Promise<void>;
}

/** Where probes go: env POD_IP when set (what kubelet itself dials), else 127.0.0.1. */
export function podTargetHost(): string {
  const podIp = process.env.POD_IP?.trim();
  if (podIp === undefined || podIp === '') return '127.0.0.1';
  if (isIP(podIp) === 0) throw badFlagValue('env POD_IP', podIp, "an IP address: the pod's status.podIP");
  return podIp;
}
