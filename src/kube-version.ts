// Kubernetes versions as users write them (`inject --kube-version 1.28`) and as the API server reports them
// (GET /version: `{"major": "1", "minor": "28+", "gitVersion": "v1.28.3-eks-4f4795d", ...}`). Only major and
// minor matter: features arrive with minor releases.

import { describeValue } from './errors.js';

export interface KubeVersion {
  major: number;
  minor: number;
}

// v1.28, 1.28.3, v1.28.3-eks-4f4795d, v1.29.0+k3s1: what `kubectl version` and managed clusters print.
const VERSION = /^v?(\d{1,4})\.(\d{1,4})(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$/;
// Managed clusters report `minor: "28+"`; the `+` marks a build past the release tag.
const NUMBER = /^(\d{1,4})\+?$/;

/** `1.28`, `v1.28.3`, `v1.28.3-eks-...`; undefined for anything else. */
export function parseKubeVersion(text: string): KubeVersion | undefined {
  const match = VERSION.exec(text.trim());
  if (match === null) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]) };
}

/**
 * The oldest version --kube-version takes: 1.19 made seccompProfile a securityContext field, which our
 * containers set (RuntimeDefault), so an older API server would drop it.
 */
export const OLDEST_KUBE_VERSION: KubeVersion = { major: 1, minor: 19 };

/** A --kube-version flag: a Kubernetes version, 1.19 or later (there is no Kubernetes 2 to speak of). */
export function readKubeVersionFlag(text: string): { version: KubeVersion } | { invalid: string } {
  const version = parseKubeVersion(text);
  if (version === undefined || version.major !== 1) {
    return { invalid: `${describeValue(text)} is no Kubernetes version` };
  }
  if (version.minor < OLDEST_KUBE_VERSION.minor) {
    return { invalid: `${describeValue(text)} is older than ${formatVersion(OLDEST_KUBE_VERSION)}` };
  }
  return { version };
}

/**
 * The version in a GET /version answer: `major` and `minor` when they read as numbers, else `gitVersion`.
 * Throws an Error saying what the answer held when neither does.
 */
export function versionFromApi(body: unknown): KubeVersion {
  const info = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const major = typeof info.major === 'string' ? NUMBER.exec(info.major) : null;
  const minor = typeof info.minor === 'string' ? NUMBER.exec(info.minor) : null;
  if (major !== null && minor !== null) return { major: Number(major[1]), minor: Number(minor[1]) };
  const fromGit = typeof info.gitVersion === 'string' ? parseKubeVersion(info.gitVersion) : undefined;
  if (fromGit !== undefined) return fromGit;
  throw new Error(
    `no version in the answer: major ${describeValue(info.major)}, minor ${describeValue(info.minor)}, gitVersion ${describeValue(info.gitVersion)}`,
  );
}

export function formatVersion(version: KubeVersion): string {
  return `${version.major}.${version.minor}`;
}

export function atLeast(version: KubeVersion, major: number, minor: number): boolean {
  return version.major > major || (version.major === major && version.minor >= minor);
}
