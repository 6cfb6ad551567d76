// Kubernetes versions as users write them and as API servers (upstream, EKS, GKE, k3s) report them.

import { describe, expect, it } from 'vitest';
import {
  atLeast,
  formatVersion,
  parseKubeVersion,
  readKubeVersionFlag,
  versionFromApi,
} from '../src/kube-version.js';

describe('parseKubeVersion', () => {
  it.each([
    { name: 'major.minor', text: '1.28', want: { major: 1, minor: 28 } },
    { name: 'with a v', text: 'v1.29', want: { major: 1, minor: 29 } },
    { name: 'with a patch', text: '1.33.2', want: { major: 1, minor: 33 } },
    { name: "EKS's gitVersion", text: 'v1.28.3-eks-4f4795d', want: { major: 1, minor: 28 } },
    { name: "GKE's gitVersion", text: 'v1.30.5-gke.1014001', want: { major: 1, minor: 30 } },
    { name: "k3s's gitVersion", text: 'v1.29.0+k3s1', want: { major: 1, minor: 29 } },
    { name: 'spaces around', text: ' 1.26 ', want: { major: 1, minor: 26 } },
    { name: 'no minor', text: '1', want: undefined },
    { name: 'words', text: 'latest', want: undefined },
    { name: 'empty', text: '', want: undefined },
    { name: 'a trailing dot', text: '1.28.', want: undefined },
  ])('$name: "$text"', ({ text, want }) => {
    expect(parseKubeVersion(text)).toEqual(want);
  });
});

describe('versionFromApi: the body of GET /version', () => {
  it.each([
    {
      name: 'upstream',
      body: { major: '1', minor: '29', gitVersion: 'v1.29.4', platform: 'linux/amd64' },
      want: { major: 1, minor: 29 },
    },
    {
      name: 'EKS: minor "28+"',
      body: { major: '1', minor: '28+', gitVersion: 'v1.28.3-eks-4f4795d' },
      want: { major: 1, minor: 28 },
    },
    {
      name: 'major and minor empty: from gitVersion',
      body: { major: '', minor: '', gitVersion: 'v1.26.15' },
      want: { major: 1, minor: 26 },
    },
  ])('$name', ({ body, want }) => {
    expect(versionFromApi(body)).toEqual(want);
  });

  it.each([
    {
      name: 'no version at all',
      body: { platform: 'linux/amd64' },
      message: 'no version in the answer: major nothing, minor nothing, gitVersion nothing',
    },
    { name: 'not an object', body: 'v1.29', message: 'no version in the answer' },
    {
      name: 'numbers where strings belong, and a gitVersion that is no version',
      body: { major: 1, minor: 29, gitVersion: 'devel' },
      message: 'major 1, minor 29, gitVersion "devel"',
    },
  ])('refuses $name', ({ body, message }) => {
    expect(() => versionFromApi(body)).toThrow(message);
  });
});

describe('atLeast and formatVersion', () => {
  it.each([
    { version: { major: 1, minor: 28 }, at: [1, 29], want: false },
    { version: { major: 1, minor: 29 }, at: [1, 29], want: true },
    { version: { major: 1, minor: 33 }, at: [1, 29], want: true },
    { version: { major: 2, minor: 0 }, at: [1, 29], want: true },
  ])('$version.major.$version.minor >= $at: $want', ({ version, at, want }) => {
    expect(atLeast(version, at[0] ?? 0, at[1] ?? 0)).toBe(want);
    expect(formatVersion(version)).toBe(`${version.major}.${version.minor}`);
  });
});

describe('readKubeVersionFlag: a Kubernetes version, 1.19 or later', () => {
  it.each(['1.19', 'v1.28.3', '1.36', 'v1.29.0+k3s1', '1.40'])('takes %s', (text) => {
    expect(readKubeVersionFlag(text)).toEqual({ version: parseKubeVersion(text) });
  });
  it.each([
    { text: '1.3', invalid: '"1.3" is older than 1.19' },
    { text: '1.18.20', invalid: '"1.18.20" is older than 1.19' },
    { text: '2.0', invalid: '"2.0" is no Kubernetes version' },
    { text: '0.29', invalid: '"0.29" is no Kubernetes version' },
    { text: 'latest', invalid: '"latest" is no Kubernetes version' },
  ])('refuses $text', ({ text, invalid }) => {
    expect(readKubeVersionFlag(text)).toEqual({ invalid });
  });
});
