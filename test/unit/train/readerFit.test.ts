// The reader model fitted to a workspace's gold spans (src/core/train/readerFit.ts): each
// annotated question's file compressed as an ask would, its leaves labelled by the gold spans,
// the built-in model fine-tuned towards them and written beside the index only when it puts [1]
// on a gold span for more held-back questions — and the AskService's reader then uses it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { defaultSettings, canopyCompressor } from '../../../src/core/config/settings';
import { LinearModel } from '../../../src/core/judge/linearModel';
import type { PreparedQuestion } from '../../../src/core/train/report';
import { fitReader, MIN_READER_HELD_BACK, READER_MODEL_FILE, readWorkspaceReaderModel } from '../../../src/core/train/readerFit';
import type { Anchor, Item, RegionNode } from '../../../src/contracts/region';

const base = LinearModel.from(JSON.parse(readFileSync(join(__dirname, '../../fixtures/judge/reader.json'), 'utf8')), 'fixture');
const unit = (x: number, y: number) => {
  const n = Math.hypot(x, y);
  return new Float32Array([x / n, y / n]);
};

/**
 * A question whose answer is the sentence nearest the question's vector but naming none of its
 * words, beside one that repeats the question's words and says nothing (the fixture model, which
 * weighs words over the cosine, quotes the repeating one).
 */
function question(i: number): PreparedQuestion {
  const file = `notes/q${i}.md`;
  const words = `valve pressure reading ${i}`;
  const texts = [`The ${words} was logged on the panel every morning.`, `It settled at ${40 + i} kilopascals after the pump change.`];
  let at = 0;
  const leaves: RegionNode[] = texts.map((text, k) => {
    const anchor: Anchor = { file, charStart: at, charEnd: at + text.length };
    at += text.length + 1;
    return { id: `${file}#0/0.0.${k}`, kind: 'sentence', modality: 'text', text, anchor, children: [] };
  });
  const paragraph: RegionNode = { id: `${file}#0/0.0`, kind: 'paragraph', modality: 'text', text: texts.join(' '), anchor: { file, charStart: 0, charEnd: at - 1 }, children: leaves };
  const root: RegionNode = { id: `${file}#0/0`, kind: 'document', modality: 'text', text: paragraph.text, anchor: { file }, children: [paragraph] };
  const item: Item = { id: `${file}#0`, file, title: `Notes ${i}`, modality: 'text', root };
  const vectors = new Map<string, Float32Array>([
    [leaves[0]!.id, unit(0.3, 0.95)],
    [leaves[1]!.id, unit(0.95, 0.3)],
    [paragraph.id, unit(0.6, 0.6)],
    [root.id, unit(0.6, 0.6)],
  ]);
  return { key: `q${i}`, question: `What was the ${words}?`, query: unit(1, 0), gold: [leaves[1]!.anchor], candidates: [{ item, vectors }], pairs: [] };
}

function run(n: number, heldBack: number) {
  const prepared = new Map<string, PreparedQuestion>();
  for (let i = 0; i < n; i++) prepared.set(`q${i}`, question(i));
  const keys = [...prepared.keys()];
  return { prepared, split: { kept: keys.slice(heldBack), heldBack: keys.slice(0, heldBack) } };
}

const options = (indexDir?: string) => ({ base, compressor: canopyCompressor(defaultSettings), nodeScore: { dense: 1, lexical: 0.5, model: 'coverage' as const }, tokens: bpeTokenCounter(), ...(indexDir ? { indexDir } : {}) });

describe('fitReader', () => {
  it('fine-tunes the model on the gold spans and writes it when [1] lands on gold for more held-back questions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'canopy-readerfit-'));
    try {
      const report = await fitReader(run(24, 8), options(dir));
      assert.equal(report.before.questions, 8);
      assert.equal(report.before.firstOnGold, 0, 'the fixture model quotes the sentence that repeats the question');
      assert.ok(report.after && report.after.firstOnGold > report.before.firstOnGold, JSON.stringify(report));
      assert.ok(report.written, report.reason);
      const loaded = await readWorkspaceReaderModel(dir);
      assert.equal(loaded.model?.id, report.written!.id);
      assert.deepEqual(loaded.model!.features, base.features, 'the same features, other weights');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes nothing with too few held-back questions to tell, or when not better', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'canopy-readerfit-'));
    try {
      const few = await fitReader(run(12, MIN_READER_HELD_BACK - 1), options(dir));
      assert.equal(few.written, undefined);
      assert.match(few.reason, /at least 5 are needed/);
      const none = await fitReader({ prepared: new Map(), split: { kept: [], heldBack: [] } }, options(dir));
      assert.equal(none.written, undefined);
      assert.match(none.reason, /no training question/);
      assert.deepEqual(await readWorkspaceReaderModel(dir), {}, 'no model file was written');
      writeFileSync(join(dir, READER_MODEL_FILE), '{"schema":"canopy.judge"}');
      assert.match((await readWorkspaceReaderModel(dir)).problem!, /not a usable judgment model/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
