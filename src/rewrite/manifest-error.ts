// An invalid manifest, with the field it is about, so the CLI can point at a document and line and the
// webhook can name the field in its denial.

import { HealthcheckError } from '../errors.js';

/** Keys and indexes from some root, e.g. `['containers', 1, 'livenessProbe']`. */
export type FieldPath = readonly (string | number)[];

/** `containers[1].livenessProbe`: a field path as Kubernetes prints it. */
export function formatPath(path: FieldPath): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    return text === '' ? key : `${text}.${key}`;
  }, '');
}

export class ManifestError extends HealthcheckError {
  readonly resource: string;
  /** Where the problem is, relative to the object the thrower was given (a pod spec, or a document). */
  readonly path: FieldPath;
  readonly problem: string;

  constructor(resource: string, path: FieldPath, problem: string, options?: { cause?: unknown }) {
    super(
      'OSM_HC_MANIFEST',
      `${resource}: ${path.length === 0 ? '' : `${formatPath(path)}: `}${problem}`,
      options,
    );
    this.name = 'ManifestError';
    this.resource = resource;
    this.path = path;
    this.problem = problem;
  }
}

/**
 * A value of a pod (template) annotation the rewrite cannot use. The annotation sits beside the pod spec, where
 * no path from the spec reaches: inject points at its own line (manifest.ts), the webhook names it.
 */
export class AnnotationError extends ManifestError {
  readonly annotation: string;
  readonly reason: string;

  constructor(resource: string, annotation: string, reason: string) {
    super(resource, [], `metadata.annotations.${annotation}: ${reason}`);
    this.name = 'AnnotationError';
    this.annotation = annotation;
    this.reason = reason;
  }
}
