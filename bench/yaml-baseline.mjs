// The inject benchmark's baseline: the yaml library's own parse and print of FILE, to stdout, one document at a
// time with its duplicate-key check off: what any inject that keeps comments and key order must pay at least.
import { readFileSync } from 'node:fs';
import { Composer, Parser } from 'yaml';

const source = readFileSync(process.argv[2], 'utf8');
const chunks = [];
for (const doc of new Composer({ uniqueKeys: false }).compose(new Parser().parse(source))) {
  doc.toJS();
  chunks.push(doc.toString({ lineWidth: 0 }));
}
process.stdout.write(chunks.join(''));
