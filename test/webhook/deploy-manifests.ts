// deploy/webhook's objects as written (no kustomize): the files its kustomization lists, parsed, and a Kubernetes
// label selector to check which pods they select. For the tests that run without kubectl.

import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import type { Manifest } from '../helpers/kustomize.js';

export const DIR = new URL('../../deploy/webhook/', import.meta.url);

/**
 * The names the webhook's flags default to (--service, --tls-secret, --webhook-config), fixed by issue 16's
 * contract with src/commands/webhook.ts: the manifests spell them out and RBAC grants exactly these.
 */
export const CONTRACT = {
  service: 'osm-healthcheck-webhook',
  tlsSecret: 'osm-healthcheck-webhook-tls',
  webhookConfig: 'osm-healthcheck',
  serviceAccount: 'osm-healthcheck-webhook',
} as const;

export const kustomization = parse(readFileSync(new URL('kustomization.yaml', DIR), 'utf8')) as Manifest;

export const objects: Manifest[] = (kustomization.resources as string[]).flatMap((file) =>
  parseAllDocuments(readFileSync(new URL(file, DIR), 'utf8')).map((doc) => {
    expect(doc.errors, file).toEqual([]);
    return doc.toJS() as Manifest;
  }),
);

/** The one object of `kind` (and `name`); fails the test if there is none or more than one. */
export function one(kind: string, name?: string): Manifest {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Manifest;
}

/** A Kubernetes label selector (matchLabels and matchExpressions) applied to a set of labels. */
export function matches(selector: Manifest, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpression = (selector.matchExpressions ?? []).every((e: Manifest) => {
    const has = Object.hasOwn(labels, e.key);
    switch (e.operator) {
      case 'In':
        return has && e.values.includes(labels[e.key]);
      case 'NotIn':
        return !has || !e.values.includes(labels[e.key]);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        throw new Error(`unknown operator ${e.operator}`);
    }
  });
  return byLabel && byExpression;
}

/** The value after `name` in a container's args. */
export function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}
