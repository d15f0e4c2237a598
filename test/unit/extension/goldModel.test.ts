// The Gold view's tree data (src/extension/views/goldModel.ts) and storing an inspector mark
// (src/extension/goldMarks.ts): grouping per question, lost spans kept and counted, corrupt lines
// listed; a node mark re-reads its text and fingerprint from the file and is stored once.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { relocateAll } from '../../../src/core/annotate/relocate';
import { annotationsPath, AnnotationStore, contextFingerprint, makeAnnotation } from '../../../src/core/annotate/store';
import { addGoldMark } from '../../../src/extension/goldMarks';
import { anchorLocation, goldTree, type GoldEntry, type GoldQuestion } from '../../../src/extension/views/goldModel';

const source = '# Title\n\nAlpha beta gamma. Delta epsilon zeta. Eta theta iota.\n';
const span = (text: string) => {
  const s = source.indexOf(text);
  return { file: 'docs/a.md', charStart: s, charEnd: s + text.length, startLine: 3, startColumn: s - 9, endLine: 3, endColumn: s - 9 + text.length };
};

describe('Gold view tree data', () => {
  it('groups by question (dataset id first), newest question first, lost spans listed and counted', async () => {
    const a1 = makeAnnotation({ question: 'Q one?', anchor: span('Delta epsilon zeta.'), text: 'Delta epsilon zeta.', context: contextFingerprint(source, span('Delta epsilon zeta.').charStart, span('Delta epsilon zeta.').charEnd), source: 'editor', time: '2026-01-01T00:00:00Z' });
    const a2 = makeAnnotation({ question: 'Q one?', anchor: span('Alpha beta gamma.'), text: 'Alpha beta gamma.', source: 'editor', time: '2026-01-02T00:00:00Z' });
    const lost = makeAnnotation({ question: 'Q two?', anchor: { file: 'docs/a.md', charStart: 0, charEnd: 12 }, text: 'Text that is no longer anywhere', source: 'inspector', time: '2026-01-03T00:00:00Z' });
    const byId = makeAnnotation({ question: 'Q one? (reworded)', questionId: 'x1', anchor: span('Eta theta iota.'), text: 'Eta theta iota.', source: 'import', time: '2025-12-01T00:00:00Z' });
    const edited = source.replace('# Title\n\n', '# Title\n\nA new first line.\n\n');
    const relocations = await relocateAll([a1, a2, lost, byId], async () => edited);
    const nodes = goldTree(relocations, [{ file: 'annotations.jsonl', line: 7, reason: 'bad JSON', raw: '{' }]);
    assert.deepEqual(
      nodes.map((n) => n.kind),
      ['question', 'question', 'question', 'corrupt'],
    );
    const [two, one, idq] = nodes as GoldQuestion[];
    assert.equal(two!.question, 'Q two?');
    assert.equal(two!.lost, 1);
    assert.equal(two!.entries[0]!.status, 'lost');
    assert.match(two!.entries[0]!.description, /lost/);
    assert.equal(one!.question, 'Q one?');
    assert.equal(one!.entries.length, 2);
    // Sorted by position; both moved down by the inserted line and re-located.
    assert.deepEqual(
      one!.entries.map((e: GoldEntry) => e.annotation.text),
      ['Alpha beta gamma.', 'Delta epsilon zeta.'],
    );
    for (const e of one!.entries) {
      assert.equal(e.status, 'moved');
      assert.equal(edited.slice(e.anchor.charStart, e.anchor.charEnd), e.annotation.text);
      assert.equal(e.anchor.startLine, 5);
    }
    assert.equal(idq!.key, 'id:x1');
    assert.match((nodes[3] as { label: string }).label, /line 7: bad JSON/);
    assert.equal(anchorLocation({ file: 'r.pdf', page: 2 }), 'r.pdf p.3');
    assert.equal(anchorLocation({ file: 't.csv', row: 4 }), 't.csv row 5');
  });

  it('stores an inspector mark once, with the text and fingerprint read from the file; a PDF box as is', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'canopy-goldmark-'));
    try {
      await mkdir(path.join(root, 'docs'));
      await writeFile(path.join(root, 'docs', 'a.md'), source);
      const anchor = span('Delta epsilon zeta.');
      const first = await addGoldMark(root, { question: 'Q?', anchor, text: 'stale text from the trace', source: 'inspector' }, 'me', '2026-01-01T00:00:00Z');
      assert.equal(first.added, true);
      assert.equal(first.annotation.text, 'Delta epsilon zeta.');
      assert.equal(first.annotation.context.before.endsWith('gamma. '), true);
      assert.equal(first.annotation.source, 'inspector');
      const again = await addGoldMark(root, { question: 'Q?', anchor, source: 'inspector' }, 'me');
      assert.equal(again.added, false);
      const pdf = await addGoldMark(root, { question: 'Q?', anchor: { file: 'r.pdf', page: 1, bbox: [10, 20, 200, 80] }, text: 'page text', source: 'pdf' }, 'me');
      assert.equal(pdf.added, true);
      const { annotations } = await new AnnotationStore(annotationsPath(root)).read();
      assert.deepEqual(
        annotations.map((a) => [a.source, a.file, a.anchor.bbox ?? null]),
        [
          ['inspector', 'docs/a.md', null],
          ['pdf', 'r.pdf', [10, 20, 200, 80]],
        ],
      );
      await assert.rejects(addGoldMark(root, { question: 'Q?', anchor: { ...anchor, charEnd: 10_000 }, source: 'inspector' }, 'me'), /docs\/a\.md changed since the answer/);
      await assert.rejects(addGoldMark(root, { question: 'Q?', anchor: { ...anchor, file: 'docs/missing.md' }, source: 'inspector' }, 'me'), /docs\/missing\.md cannot be read/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
