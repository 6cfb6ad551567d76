import { describe, expect, it } from 'vitest';
import { grpcUserAgent } from '../../src/probe/grpc-user-agent.js';

describe('grpcUserAgent', () => {
  it.each([
    // The kubelets issue 28 ran Kubernetes' probe suite on: 1.26.3, 1.32.13, 1.36.3.
    { name: '1.26', incoming: 'kube-probe/1.26', want: 'kube-probe/1.26 grpc-go/1.49.0' },
    { name: '1.27', incoming: 'kube-probe/1.27', want: 'kube-probe/1.27 grpc-go/1.51.0' },
    { name: '1.28', incoming: 'kube-probe/1.28', want: 'kube-probe/1.28 grpc-go/1.54.0' },
    { name: '1.29', incoming: 'kube-probe/1.29', want: 'kube-probe/1.29 grpc-go/1.58.3' },
    { name: '1.30 (the default)', incoming: 'kube-probe/1.30', want: 'kube-probe/1.30 grpc-go/1.58.3' },
    { name: '1.31', incoming: 'kube-probe/1.31', want: 'kube-probe/1.31 grpc-go/1.65.0' },
    { name: '1.32', incoming: 'kube-probe/1.32', want: 'kube-probe/1.32 grpc-go/1.65.0' },
    { name: '1.33', incoming: 'kube-probe/1.33', want: 'kube-probe/1.33 grpc-go/1.68.1' },
    { name: '1.34', incoming: 'kube-probe/1.34', want: 'kube-probe/1.34 grpc-go/1.72.1' },
    { name: '1.35', incoming: 'kube-probe/1.35', want: 'kube-probe/1.35 grpc-go/1.72.2' },
    {
      name: '1.36, as seen from a 1.36.3 kubelet',
      incoming: 'kube-probe/1.36',
      want: 'kube-probe/1.36 grpc-go/1.79.3',
    },
    { name: 'the oldest known, 1.23', incoming: 'kube-probe/1.23', want: 'kube-probe/1.23 grpc-go/1.40.0' },
    {
      name: 'older than the table: the oldest',
      incoming: 'kube-probe/1.19',
      want: 'kube-probe/1.19 grpc-go/1.40.0',
    },
    {
      name: 'newer than the table: the newest',
      incoming: 'kube-probe/1.40',
      want: 'kube-probe/1.40 grpc-go/1.79.3',
    },
    { name: 'a major 2: the newest', incoming: 'kube-probe/2.0', want: 'kube-probe/2.0 grpc-go/1.79.3' },
    { name: 'a major 0: the oldest', incoming: 'kube-probe/0.99', want: 'kube-probe/0.99 grpc-go/1.40.0' },
    { name: 'not kubelet: as it is', incoming: 'curl/8.5.0', want: 'curl/8.5.0' },
    {
      name: 'already with a token: as it is',
      incoming: 'kube-probe/1.36 grpc-go/1.79.3',
      want: 'kube-probe/1.36 grpc-go/1.79.3',
    },
  ])('$name', ({ incoming, want }) => {
    expect(grpcUserAgent(incoming)).toBe(want);
  });
});
