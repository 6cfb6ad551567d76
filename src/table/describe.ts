// A table entry's original probe in one short phrase (`HTTP :8080/ready`, `tcp :5432`, `grpc :9000 service=""`):
// how serve's start-up line and `check` name what they probe.

import type { ProbeHandler } from './types.js';

export function describeHandler(handler: ProbeHandler): string {
  switch (handler.type) {
    case 'httpGet':
      return `${handler.scheme} :${handler.port}${handler.path}`;
    case 'tcpSocket':
      return `tcp :${handler.port}`;
    case 'grpc':
      return `grpc :${handler.port} service=${JSON.stringify(handler.service)}`;
    default: {
      const unreachable: never = handler;
      throw new Error(`unhandled probe handler ${JSON.stringify(unreachable)}`);
    }
  }
}
