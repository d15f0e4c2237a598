// `canopy eval --adapter <checkpoint>`: node scores go through the adapter in the given-items
// mode (the figures change and the report names the checkpoint), and a checkpoint trained on
// another encoder fails the run with the file named instead of reporting untrained figures.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runEval, type EvalOptions } from '../../../src/eval/harness';
import { makeCheckpoint, saveCheckpoint } from '../../../src/core/train/checkpoint';
import { seededRandom } from '../../../src/core/random';
import { initLowRank } from '../../../src/core/train/lowRank';

const fx = (p: string) => fileURLToPath(new URL(`../../fixtures/eval/${p}`, import.meta.url));
const modelDir = fileURLToPath(new URL('../../../models/use-lite', import.meta.url));

describe('eval --adapter', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-eval-adapter-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const options = (o: Partial<EvalOptions> = {}): EvalOptions => ({
    file: fx('hotpotqa/dev.jsonl'),
    mode: 'given',
    topK: 10,
    rounds: 1,
    branching: 2,
    compressor: 'canopy',
    critic: 'none',
    retrieval: 'hybrid',
    encoder: { kind: 'builtin' },
    builtinModelDir: modelDir,
    seed: 1,
    resamples: 50,
    sweep: false,
    cacheDir: join(dir, 'cache'),
    peerChunkSize: 16,
    ...o,
  });

  it('scores nodes through the checkpoint and names it in the report', async () => {
    const plain = await runEval(options());
    const w = initLowRank(512, 4, 3);
    const rand = seededRandom(5);
    for (let i = 0; i < w.A.length; i++) w.A[i] = (rand() * 2 - 1) * 2;
    const c = makeCheckpoint(w, { baseEncoderId: plain.settings.encoder, trainedOn: { questions: 0, annotations: 0, pairs: 0, validationPairs: 0 }, metrics: {} });
    const file = await saveCheckpoint(join(dir, 'adapters'), c);
    const adapted = await runEval(options({ adapter: file }));
    assert.equal(adapted.settings.adapter, `${c.id} (${file})`);
    assert.equal(plain.settings.adapter, undefined);
    const tokens = (r: typeof plain) => r.results.rows[0]!.metrics.tokens!.value;
    assert.notEqual(tokens(adapted), tokens(plain), 'a strong adapter changes what the projection keeps');

    const foreign = join(dir, 'foreign.json');
    writeFileSync(foreign, JSON.stringify({ ...c, baseEncoderId: 'another-encoder' }));
    await assert.rejects(runEval(options({ adapter: foreign })), /foreign\.json: Adapter adapter-\w+ was trained on encoder another-encoder/);
  });
});
