// Metric functions on hand-computed cases: retrieval (recall@k, all-gold, IE@k), answers
// (HotpotQA normalisation, EM, F1), refinement decisions on a hand-built tree, gold coverage,
// the equal-token interpolation, and the seeded paired bootstrap.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectItem } from '../../../src/core/compress/projection';
import type { RegionNode } from '../../../src/contracts/region';
import { bestAnswerScores, containsAnswer, exactMatch, f1Score, normalizeAnswer } from '../../../src/eval/answers';
import { BootstrapPlan, percentiles } from '../../../src/eval/bootstrap';
import { seededRandom } from '../../../src/core/random';
import { depthOf } from '../../../src/eval/given';
import { coveredLeaves, isCovered } from '../../../src/eval/gold';
import { allGoldAtK, ieAtK, ndcgAtK, precisionAtK, recallAtK } from '../../../src/core/retrieve/metrics';
import { answerIn, eligibleAnswers } from '../../../src/eval/outcome';
import { refinementDecisions } from '../../../src/core/compress/refinementDecisions';
import { interpolate } from '../../../src/eval/report';

const close = (a: number, b: number, eps = 1e-12) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

describe('retrieval metrics', () => {
  const gold = new Set(['a', 'b']);
  const ranked = ['x', 'a', 'y', 'a', 'b'];
  it('recall@k and precision@k dedupe the ranking and cut at k', () => {
    close(recallAtK(ranked, gold, 2), 0.5);
    close(recallAtK(ranked, gold, 4), 1); // x, a, y, b: the repeated a counts once
    close(precisionAtK(ranked, gold, 4), 0.5);
    close(precisionAtK(['a'], gold, 3), 1 / 3); // k slots even if fewer were returned
  });
  it('all-gold@k is 1 only when every gold document is in the top k', () => {
    assert.equal(allGoldAtK(ranked, gold, 3), 0);
    assert.equal(allGoldAtK(ranked, gold, 4), 1);
  });
  it('IE@k = P@k × R@k', () => {
    close(ieAtK(ranked, gold, 1), 0);
    close(ieAtK(ranked, gold, 3), (1 / 3) * 0.5);
    close(ieAtK(['a', 'b', 'c'], gold, 3), (2 / 3) * 1);
  });
  it('no gold: undefined (NaN), left out of means', () => {
    assert.ok(Number.isNaN(recallAtK(ranked, new Set(), 3)));
    assert.ok(Number.isNaN(allGoldAtK(ranked, new Set(), 3)));
  });
  it('the existing nDCG still works', () => {
    close(ndcgAtK(['a', 'b', 'd1'], new Map([['d1', 1]]), 10), 0.5);
  });
});

describe('answers (HotpotQA normalisation)', () => {
  it('normalises case, punctuation, articles and whitespace', () => {
    assert.equal(normalizeAnswer('The  Eiffel-Tower!'), 'eiffeltower');
    assert.equal(normalizeAnswer('An apple, a pear'), 'apple pear');
  });
  it('EM and F1', () => {
    assert.equal(exactMatch('the Saltmere', 'Saltmere'), 1);
    close(f1Score('port town of Saltmere', 'Saltmere'), 2 * (1 / 4) * 1 / (1 / 4 + 1));
    assert.equal(f1Score('yes', 'no'), 0);
    assert.equal(f1Score('no', 'no'), 1);
    assert.deepEqual(bestAnswerScores('Ivelford', ['Norhold', 'Ivelford']), { em: 1, f1: 1 });
  });
  it('answer-bearing: at word boundaries, only answers present in the context are eligible', () => {
    assert.ok(containsAnswer('it reaches sea at saltmere', 'saltmere'));
    assert.ok(!containsAnswer('saltmeres harbour', 'saltmere'));
    assert.deepEqual(eligibleAnswers(['Saltmere', 'yes', 'Brenn'], false, normalizeAnswer('The port of Saltmere.')), ['saltmere']);
    assert.deepEqual(eligibleAnswers(['a b', 'c'], true, 'a b only'), [], 'multi-span answers need every span');
    assert.ok(answerIn(['saltmere'], false, 'reaches the sea at Saltmere.'));
    assert.ok(!answerIn(['x', 'y'], true, 'only x here'));
  });
});

