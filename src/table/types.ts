// The probe table: what `inject` records and `serve` runs (docs/architecture.md#the-probe-table).
// Two shapes: the JSON document as it travels in OSM_HEALTHCHECK_PROBES, and the parsed form,
// where an entry is exactly one of http/tcp/grpc so no handler can be half-set.

import type { ProbeKind } from '../scheme.js';

export interface HttpHeader {
  name: string;
  value: string;
}

/** The JSON document: kind -> container -> the original Kubernetes probe handler, ports as integers. */
export interface ProbeTableDocument {
  liveness?: Record<string, ProbeEntryDocument>;
  readiness?: Record<string, ProbeEntryDocument>;
  startup?: Record<string, ProbeEntryDocument>;
}

export interface ProbeEntryDocument {
  httpGet?: { path?: string; port: number; scheme?: 'HTTP' | 'HTTPS'; httpHeaders?: HttpHeader[] };
  tcpSocket?: { port: number };
  grpc?: { port: number; service?: string };
  timeoutSeconds?: number;
}

export type Scheme = 'HTTP' | 'HTTPS';

export interface HttpGetHandler {
  type: 'httpGet';
  scheme: Scheme;
  port: number;
  /** Always starts with `/`; may carry a query string. */
  path: string;
  httpHeaders: readonly HttpHeader[];
}

export interface TcpSocketHandler {
  type: 'tcpSocket';
  port: number;
}

export interface GrpcHandler {
  type: 'grpc';
  port: number;
  service: string;
}

export type ProbeHandler = HttpGetHandler | TcpSocketHandler | GrpcHandler;

export interface ProbeEntry {
  kind: ProbeKind;
  container: string;
  handler: ProbeHandler;
  timeoutSeconds: number;
}

/** Parsed table: entries by kind, then by container name, in document order. */
export type ProbeTable = Readonly<Record<ProbeKind, ReadonlyMap<string, ProbeEntry>>>;
