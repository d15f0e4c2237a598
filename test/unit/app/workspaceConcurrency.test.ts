// Questions asked at once on a fresh workspace share one index open and one encoder/cache load
// (the load test on a 10,785-file index had loaded the 232 MB embedding cache once per question).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CanopyWorkspace } from '../../../src/core/app/workspace';
import { resolveSettings } from '../../../src/core/config/settings';
import { EmbeddingCache } from '../../../src/core/encode/cache';

const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
const modelDir = fileURLToPath(new URL('../../../models/use-lite', import.meta.url));

let indexDir: string;
const open = () =>
  new CanopyWorkspace({ root: demo, indexDir, settings: resolveSettings({ topK: 3, maxRounds: 1 }), encoder: { kind: 'builtin' }, builtinModelDir: modelDir });

before(async () => {
  indexDir = mkdtempSync(join(tmpdir(), 'canopy-concurrency-'));
  const ws = open();
  await ws.index();
  await ws.dispose();
});

after(() => rmSync(indexDir, { recursive: true, force: true }));

describe('concurrent first use of a workspace', () => {
  it('opens the index once for concurrent callers', async () => {
    const ws = open();
    try {
      const opened = await Promise.all(Array.from({ length: 6 }, () => ws.openIndex()));
      assert.ok(opened.every((c) => c === opened[0]), 'every caller got the same CorpusIndex');
    } finally {
      await ws.dispose();
    }
  });

  it('loads the encoder and embedding cache once when questions arrive together', async () => {
    const ws = open();
    const realOpen = EmbeddingCache.open.bind(EmbeddingCache);
    let opens = 0;
    (EmbeddingCache as unknown as { open: typeof EmbeddingCache.open }).open = async (...args) => {
      opens++;
      return realOpen(...args);
    };
    try {
      const traces = await Promise.all(['Which plot lost ash trees?', 'When was the P6 battery replaced?', 'What was planted on the north plot?'].map((q) => ws.ask(q, { critic: 'none' })));
      assert.equal(traces.length, 3);
      assert.ok(traces.every((t) => t.rounds.length === 1));
      assert.equal(opens, 1, 'the embedding cache was opened once');
    } finally {
      (EmbeddingCache as unknown as { open: typeof EmbeddingCache.open }).open = realOpen;
      await ws.dispose();
    }
  });
});
