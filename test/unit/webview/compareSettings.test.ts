/**
 * webview/views/compare.ts: the Compare tab's "settings that differ" names what training changed
 * (issue 36) — the adapter and the node score, not only the gate — and nothing that did not change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AskTrace } from '../../../src/contracts/trace';
import { diffTraces } from '../../../webview/views/compare';

function trace(settings: Record<string, unknown>): AskTrace {
  return {
    settings: {
      topK: 10,
      maxRounds: 3,
      branchingFactor: 2,
      compressor: { name: 'canopy', items: 0.3, minItems: 4, wholeBelow: 600, glimpse: 1 },
      critic: 'rule',
      reader: 'extractive',
      encoderId: 'use-lite',
      readerModel: 'reader-1',
      retrieval: { dense: true, bm25: true, topics: false, fusion: 'linear' },
      ...settings,
    },
    rounds: [],
    answer: { citations: [] },
    totals: { evidenceTokens: 0, uncompressedTokens: 0 },
  } as unknown as AskTrace;
}

test('the settings rows name the adapter and the node score a training run changed', () => {
  const before = trace({ nodeScore: { dense: 1, lexical: 0.5, model: 'coverage' } });
  const after = trace({ adapterId: 'adapter-da8365bda9ea', compressor: { name: 'canopy', items: 0.3, minItems: 4, glimpse: 1 } });
  const rows = diffTraces(before, after).settings;
  assert.deepEqual(
    rows.map((r) => r.name),
    ['compressor', 'adapter', 'node score'],
  );
  assert.deepEqual(rows.find((r) => r.name === 'adapter'), { name: 'adapter', a: 'none', b: 'adapter-da8365bda9ea' });
  assert.deepEqual(rows.find((r) => r.name === 'node score'), { name: 'node score', a: '1 × dense + 0.5 × lexical (coverage)', b: 'dense cosine' });
  assert.deepEqual(diffTraces(before, before).settings, [], 'the same settings: no row');
});
