// After training, a question asked again is compared with its saved answer when what compresses
// it changed (adapter, compressor, node score) — and only then (issue 36).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { TraceSummary } from '../../../src/contracts/savedTrace';
import type { AskTrace } from '../../../src/contracts/trace';
import { answerBeforeTraining, trainedChanges } from '../../../src/extension/trainedCompare';

const demo = JSON.parse(readFileSync('test/fixtures/traces/demo-v1.json', 'utf8')) as AskTrace;

function variant(id: string, createdAt: string, settings: Partial<AskTrace['settings']>): AskTrace {
  return { ...demo, id, createdAt, settings: { ...demo.settings, ...settings } };
}

const summary = (t: AskTrace, extra: Partial<TraceSummary> = {}): TraceSummary => ({ name: `${t.id}.json`, id: t.id, question: t.question, createdAt: t.createdAt, mode: t.answer.mode, evidenceTokens: t.totals.evidenceTokens, ...extra });

describe('the answer before training', () => {
  const before = variant('before', '2026-12-01T10:00:00.000Z', {});
  const after = variant('after', '2026-12-01T11:00:00.000Z', { adapterId: 'adapter-1234', compressor: { name: 'canopy', items: 0.3, minItems: 4, glimpse: 1 } });
  const read = async (name: string) => [before, after].find((t) => `${t.id}.json` === name)!;

  it('names what training changed', () => {
    assert.deepEqual(trainedChanges(before, before), []);
    assert.deepEqual(trainedChanges(before, after), [`adapter ${demo.settings.adapterId ?? 'none'} → adapter-1234`, 'compressor']);
  });

  it('finds the newest earlier answer to the same question when the trained settings differ', async () => {
    const older = variant('older', '2026-12-01T09:00:00.000Z', {});
    const saved = [summary(older), summary(before), summary(after)];
    const found = await answerBeforeTraining(after, saved, async (n) => (n === 'older.json' ? older : read(n)));
    assert.equal(found?.id, 'before');
  });

  it('finds none when nothing training changes differs, for another question, or for a replay', async () => {
    const same = variant('same', '2026-12-01T12:00:00.000Z', {});
    assert.equal(await answerBeforeTraining(same, [summary(before), summary(same)], async () => before), undefined);
    assert.equal(await answerBeforeTraining(after, [summary(before, { question: 'another question' })], read), undefined);
    assert.equal(await answerBeforeTraining(after, [summary(before, { replayOf: 'x' })], read), undefined);
  });
});
