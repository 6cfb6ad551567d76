// Reads a stream of YAML (or JSON) documents one at a time, each checked before it is used: its syntax, binary
// data (YAML's character set), duplicate keys (found in one walk, not yaml's quadratic check), and that it holds
// a Kubernetes object; errors name the input, the document and the line.

import { Composer, type Document, Parser } from 'yaml';
import { describeValue, HealthcheckError } from '../errors.js';
import { type DocumentValue, documentValue } from './document-value.js';

export interface StreamDocument {
  doc: Document.Parsed;
  value: unknown;
  where: (offset: number | undefined) => string;
}

/**
 * YAML 1.2 allows none of these anywhere in a stream, not even quoted (they must be escaped): C0 controls but
 * tab, LF and CR, DEL, and C1 controls but NEL (yaml.org/spec/1.2.2, 5.1 Character Set). Seen in a manifest,
 * they are binary data.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const NOT_YAML_TEXT = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]/;

/**
 * The documents of a YAML (or JSON) stream, one at a time, each with its value, checked: a syntax error,
 * binary data, a duplicate key, or a document that is no object (a string, a list) names its document and line;
 * a stream without any object is an error too. With yaml's own duplicate-key check (quadratic in a map's size)
 * off: duplicateKey finds them in one pass.
 */
export function* readStream(source: string, prefix: string): Generator<StreamDocument> {
  const binary = NOT_YAML_TEXT.exec(source);
  const composer = new Composer({ uniqueKeys: false });
  let index = 0;
  let objects = 0;
  const fail = (where: string, problem: string, cause?: unknown): never => {
    throw new HealthcheckError('OSM_HC_MANIFEST', `${prefix}${where}: ${problem}`, { cause });
  };
  for (const doc of composer.compose(new Parser().parse(source))) {
    index += 1;
    const number = index;
    const place = (offset: number | undefined) =>
      `document ${number}${offset === undefined ? '' : `, line ${lineOf(source, offset)}`}`;
    const where = (offset: number | undefined) => `${prefix}${place(offset)}`;
    if (binary !== null && binary.index < doc.range[2]) {
      fail(place(binary.index), binaryProblem(binary[0]));
    }
    const [error] = doc.errors;
    if (error !== undefined) {
      // yaml's message may end in "at line L, column C:" and a code frame; we say the line our own way.
      const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:$/, '');
      throw new HealthcheckError('OSM_HC_MANIFEST', `${where(error.pos[0])}: ${message}`, { cause: error });
    }
    let read: DocumentValue;
    try {
      read = documentValue(doc);
    } catch (err) {
      // e.g. yaml's guard against alias bombs ("Excessive alias count").
      return fail(place(undefined), (err as Error).message, err);
    }
    if ('duplicate' in read) {
      const key = JSON.stringify(String(read.duplicate.key.value));
      return fail(place(read.duplicate.offset), `duplicate key ${key} in one map`);
    }
    const { value } = read;
    if (value !== null && value !== undefined) {
      if (typeof value !== 'object' || Array.isArray(value)) {
        fail(place(doc.contents?.range?.[0]), notAnObject(value));
      }
      objects += 1;
    }
    yield { doc, value, where };
  }
  const [error] = composer.streamInfo().errors;
  if (error !== undefined) fail(`line ${lineOf(source, error.pos[0])}`, error.message.split('\n')[0] ?? '');
  if (binary !== null) fail(`line ${lineOf(source, binary.index)}`, binaryProblem(binary[0]));
  if (objects === 0) {
    fail(
      index === 0 ? 'no documents' : `${index} document${index === 1 ? '' : 's'}, none with an object`,
      'the input is empty (or only comments): no YAML or JSON manifest to inject',
    );
  }
}

function binaryProblem(char: string): string {
  const code = `U+${char.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}`;
  return `control character ${code}: binary data, not a YAML or JSON manifest`;
}

function notAnObject(value: unknown): string {
  const what = Array.isArray(value) ? 'a list' : `a ${typeof value} (${describeValue(value)})`;
  const hint = Array.isArray(value)
    ? '; a list of objects goes in the items of a v1 List (kind: List), as kubectl get -o yaml writes it'
    : '';
  return `is ${what}, not a Kubernetes object (a map with apiVersion and kind)${hint}`;
}

/** The 1-based line of `offset`: counted only for an error or a warning, so no line table is kept. */
function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let at = source.indexOf('\n'); at >= 0 && at < offset; at = source.indexOf('\n', at + 1)) line += 1;
  return line;
}