// A paragraph of 4 sentences under B = 2 groups: p → g0 (s0, s1), g1 (s2, s3).
function tree(): RegionNode {
  const leaf = (id: string): RegionNode => ({ id, kind: 'sentence', modality: 'text', text: id, anchor: { file: 'f' }, children: [] });
  const group = (id: string, kids: RegionNode[]): RegionNode => ({ id, kind: 'group', modality: 'text', text: kids.map((k) => k.text).join(' '), anchor: { file: 'f' }, children: kids });
  return { id: 'p', kind: 'paragraph', modality: 'text', text: 's0 s1 s2 s3', anchor: { file: 'f' }, children: [group('g0', [leaf('s0'), leaf('s1')]), group('g1', [leaf('s2'), leaf('s3')])] };
}

describe('refinement-decision accuracy', () => {
  it('descending into the gold child and keeping a fully gold node whole both agree', () => {
    const root = tree();
    // Gold: s0 and s1 (all of g0). Scores: g0 ≥ p (descend), g1 < p (dropped), g0 kept whole.
    const scores: Record<string, number> = { p: 0.5, g0: 0.6, g1: 0.3, s0: 0.55, s1: 0.5, s2: 0.1, s3: 0.1 };
    const { verdicts, kept } = projectItem(root, (n) => scores[n.id]!);
    assert.deepEqual(
      kept.map((k) => k.id),
      ['g0'],
    );
    // Pairs: (p, g0) partial parent → descend into g0 agrees; (g0, s0), (g0, s1) fully gold → keep-whole agrees.
    assert.deepEqual(refinementDecisions(root, verdicts, new Set(['s0', 's1'])), { agree: 3, total: 3 });
  });
  it('keeping a partly gold parent whole, or refining a fully gold one, disagree', () => {
    const root = tree();
    const keepAll: Record<string, number> = { p: 0.9, g0: 0.5, g1: 0.5, s0: 0, s1: 0, s2: 0, s3: 0 };
    const v1 = projectItem(root, (n) => keepAll[n.id]!).verdicts;
    // Gold s2 only: p is kept whole though only one of its children overlaps gold → 1 pair, wrong.
    assert.deepEqual(refinementDecisions(root, v1, new Set(['s2'])), { agree: 0, total: 1 });
    const refine: Record<string, number> = { p: 0.1, g0: 0.2, g1: 0.2, s0: 0.3, s1: 0.3, s2: 0.3, s3: 0.3 };
    const v2 = projectItem(root, (n) => refine[n.id]!).verdicts;
    // Everything gold: every parent should have been kept whole: (p,g0), (p,g1), (g0,s0), (g0,s1), (g1,s2), (g1,s3) all disagree.
    assert.deepEqual(refinementDecisions(root, v2, new Set(['s0', 's1', 's2', 's3'])), { agree: 0, total: 6 });
  });
  it('a dropped gold child disagrees with a descend', () => {
    const root = tree();
    const s: Record<string, number> = { p: 0.5, g0: 0.6, g1: 0.3, s0: 0.7, s1: 0.1, s2: 0, s3: 0 };
    const { verdicts } = projectItem(root, (n) => s[n.id]!);
    // Gold s2: (p, g1) — p descended but g1 was dropped → disagree. g1 is never visited.
    assert.deepEqual(refinementDecisions(root, verdicts, new Set(['s2'])), { agree: 0, total: 1 });
  });
});

describe('gold coverage', () => {
  it('all-mode units need every leaf; any-mode units one', () => {
    const root = tree();
    const covered = coveredLeaves([root.children[0]!]);
    assert.deepEqual([...covered].sort(), ['s0', 's1']);
    assert.ok(isCovered({ kind: 'sentence', itemIds: ['i'], leafIds: ['s1'], mode: 'all' }, covered));
    assert.ok(!isCovered({ kind: 'span', itemIds: ['i'], leafIds: ['s1', 's2'], mode: 'all' }, covered));
    assert.ok(isCovered({ kind: 'paragraph', itemIds: ['i'], leafIds: ['s1', 's2'], mode: 'any' }, covered));
  });
});

