// `canopy eval --mode pool --topics-ablation` on a small generated SciFact-format slice, with
// the real built-in encoder, pool index, topic fit, scorer training and ask pipeline: four
// configurations (hybrid, no selection, no abstraction, full) on the held-back questions only,
// IE/precision/recall at 1/3/5 with intervals, paired differences against the hybrid, and the
// protocol recorded. A single --topics variant and the usage errors too.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';
import { runEval, type EvalOptions } from '../../../src/eval/harness';
import { runTopicsBench } from '../../../src/eval/bench/topicsBench';
import { topicVariants } from '../../../src/eval/topicsAblation';
import { BUILTIN_PROFILE, describeFusion } from '../../../src/core/retrieve/profile';

const modelDir = fileURLToPath(new URL('../../../models/use-lite', import.meta.url));

const themes = [
  ['zinc', 'wound', 'healing', 'skin', 'repair'],
  ['sleep', 'memory', 'dream', 'night', 'recall'],
  ['tea', 'blood', 'pressure', 'heart', 'vessel'],
  ['soil', 'nitrogen', 'crop', 'yield', 'farm'],
  ['virus', 'vaccine', 'immune', 'antibody', 'infection'],
  ['glacier', 'ice', 'melt', 'climate', 'sea'],
];

/** 36 abstracts (6 themes × 6) and 24 claims, each citing one abstract. */
function writeSlice(dir: string): string {
  const corpus: string[] = [];
  const queries: string[] = [];
  const qrels = ['query-id\tcorpus-id\tscore'];
  let q = 0;
  themes.forEach((w, t) => {
    for (let i = 0; i < 6; i++) {
      const id = `${t}${i}`;
      const s1 = `The ${w[i % 5]} study ${i} measured ${w[(i + 1) % 5]} in ${w[(i + 2) % 5]} samples.`;
      const s2 = `Higher ${w[(i + 3) % 5]} was linked to ${w[(i + 4) % 5]} after trial ${i}.`;
      const text = `${s1} ${s2}`;
      corpus.push(JSON.stringify({ _id: id, title: `${w[i % 5]} and ${w[(i + 3) % 5]} ${i}`, text, sentence_spans: [[0, s1.length], [s1.length + 1, text.length]], structured: false }));
      if (i < 4) {
        q++;
        queries.push(JSON.stringify({ _id: String(q), text: `${w[(i + 3) % 5]} is linked to ${w[(i + 4) % 5]} in trial ${i}.`, split: 'train', cited_doc_ids: [id], evidence: {} }));
        qrels.push(`${q}\t${id}\t1`);
      }
    }
  });
  mkdirSync(join(dir, 'qrels'), { recursive: true });
  writeFileSync(join(dir, 'corpus-00.jsonl'), `${corpus.join('\n')}\n`);
  writeFileSync(join(dir, 'queries.jsonl'), `${queries.join('\n')}\n`);
  writeFileSync(join(dir, 'qrels', 'train.tsv'), `${qrels.join('\n')}\n`);
  return join(dir, 'queries.jsonl');
}

function options(cacheDir: string, file: string, o: Partial<EvalOptions> = {}): EvalOptions {
  return {
    file,
    mode: 'pool',
    topK: 5,
    rounds: 1,
    branching: 2,
    compressor: 'none',
    critic: 'none',
    retrieval: 'hybrid',
    encoder: { kind: 'builtin' },
    builtinModelDir: modelDir,
    seed: 1,
    resamples: 100,
    sweep: false,
    cacheDir,
    peerChunkSize: 16,
    ...o,
  };
}

