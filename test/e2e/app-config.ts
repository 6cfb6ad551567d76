// What the stand-in app of one container serves, derived from that container's original probes so every probe
// has a real server behind it. Shared by the test, which derives it, and app.ts, which serves it.

import type { ContainerSpec } from './pod-spec.js';

export interface Header {
  name: string;
  value: string;
}

export type AppServer =
  /** Each path answers 200 when healthy and 503 when not; 400 when a header its probe sends is missing. */
  | { type: 'http'; port: number; tls: boolean; paths: Record<string, Header[]> }
  /** Accepts and closes, healthy or not: a TCP probe can only tell a listening port from a dead one. */
  | { type: 'tcp'; port: number }
  /** grpc.health.v1.Health: SERVING when healthy, NOT_SERVING when not, for each service a probe asks about. */
  | { type: 'grpc'; port: number; services: string[] };

export interface AppConfig {
  container: string;
  servers: AppServer[];
  /** Key and certificate (PEM) for the HTTPS servers. */
  tls?: { key: string; cert: string };
}

/** One server per port the container's probes name; a TCP probe on an HTTP or gRPC port needs no server of its own. */
export function appServers(container: ContainerSpec): AppServer[] {
  const byPort = new Map<number, AppServer>();
  const conflict = (port: number) =>
    new Error(`${container.name}: port ${port} is probed with two protocols`);
  for (const { action } of container.probes) {
    const existing = byPort.get(action.port);
    if (action.type === 'httpGet') {
      const tls = action.scheme === 'HTTPS';
      if (existing === undefined || existing.type === 'tcp') {
        byPort.set(action.port, {
          type: 'http',
          port: action.port,
          tls,
          paths: { [action.path]: action.headers },
        });
      } else if (existing.type === 'http' && existing.tls === tls) {
        existing.paths[action.path] = action.headers;
      } else {
        throw conflict(action.port);
      }
    } else if (action.type === 'grpc') {
      if (existing === undefined || existing.type === 'tcp') {
        byPort.set(action.port, { type: 'grpc', port: action.port, services: [action.service] });
      } else if (existing.type === 'grpc') {
        existing.services.push(action.service);
      } else {
        throw conflict(action.port);
      }
    } else if (existing === undefined) {
      byPort.set(action.port, { type: 'tcp', port: action.port });
    }
  }
  return [...byPort.values()];
}