describe('equal-token interpolation', () => {
  it('interpolates linearly inside the curve and refuses to extrapolate', () => {
    const pts = [
      { x: 100, y: 0.4 },
      { x: 300, y: 0.8 },
      { x: 200, y: 0.7 },
    ];
    close(interpolate(pts, 150), 0.55);
    close(interpolate(pts, 250), 0.75);
    assert.ok(Number.isNaN(interpolate(pts, 50)));
    assert.ok(Number.isNaN(interpolate(pts, 301)));
  });
});

describe('paired bootstrap', () => {
  it('the PRNG is deterministic per seed and uniform-ish', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const xs = Array.from({ length: 1000 }, () => a());
    assert.deepEqual(
      xs.slice(0, 5),
      Array.from({ length: 5 }, () => b()),
    );
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    assert.ok(mean > 0.45 && mean < 0.55);
    assert.notDeepEqual(xs.slice(0, 5), Array.from({ length: 5 }, seededRandom(8)));
  });

  it('point value is the ratio of sums; intervals repeat exactly with the seed', () => {
    const values = [
      { num: 1, den: 2 },
      { num: 2, den: 2 },
      undefined,
      { num: 0, den: 4 },
    ];
    const p1 = new BootstrapPlan(4, 500, 3);
    const i1 = p1.interval(values);
    close(i1.value, 3 / 8);
    assert.equal(i1.n, 3);
    assert.deepEqual(new BootstrapPlan(4, 500, 3).interval(values), i1);
    assert.ok(i1.lo <= i1.value && i1.value <= i1.hi);
    assert.ok(i1.lo >= 0 && i1.hi <= 1);
  });

  it('a constant metric has a zero-width interval; paired differences of identical configs are 0', () => {
    const plan = new BootstrapPlan(5, 200, 1);
    const same = Array.from({ length: 5 }, () => ({ num: 1, den: 1 }));
    assert.deepEqual(plan.interval(same), { value: 1, lo: 1, hi: 1, n: 5 });
    const varied = [0, 1, 0, 1, 1].map((x) => ({ num: x, den: 1 }));
    const d = plan.differenceInterval(varied, varied);
    assert.deepEqual([d.value, d.lo, d.hi], [0, 0, 0]);
  });

  it('pairing: a config that is always 0.1 better has a tight difference interval', () => {
    const plan = new BootstrapPlan(50, 300, 9);
    const rand = seededRandom(1);
    const base = Array.from({ length: 50 }, () => rand() * 0.8);
    const a = base.map((x) => ({ num: x + 0.1, den: 1 }));
    const b = base.map((x) => ({ num: x, den: 1 }));
    const diff = plan.differenceInterval(a, b);
    close(diff.value, 0.1, 1e-9);
    close(diff.lo, 0.1, 1e-9);
    close(diff.hi, 0.1, 1e-9);
    const unpaired = plan.interval(a);
    assert.ok(unpaired.hi - unpaired.lo > 0.05, 'each alone is uncertain');
  });

  it('percentiles interpolate between order statistics', () => {
    assert.deepEqual(percentiles([0, 1, 2, 3, 4], 0.5), [1, 3]);
    assert.deepEqual(percentiles([5], 0.95), [5, 5]);
  });
});

describe('CANOPY descend margin (harness option)', () => {
  it('adding δ per level makes "child ≥ parent − δ" the projection rule', async () => {
    assert.equal(depthOf('q0/p1#0/0'), 0);
    assert.equal(depthOf('q0/p1#0/0.1.0'), 2);
    const root = tree();
    // g0 and g1 both a little below p: the paper's rule keeps p whole; δ = 0.05 descends into both.
    const s: Record<string, number> = { p: 0.5, g0: 0.47, g1: 0.4, s0: 0.3, s1: 0.3, s2: 0.3, s3: 0.3 };
    const ids: Record<string, string> = { p: 'i/0', g0: 'i/0.0', g1: 'i/0.1', s0: 'i/0.0.0', s1: 'i/0.0.1', s2: 'i/0.1.0', s3: 'i/0.1.1' };
    assert.deepEqual(
      projectItem(root, (n) => s[n.id]!).kept.map((k) => k.id),
      ['p'],
    );
    const withMargin = projectItem(root, (n) => s[n.id]! + 0.05 * depthOf(ids[n.id]!)).kept.map((k) => k.id);
    assert.deepEqual(withMargin, ['g0']);
  });
});
