// What a gRPC probe needs from gRPC: grpc-js and grpc.health.v1.Health/Check's method definition. grpc.ts imports
// this module lazily, on the first gRPC probe; the build makes it a file of its own, dist/commands/grpc-kit.cjs,
// with both packages and health.proto's descriptor inlined, so neither serve's start-up nor the image's
// node_modules carries them (scripts/bundle-options.mjs).

import * as grpc from '@grpc/grpc-js';
import { service } from 'grpc-health-check';

export { grpc };

/** Health/Check as grpc-health-check loads it: enums decoded as names, defaults filled in. */
export const check = service.Check;
