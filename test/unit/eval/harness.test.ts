// The harness end to end on the hand-made slices, with the real built-in encoder: the given-items
// sweep, the open pool with critic rounds (indexed and cached), single configurations, the
// errors a user can hit, the CLI command, and the SVG figures.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';
import { parseRetrieval, runEval, type EvalOptions, type EvalReport } from '../../../src/eval/harness';
import { renderReport, writePlots } from '../../../src/eval/render';

const fx = (p: string) => fileURLToPath(new URL(`../../fixtures/eval/${p}`, import.meta.url));
const modelDir = fileURLToPath(new URL('../../../models/use-lite', import.meta.url));

function options(cacheDir: string, o: Partial<EvalOptions> & Pick<EvalOptions, 'file'>): EvalOptions {
  return {
    mode: 'given',
    topK: 10,
    rounds: 3,
    branching: 2,
    compressor: 'canopy',
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

const row = (r: EvalReport, config: string) => {
  const found = r.results.rows.find((x) => x.config === config);
  assert.ok(found, `row ${config} in ${r.results.rows.map((x) => x.config).join(', ')}`);
  return found.metrics;
};

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

describe('eval harness', () => {
  let cache: string;
  before(() => {
    cache = mkdtempSync(join(tmpdir(), 'canopy-eval-cache-'));
  });
  after(() => rmSync(cache, { recursive: true, force: true }));

  it('given items, sweep: every baseline and CANOPY variant side by side, with intervals', async () => {
    const report = await runEval(options(cache, { file: fx('hotpotqa/dev.jsonl'), sweep: true, sweepOptions: { flatM: [1, 2, 4, 8], thresholds: [0.3] } }));
    assert.equal(report.dataset.schema, 'hotpotqa');
    assert.equal(report.dataset.questions, 2);
    const ids = report.results.rows.map((r) => r.config);
    assert.deepEqual(ids, ['none', 'flat:1', 'flat:2', 'flat:4', 'flat:8', 'threshold:0.3', 'canopy B=2', 'canopy B=3', 'canopy B=4', 'canopy:gate=0.1 B=2', 'canopy:groups=encoded B=2', 'canopy:margin=0.05 B=2', 'peer']);
    const none = row(report, 'none');
    assert.equal(none.goldRecall!.value, 1);
    assert.equal(none.tokenShare!.value, 1);
    assert.equal(none.answerBearing!.value, 1, 'the answer of q1 occurs in its context (q2 has a yes/no-free name answer too)');
    const flat1 = row(report, 'flat:1');
    assert.ok(flat1.tokens!.value < row(report, 'flat:8').tokens!.value);
    assert.equal(flat1.regions!.value, 1);
    const canopy = row(report, 'canopy B=2');
    assert.ok(canopy.refinement!.n > 0, 'refinement decisions are counted for CANOPY');
    assert.equal(none.refinement!.n, 0, 'no compressor but CANOPY makes refinement decisions');
    const peer = row(report, 'peer');
    assert.ok(peer.tokens!.value <= canopy.tokens!.value + 1e-9, 'the peer gets CANOPY’s budget at most');
    for (const m of Object.values(canopy)) assert.ok(m.lo <= m.value + 1e-12 && m.value <= m.hi + 1e-12);
    assert.ok(report.results.comparisons.some((c) => c.config === 'canopy B=2'));
    // A rerun reads every vector from the cache and prints the same numbers.
    const again = await runEval(options(cache, { file: fx('hotpotqa/dev.jsonl'), sweep: true, sweepOptions: { flatM: [1, 2, 4, 8], thresholds: [0.3] } }));
    assert.equal(again.timing.encodedTexts, 0);
    assert.deepEqual(again.results.rows, report.results.rows);
    const text = renderReport(report).join('\n');
    assert.match(text, /\| canopy B=2 \| \d/);
    const dir = join(cache, 'plots');
    const files = writePlots(report, dir, 'eval-test');
    assert.deepEqual(files.map((f) => f.slice(dir.length + 1)), ['eval-test-quality-tokens.svg']);
    const svg = readFileSync(files[0]!, 'utf8');
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(svg, /<polyline[^>]+points="(?:[\d.]+,[\d.]+ ){3}[\d.]+,[\d.]+"/, 'the flat curve is a line through its 4 points');
    assert.match(svg, /canopy B=2/);
  });

  it('open pool: real index (cached), hybrid retrieval, critic rounds, retrieval metrics by round', async () => {
    const o = options(cache, { file: fx('hotpotqa/dev.jsonl'), mode: 'pool', critic: 'rule', sweep: true, sweepOptions: { flatM: [2, 4], thresholds: [] } });
    const report = await runEval(o);
    assert.ok(report.timing.indexSeconds !== undefined, 'the first run builds the pool index');
    const ids = report.results.rows.map((r) => r.config);
    assert.deepEqual(ids, ['none', 'flat:2', 'flat:4', 'canopy B=2', 'canopy B=2 R=3 rule critic', 'none R=3 rule critic', 'canopy:gate=0.1 B=2 R=3 rule critic', 'peer']);
    const full = row(report, 'canopy B=2 R=3 rule critic');
    // Eight documents, k = 10: every gold paragraph is retrieved in round 1.
    assert.equal(full['recall@10']!.value, 1);
    assert.equal(full['allGold@10']!.value, 1);
    assert.equal(full['allGoldEvidence.r1']!.value, 1);
    assert.ok(full['ndcg@10']!.value > 0 && full['ndcg@10']!.value <= 1);
    assert.ok(full['IE@5']!.value > 0);
    assert.ok(full.goldRecall!.n === 2);
    assert.equal(row(report, 'none').goldRecall!.value, 1);
    assert.ok(row(report, 'peer')['recall@10']!.value > 0);
    const again = await runEval(o);
    assert.equal(again.timing.indexSeconds, undefined, 'the rerun reopens the cached index');
    assert.deepEqual(again.results.rows, report.results.rows);
    const files = writePlots(report, join(cache, 'plots2'), 'p');
    assert.ok(files.some((f) => f.endsWith('p-rounds.svg')));
  });

  it('tables: TAT-QA and FeTaQA rows as gold, one configuration', async () => {
    const tat = await runEval(options(cache, { file: fx('tatqa/dev.jsonl'), compressor: 'flat:1' }));
    assert.deepEqual(
      tat.results.rows.map((r) => r.config),
      ['flat:1'],
    );
    assert.equal(tat.results.rows[0]!.metrics.goldRecall!.n, 2, 'two questions have row or span gold');
    const feta = await runEval(options(cache, { file: fx('fetaqa/dev.jsonl'), compressor: 'none' }));
    assert.equal(feta.results.rows[0]!.metrics.goldRecall!.value, 1);
    assert.equal(feta.results.rows[0]!.metrics.answerBearing, undefined, 'a free-form answer is not looked for');
  });

  it('SQuAD, SciFact, MuSiQue and annotations run in the given mode', async () => {
    for (const f of ['squad/questions.jsonl', 'scifact/queries.jsonl', 'musique/dev.jsonl', 'annotation/ws/annotations.jsonl', '2wiki/dev.jsonl']) {
      const r = await runEval(options(cache, { file: fx(f), compressor: 'none' }));
      const m = r.results.rows[0]!.metrics;
      const recall = m.goldRecall ?? m.paragraphRecall;
      assert.equal(recall!.value, 1, `${f}: no compression keeps all gold`);
    }
  });

  it('given items: node-vector variants side by side, each paired with the product’s vectors', async () => {
    const report = await runEval(options(cache, { file: fx('tatqa/dev.jsonl'), compressor: ['canopy:nodes=text', 'canopy:nodes=prefix', 'canopy:nodes=children'] }));
    // The product's configuration joins the run, before the first variant, as their reference.
    assert.deepEqual(
      report.results.rows.map((r) => r.config),
      ['canopy B=2', 'canopy:nodes=text B=2', 'canopy:nodes=prefix B=2', 'canopy:nodes=children B=2'],
    );
    for (const id of ['canopy:nodes=text B=2', 'canopy:nodes=prefix B=2', 'canopy:nodes=children B=2']) {
      const v = report.results.comparisons.find((c) => c.config === id)?.versusBase;
      assert.ok(v, `${id} is compared with the product`);
      assert.equal(v.base, 'canopy B=2');
      const diff = row(report, id).tokens!.value - row(report, 'canopy B=2').tokens!.value;
      assert.ok(Math.abs(v.tokens.value - diff) < 1e-9, 'the paired token difference is the difference of the means');
    }
    assert.match(renderReport(report).join('\n'), /canopy:nodes=children B=2 − canopy B=2 \(paired\): -?\d/);
  });

  it('errors: a missing adapter checkpoint, a pool the schema lacks, groups=encoded in the pool', async () => {
    // An unusable checkpoint fails the evaluation (never silently the untrained figures), naming the file.
    await assert.rejects(runEval(options(cache, { file: fx('hotpotqa/dev.jsonl'), adapter: 'ckpt-3.json' })), /Cannot read adapter checkpoint ckpt-3\.json/);
    await assert.rejects(runEval(options(cache, { file: fx('tatqa/dev.jsonl'), mode: 'pool' })), /no open pool for tatqa/);
    await assert.rejects(runEval(options(cache, { file: fx('hotpotqa/dev.jsonl'), mode: 'pool', compressor: 'canopy:groups=encoded' })), /given-items mode only/);
    await assert.rejects(runEval(options(cache, { file: fx('hotpotqa/dev.jsonl'), mode: 'pool', compressor: 'canopy:nodes=text' })), /given-items mode only/);
  });

  it('the CLI: --json prints one report; bad flags print the help', async () => {
    let io = capture();
    assert.equal(await main(['eval', fx('squad/questions.jsonl'), '--json', '--limit', '1', '--resamples', '50', '--cache', cache, '--compressor', 'flat:1'], io), 0, io.stderr.join('\n'));
    const report = JSON.parse(io.stdout.join('\n')) as EvalReport;
    assert.equal(report.dataset.questions, 1);
    assert.equal(report.dataset.limit, 1);
    assert.equal(report.settings.seed, 1);
    io = capture();
    assert.equal(await main(['eval', fx('squad/questions.jsonl'), '--mode', 'sideways'], io), 2);
    assert.match(io.stderr.join('\n'), /--mode must be given or pool[\s\S]*Usage: canopy eval/);
    io = capture();
    assert.equal(await main(['eval', fx('squad/questions.jsonl'), '--compressor', 'zip'], io), 2);
    io = capture();
    assert.equal(await main(['eval', fx('bad/bad-field.jsonl'), '--cache', cache], io), 1);
    assert.match(io.stderr.join('\n'), /bad-field\.jsonl:3: field "question" must be a string \(E_BAD_INPUT\)/);
    io = capture();
    assert.equal(await main(['eval', fx('hotpotqa/dev.jsonl'), '--cache', cache, '--adapter', 'a.ckpt'], io), 1);
    assert.match(io.stderr.join('\n'), /adapter checkpoint \S*a\.ckpt/);
    io = capture();
    assert.equal(await main(['eval', fx('hotpotqa/dev.jsonl'), '--reader', 'llm'], io), 2);
    assert.match(io.stderr.join('\n'), /CANOPY_LLM_BASE_URL/);
    assert.ok(readdirSync(cache).length > 0);
  });
});

describe('retrieval variants', () => {
  it('parses the retrieval choices; a BM25 weight of 1 ranks like the equal-weight RRF', async () => {
    assert.deepEqual(parseRetrieval('hybrid'), { dense: true, bm25: true });
    assert.deepEqual(parseRetrieval('hybrid:rrf'), { dense: true, bm25: true, fusion: { kind: 'rrf', rrfK: 60 } });
    assert.deepEqual(parseRetrieval('bm25'), { dense: false, bm25: true, fusion: { kind: 'rrf', rrfK: 60 } });
    assert.deepEqual(parseRetrieval('hybrid:bm25=2'), { dense: true, bm25: true, fusion: { kind: 'rrf', rrfK: 60, bm25Weight: 2 } });
    assert.deepEqual(parseRetrieval('hybrid:linear=0.3'), { dense: true, bm25: true, fusion: { kind: 'linear', dense: 0.3, depth: 100 } });
    assert.deepEqual(parseRetrieval('hybrid:linear=0.15,flat=0.6'), { dense: true, bm25: true, fusion: { kind: 'linear', dense: 0.15, depth: 100, flat: 0.6 } });
    assert.equal(parseRetrieval('hybrid:linear=0.15,flat=1.5'), undefined, 'the flat weight is a share');
    assert.equal(parseRetrieval('sparse'), undefined);
    const cache = mkdtempSync(join(tmpdir(), 'canopy-eval-w-'));
    try {
      const base = options(cache, { file: fx('hotpotqa/dev.jsonl'), mode: 'pool', compressor: 'none', critic: 'none', topK: 3, retrieval: 'hybrid:rrf' });
      const plain = await runEval(base);
      const weighted = await runEval({ ...base, retrieval: 'hybrid:bm25=1' });
      assert.deepEqual(weighted.results.rows[0]!.metrics['recall@3'], plain.results.rows[0]!.metrics['recall@3']);
      assert.deepEqual(weighted.results.rows[0]!.metrics['ndcg@10'], plain.results.rows[0]!.metrics['ndcg@10']);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

describe('EM / F1 with an LLM reader', () => {
  it('asks the model for a short answer from the kept evidence and scores it with HotpotQA normalisation', async () => {
    const prompts: string[] = [];
    const llm = {
      id: 'fake:short',
      remote: false,
      async chat(messages: Array<{ role: string; content: string }>) {
        prompts.push(messages[messages.length - 1]!.content);
        return { text: 'The Saltmere\nextra line', model: 'fake', attempts: 1, ms: 1 };
      },
    };
    const cache = mkdtempSync(join(tmpdir(), 'canopy-eval-llm-'));
    try {
      const r = await runEval({ ...options(cache, { file: fx('hotpotqa/dev.jsonl'), compressor: 'none' }), llm });
      const m = r.results.rows[0]!.metrics;
      // q1's answer is Saltmere (EM 1), q2's is Ada Fenwick (EM 0, F1 0).
      assert.equal(m.em!.value, 0.5);
      assert.equal(m.f1!.value, 0.5);
      assert.equal(r.settings.reader, 'llm:fake:short');
      assert.equal(prompts.length, 2);
      assert.match(prompts[0]!, /Marrow Lake is a glacial lake[\s\S]*Question: At which port town/);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
