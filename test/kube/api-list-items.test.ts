// A list answer split into its items' bytes (src/kube/api/list-items.ts) gives, item by item, exactly what parsing
// the whole answer gives: strings holding brackets, braces, escaped quotes and "items" itself, nested `items`
// keys, other bytes than ASCII, whitespace anywhere; and where the bytes are no list, nothing is split, so the
// answer is parsed whole as before (pageOf in src/kube/api/reply.ts).

import { describe, expect, it } from 'vitest';
import { splitList } from '../../src/kube/api/list-items.js';
import { pageOf as listReplyOf } from '../../src/kube/api/reply.js';

const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, annotations: { 'osm-healthcheck/status': '{"version":"0.1.0","probes":"[{]}"}' } },
  spec: { containers: [{ name: 'app', args: ['"items": [', '\\', '}'] }] },
  ...extra,
});

const LISTS: { name: string; text: string }[] = [
  {
    name: 'kubectl-like, items last',
    text: JSON.stringify({
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { continue: 'abc' },
      items: [pod('a'), pod('b')],
    }),
  },
  {
    name: 'items first, indented, a nested items key',
    text: JSON.stringify(
      { items: [pod('a', { items: [1, 2] }), pod('b')], metadata: { resourceVersion: '7' }, kind: 'List' },
      null,
      2,
    ),
  },
  { name: 'no items', text: '{"kind":"PodList","metadata":{},"items":[]}' },
  {
    name: 'one item, not ASCII, spaces around the colon',
    text: '{"metadata":{} , "items" : [ {"name":"ünïcødé ✓"} ] }',
  },
  { name: 'an "items" string value at the top', text: '{"note":"items","items":[{"a":"\\"items\\":[1]"}]}' },
  { name: 'items of every JSON kind', text: '{"items":[1,"two",[3],{"four":4},null,true]}' },
];

describe('splitList', () => {
  it.each(LISTS)('$name: each item parses to what the whole parse holds', ({ text }) => {
    const bytes = Buffer.from(text);
    const split = splitList(bytes);
    expect(split).toBeDefined();
    const items = split?.items.map(([s, e]) => JSON.parse(bytes.toString('utf8', s, e)));
    expect(items).toEqual(JSON.parse(text).items);
    const [from, to] = split?.inside ?? [0, 0];
    const rest = JSON.parse(`${bytes.toString('utf8', 0, from)}${bytes.toString('utf8', to)}`);
    expect(rest).toEqual({ ...JSON.parse(text), items: [] });
  });

  it.each([
    ['no items key', '{"kind":"Status","message":"items: none"}'],
    ['items only nested', '{"metadata":{"items":[1]}}'],
    ['items not an array', '{"items":{"a":1}}'],
    ['cut short inside the array', '{"items":[{"a":1},{"b":'],
    ['cut short inside a string', '{"items":[{"a":"b'],
    ['not JSON', 'upstream connect error'],
    ['empty', ''],
  ])('%s: nothing split', (_, text) => {
    expect(splitList(Buffer.from(text))).toBeUndefined();
  });
});

describe('listReplyOf', () => {
  const items = (reply: ReturnType<typeof listReplyOf>) => (reply.ok ? [...reply.items()] : reply);

  it('a page: its objects one by one, and the next page token', () => {
    const reply = listReplyOf(200, Buffer.from(LISTS[0]?.text ?? ''));
    expect(items(reply)).toEqual([pod('a'), pod('b')]);
    expect(reply.ok && reply.continue).toBe('abc');
  });

  it('items that are no objects are left out; the last page has no token', () => {
    const reply = listReplyOf(200, Buffer.from('{"metadata":{"continue":""},"items":[1,{"a":1},null]}'));
    expect(items(reply)).toEqual([{ a: 1 }]);
    expect(reply.ok && reply.continue).toBeUndefined();
  });

  it('a refusal is the Status it came with', () => {
    const status = {
      kind: 'Status',
      reason: 'Forbidden',
      message: 'pods is forbidden: User "x" cannot list',
    };
    expect(listReplyOf(403, Buffer.from(JSON.stringify(status)))).toEqual({
      ok: false,
      status: 403,
      reason: 'Forbidden',
      message: status.message,
    });
  });

  it('a 200 that is no JSON is refused as before, whole', () => {
    expect(listReplyOf(200, Buffer.from('<html>proxy</html>'))).toMatchObject({ ok: false, status: 200 });
  });

  it('an item that is no JSON throws a SyntaxError when the iteration reaches it', () => {
    const reply = listReplyOf(200, Buffer.from('{"metadata":{},"items":[{"a":1},{"b":tru}]}'));
    expect(reply.ok).toBe(true);
    const seen: unknown[] = [];
    expect(() => {
      if (reply.ok) for (const item of reply.items()) seen.push(item);
    }).toThrow(SyntaxError);
    expect(seen).toEqual([{ a: 1 }]);
  });
});
