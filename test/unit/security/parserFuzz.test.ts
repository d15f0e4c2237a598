// Property-based fuzzing of every parser (fast-check), seeded with the fixture files of
// test/fixtures/ingest/: random byte flips, truncations, insertions and splices. A parser must
// either return a document whose anchors lie inside the source (and, for the formats whose leaves
// are exact source slices, whose every text leaf slices back to exactly its text), or throw a
// CanopyError naming the file — never another exception. npm test runs 25 inputs per text fixture
// and 3 per PDF (about a second each); set CANOPY_FUZZ_RUNS for a longer run (npm run fuzz), a
// third of it for PDFs. Any file put in test/fixtures/fuzz/ runs as a regression; that folder
// does not exist until an input that broke a parser is kept there.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { CanopyError } from '../../../src/core/errors';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { decodeText } from '../../../src/core/ingest/decodeText';
import type { RegionNode } from '../../../src/contracts/region';

const fixtures = fileURLToPath(new URL('../../fixtures/ingest/', import.meta.url));
const regressions = fileURLToPath(new URL('../../fixtures/fuzz/', import.meta.url));
const runs = Number(process.env.CANOPY_FUZZ_RUNS ?? 25);
const pdfRuns = process.env.CANOPY_FUZZ_RUNS ? Math.max(5, Math.round(runs / 3)) : 3;

const seeds = readdirSync(fixtures).filter((f) => /\.(md|txt|csv|tsv|html|ipynb|json|jsonl|vtt|srt|pdf)$/.test(f) && f !== 'encrypted.pdf');

const mutation = (seed: Uint8Array) =>
  fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(seed.length - 1), value: fc.integer({ min: 0, max: 255 }), count: fc.integer({ min: 1, max: 8 }) }),
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat(seed.length) }),
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(seed.length), bytes: fc.uint8Array({ maxLength: 64 }) }),
    fc.record({ kind: fc.constant('text' as const), at: fc.nat(seed.length), text: fc.constantFrom('\u0000', '\r\n', '\ufeff', '# ', '|', '"', '{', ']]>', '<script>', '-->', '\u2028', 'é', '\ud83c', '00:00:01.000 --> ') }),
  );

type Mutation = { kind: 'flip'; at: number; value: number; count: number } | { kind: 'truncate'; at: number } | { kind: 'insert'; at: number; bytes: Uint8Array } | { kind: 'text'; at: number; text: string };

function apply(seed: Uint8Array, muts: Mutation[]): Uint8Array {
  let b = Buffer.from(seed);
  for (const m of muts) {
    const at = Math.min(m.at, b.length);
    if (m.kind === 'flip') {
      b = Buffer.from(b);
      for (let i = 0; i < m.count && at + i < b.length; i++) b[at + i] = (m.value + i * 31) & 0xff;
    } else if (m.kind === 'truncate') b = b.subarray(0, at);
    else if (m.kind === 'insert') b = Buffer.concat([b.subarray(0, at), Buffer.from(m.bytes), b.subarray(at)]);
    else b = Buffer.concat([b.subarray(0, at), Buffer.from(m.text, 'utf8'), b.subarray(at)]);
  }
  return b;
}

function leaves(n: RegionNode): RegionNode[] {
  return n.children.length === 0 ? [n] : n.children.flatMap(leaves);
}

async function check(name: string, bytes: Uint8Array): Promise<void> {
  let doc;
  try {
    doc = await parseFile(name, bytes, { timeLimitMs: 20_000, graph: false });
  } catch (err) {
    assert.ok(err instanceof CanopyError || (err as Error).name === 'CancelledError', `${name}: not a CanopyError: ${(err as Error)?.stack ?? err}`);
    assert.ok((err as Error).message.includes(name), `${name}: the message does not name the file: ${(err as Error).message}`);
    return;
  }
  const source = doc.format === 'pdf' ? undefined : decodeText(name, bytes).text;
  for (const item of doc.items) {
    for (const leaf of leaves(item.root)) {
      const a = leaf.anchor;
      if (source === undefined || a.charStart === undefined || a.charEnd === undefined) continue;
      assert.ok(a.charStart >= 0 && a.charEnd <= source.length && a.charStart <= a.charEnd, `${name}: anchor out of range`);
      // Leaves of these formats are exact source slices; images carry their alt text instead.
      if (['markdown', 'text', 'csv', 'tsv', 'subtitles'].includes(doc.format) && leaf.kind !== 'image') {
        assert.equal(source.slice(a.charStart, a.charEnd), leaf.text, `${name}: leaf ${leaf.id} does not slice back to its text`);
      }
    }
  }
}

describe('parser fuzzing', () => {
  for (const name of seeds) {
    it(`${name}: ${name.endsWith('.pdf') ? pdfRuns : runs} mutated inputs parse to valid anchors or fail with a clear CanopyError`, async () => {
      const seed = new Uint8Array(readFileSync(fixtures + name));
      await fc.assert(
        fc.asyncProperty(fc.array(mutation(seed), { minLength: 1, maxLength: 3 }), async (muts) => check(name, apply(seed, muts as Mutation[]))),
        { numRuns: name.endsWith('.pdf') ? pdfRuns : runs, seed: 424242 },
      );
    });
  }

  const found = existsSync(regressions) ? readdirSync(regressions).filter((f) => !f.endsWith('.md')) : [];
  for (const f of found) {
    it(`regression: ${f}`, async () => check(f, new Uint8Array(readFileSync(regressions + f))));
  }
});
