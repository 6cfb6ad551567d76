// The README's kustomize overlay, taken from the README as written: beside a checkout cloned as osm-healthcheck/,
// `kubectl apply -k` of it (kubectl's own kustomize, no standalone one) renders deploy/webhook's objects with the
// image set in both places the webhook needs it: its own container and the image it injects.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { ROOT } from '../helpers/cli.js';
import { type Manifest, render, skipWithoutKubectl } from '../helpers/kustomize.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The README's fenced blocks of one language, in order. */
function blocks(language: string): string[] {
  return [...README.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (m) => m[1] ?? '',
  );
}

const overlay = blocks('yaml').find((block) => /^# [\w-]+\/kustomization\.yaml\n/.test(block)) ?? '';
const overlayDir = /^# ([\w-]+)\/kustomization\.yaml/.exec(overlay)?.[1] ?? '';

const container = (objects: Manifest[]) =>
  objects.find((o) => o.kind === 'Deployment')?.spec.template.spec.containers[0] as Manifest;
const env = (c: Manifest, name: string) =>
  (c.env as { name: string; value?: string }[]).find((e) => e.name === name)?.value;

describe("the README's kustomize overlay", () => {
  it('is shown whole, and applied with kubectl apply -k', () => {
    expect(overlayDir).not.toBe('');
    expect(overlay).toMatch(/^kind: Kustomization$/m);
    expect(overlay).toMatch(/^images:$/m);
    expect(blocks('sh').some((block) => block.includes(`kubectl apply -k ${overlayDir}\n`))).toBe(true);
    expect(README).not.toMatch(/kustomize edit/);
  });

  describe.skipIf(skipWithoutKubectl("test/deploy/readme-overlay.test.ts (the README's overlay)"))(
    'rendered',
    () => {
      let dir: string;
      let objects: Manifest[];
      let base: Manifest[];

      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), 'osm-hc-readme-overlay-'));
        symlinkSync(ROOT, join(dir, 'osm-healthcheck'));
        mkdirSync(join(dir, overlayDir));
        writeFileSync(join(dir, overlayDir, 'kustomization.yaml'), overlay);
        objects = await render(join(dir, overlayDir));
        base = await render(join(ROOT, 'deploy/webhook'));
      });
      afterAll(() => {
        if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      });

      it("sets the webhook's image and the image it injects, at the project's version", () => {
        const image = `registry.example.com/you/osm-healthcheck:${pkg.version}`;
        expect(container(objects).image).toBe(image);
        expect(env(container(objects), 'OSM_HEALTHCHECK_IMAGE')).toBe(image);
      });

      it("is deploy/webhook's objects otherwise", () => {
        const withoutImage = (list: Manifest[]) =>
          JSON.parse(
            JSON.stringify(list).replaceAll(`registry.example.com/you/osm-healthcheck`, 'osm-healthcheck'),
          );
        expect(withoutImage(objects)).toEqual(base);
      });
    },
  );
});
