// Questions asked at once on fresh services share one index open and one encoder/cache load
// (the load test on a 10,785-file index had loaded the 232 MB embedding cache once per question).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EmbeddingCache } from '../../../src/core/encode/cache';
import { openServices } from '../../helpers/services';

const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));

let indexDir: string;
const open = () => openServices({ root: demo, indexDir, settings: { topK: 3, maxRounds: 1 } });

before(async () => {
  indexDir = mkdtempSync(join(tmpdir(), 'canopy-concurrency-'));
  const ws = open();
  await ws.index.index(ws.settings);
  await ws.close();
});

after(() => rmSync(indexDir, { recursive: true, force: true }));

describe('concurrent first use of a workspace', () => {
  it('opens the index once for concurrent callers', async () => {
    const ws = open();
    try {
      const opened = await Promise.all(Array.from({ length: 6 }, () => ws.index.corpus(ws.settings)));
      assert.ok(opened.every((c) => c === opened[0]), 'every caller got the same CorpusIndex');
    } finally {
      await ws.close();
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
      const answers = await Promise.all(['Which plot lost ash trees?', 'When was the P6 battery replaced?', 'What was planted on the north plot?'].map((q) => ws.ask.ask(q, ws.settings, { critic: 'none' })));
      const traces = answers.map((a) => a.trace);
      assert.equal(traces.length, 3);
      assert.ok(traces.every((t) => t.rounds.length === 1));
      assert.equal(opens, 1, 'the embedding cache was opened once');
    } finally {
      (EmbeddingCache as unknown as { open: typeof EmbeddingCache.open }).open = realOpen;
      await ws.close();
    }
  });
});
