// RBAC roles as lines a test can list and compare (`group/resource[names] verb`), and the comment above each rule
// of a manifest's text, for the RBAC tests of deploy/webhook and deploy/analyze.

import { expect } from 'vitest';
import type { Manifest } from './kustomize.js';

const RULE_KEYS = ['apiGroups', 'resources', 'resourceNames', 'verbs'];

/** Every grant of a Role or ClusterRole as one line, `group/resource[names] verb`, sorted. */
export function grants(role: Manifest): string[] {
  for (const rule of role.rules as Manifest[]) {
    // nonResourceURLs or anything else would grant beyond these lines.
    expect(Object.keys(rule).filter((key) => !RULE_KEYS.includes(key))).toEqual([]);
  }
  return (role.rules as Manifest[])
    .flatMap((rule) =>
      (rule.apiGroups as string[]).flatMap((group) =>
        (rule.resources as string[]).flatMap((resource) =>
          (rule.verbs as string[]).map(
            (verb) => `${group}/${resource}[${(rule.resourceNames ?? ['*']).join(',')}] ${verb}`,
          ),
        ),
      ),
    )
    .sort();
}

/** Each rule (`- apiGroups:` line) with the comment lines right above it, and the resources it names. */
export function ruleComments(text: string): { comment: string; resources: string[] }[] {
  const lines = text.split('\n');
  return lines.flatMap((line, index) => {
    if (!/^\s+- apiGroups:/.test(line)) return [];
    const comment: string[] = [];
    for (let above = index - 1; above >= 0 && /^\s+#/.test(lines[above] ?? ''); above--) {
      comment.unshift((lines[above] ?? '').replace(/^\s+#\s?/, ''));
    }
    const resources = JSON.parse(
      /resources:\s*(\[.*\])/.exec(lines[index + 1] ?? '')?.[1] ?? '[]',
    ) as string[];
    return [{ comment: comment.join(' '), resources }];
  });
}