describe('eval: topic-compass ablation (pool mode)', () => {
  let data: string;
  let cache: string;
  let file: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'canopy-topics-data-'));
    cache = mkdtempSync(join(tmpdir(), 'canopy-topics-cache-'));
    file = writeSlice(data);
  });
  after(() => {
    rmSync(data, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('runs hybrid, no selection, no abstraction and full on the held-back questions, with IE/P/R@1,3,5 and paired differences', async () => {
    const report = await runEval(options(cache, file, { topicsAblation: true, topicsHoldout: 0.5 }));
    assert.deepEqual(
      report.results.rows.map((r) => r.config.split(' topics=')[1]),
      [...topicVariants],
    );
    assert.equal(report.dataset.totalQuestions, 24);
    assert.equal(report.dataset.questions, 12, 'only the held-back half is evaluated');
    const t = report.diagnostics.topics as Record<string, unknown> & { trainQuestions: number; heldOutQuestions: number; k: number; minusHybrid: Record<string, Record<string, { value: number; lo: number; hi: number }>>; heldOutRerankIE: Record<string, Record<string, number>> };
    assert.equal(t.trainQuestions + t.heldOutQuestions, 24);
    assert.equal(t.k, 8, 'K by corpus size: √36 clamped to at least 8');
    for (const row of report.results.rows) {
      for (const key of ['IE@1', 'IE@3', 'IE@5', 'P@1', 'P@3', 'P@5', 'R@1', 'R@3', 'R@5']) {
        const m = row.metrics[key];
        assert.ok(m && Number.isFinite(m.value) && m.lo <= m.value && m.value <= m.hi, `${row.config} ${key}`);
      }
      // One gold document per claim: IE@1 = P@1 × R@1 = P@1.
      assert.ok(Math.abs(row.metrics['IE@1']!.value - row.metrics['P@1']!.value) < 1e-9);
    }
    const diffs = Object.keys(t.minusHybrid).map((c) => c.split(' topics=')[1]);
    assert.deepEqual(diffs, ['control', 'noselect', 'noabstract', 'full']);
    assert.deepEqual(Object.keys(t.minusControl as object).map((c) => c.split(' topics=')[1]), ['noselect', 'noabstract', 'full']);
    // A paired difference equals the difference of the two rows' means.
    const full = report.results.rows.find((r) => r.config.endsWith('topics=full'))!;
    const off = report.results.rows.find((r) => r.config.endsWith('topics=off'))!;
    const d = Object.entries(t.minusHybrid).find(([c]) => c.endsWith('topics=full'))![1]['IE@3']!;
    assert.ok(Math.abs(d.value - (full.metrics['IE@3']!.value - off.metrics['IE@3']!.value)) < 1e-9);
    // The pipeline's round-1 ranking agrees with re-ranking the candidates directly, and the
    // candidates the scorers re-rank are the default retrieval's (the encoder's profile): their
    // own order is the `off` row's ranking.
    assert.ok(Math.abs(t.heldOutRerankIE.full!['IE@1']! - full.metrics['IE@1']!.value) < 1e-9);
    for (const k of [1, 3, 5]) assert.ok(Math.abs(t.heldOutRerankIE.off![`IE@${k}`]! - off.metrics[`IE@${k}`]!.value) < 1e-4, `off IE@${k}`);
    assert.equal(t.candidates, `hybrid, ${describeFusion(BUILTIN_PROFILE.fusion)}, top 50`);
    // nDCG@10 is among the paired differences.
    assert.ok(Number.isFinite(t.minusHybrid[Object.keys(t.minusHybrid).find((c) => c.endsWith('topics=full'))!]!['ndcg@10']!.value));
    // The bank is cached with the pool index generation.
    const poolDir = readdirSync(cache).find((n) => n.startsWith('pool-'))!;
    assert.ok(readdirSync(join(cache, poolDir, 'index')).some((n) => /^topics-\d+\.bin$/.test(n)));
  });

  it('bench topics: hybrid and compass latency on the held-back questions, p50/p95 and per-query overhead', async () => {
    const r = await runTopicsBench({ file, cacheDir: cache, encoder: { kind: 'builtin' }, builtinModelDir: modelDir, topK: 5, seed: 1, holdout: 0.5, repeat: 2 });
    assert.equal(r.timedQuestions, 12);
    for (const l of [r.hybridMs, r.compassMs, r.overheadMs]) {
      assert.equal(l.n, 24, 'every held-back question, twice');
      assert.ok(Number.isFinite(l.p50) && l.p50 <= l.p95);
    }
    assert.ok(r.hybridMs.p50 > 0 && r.compassMs.p50 > 0);
    assert.equal(r.k, 8);
  });

  it('a single variant, the same split; topics are pool-only and the variant name is checked', async () => {
    const one = await runEval(options(cache, file, { topics: 'full', topicsHoldout: 0.5 }));
    assert.deepEqual(one.results.rows.map((r) => r.config.split(' topics=')[1]), ['full']);
    assert.equal(one.dataset.questions, 12);
    // Several variants by name, side by side, with the paired differences against the default.
    const some = await runEval(options(cache, file, { topics: ['off', 'control', 'full'], topicsHoldout: 0.5 }));
    assert.deepEqual(some.results.rows.map((r) => r.config.split(' topics=')[1]), ['off', 'control', 'full']);
    assert.deepEqual(Object.keys((some.diagnostics.topics as { minusHybrid: object }).minusHybrid).map((c) => c.split(' topics=')[1]), ['control', 'full']);
    await assert.rejects(runEval(options(cache, file, { mode: 'given', topics: 'full' })), /open-pool mode/);
    const err: string[] = [];
    const io: CliIO = { out: () => undefined, err: (l) => err.push(l), isTTY: false, env: {}, cwd: process.cwd() };
    assert.equal(await main(['eval', file, '--mode', 'pool', '--topics', 'sometimes'], io), 2);
    assert.match(err.join('\n'), /--topics must be one of off, control, noselect, noabstract, full/);
  });
});
