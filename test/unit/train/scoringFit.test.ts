// The two fits `canopy train` adds (issue 17), on hand-built questions whose outcome is known:
// the node-score weights are chosen on the training questions and adopted only when better on
// the held-back ones (a fit that would lose gold there is refused); the fusion likewise, by mean
// nDCG@10 over the held-back questions' rankings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPreferences } from '../../../src/core/annotate/preferences';
import { decideFusion } from '../../../src/core/app/scoringFit';
import type { TokenCounter } from '../../../src/core/compress/tokens';
import type { JudgedQuestion } from '../../../src/core/retrieve/fitFusion';
import { fitNodeScore } from '../../../src/core/train/nodeScoreFit';
import type { PreparedQuestion } from '../../../src/core/train/report';
import { textItem } from '../../helpers/items';

const words: TokenCounter = { name: 'words', count: (t) => t.split(/\s+/).filter(Boolean).length };
const unit = (x: number, y: number) => Float32Array.from([x / Math.hypot(x, y), y / Math.hypot(x, y)]);

const fillers = ['The staff keep daily logs of the weather and the water level.', 'Visitors often walk along the banks in the summer months.', 'Parking is free for members on weekends and holidays.'];

/**
 * One question over one item (document → paragraph → four sentences). The question names rare
 * words of sentence `cue`; gold is sentence `gold`. Dense scores: the document and the paragraph
 * match the query (cosine 1), every sentence less (0.5), so the dense cosine alone keeps the
 * paragraph whole.
 */
function question(i: number, cue: number, gold: number): PreparedQuestion {
  const code = `zq${i}x`;
  const sentences = [...fillers];
  sentences.splice(cue, 0, `The ${code} sluice valve was replaced by engineer Varga${i} after the flood.`);
  const file = `r${i}.md`;
  const item = textItem(file, `report ${i}`, [sentences]);
  const vectors = new Map<string, Float32Array>();
  const walk = (n: typeof item.root) => {
    vectors.set(n.id, n.children.length > 0 ? unit(1, 0) : unit(0.5, Math.sqrt(0.75)));
    n.children.forEach(walk);
  };
  walk(item.root);
  const g = item.root.children[0]!.children[gold]!.anchor;
  return { key: `q${i}`, question: `Who replaced the ${code} sluice valve, Varga${i}?`, query: unit(1, 0), gold: [g], candidates: [{ item, vectors }], pairs: buildPreferences([item], [g]).pairs };
}

const helps = (i: number) => question(i, i % 4, i % 4);
const hurts = (i: number) => question(i, i % 4, (i + 1) % 4);

describe('fitNodeScore', () => {
  it('fits lexical evidence on the training questions and adopts it when the held-back questions confirm it', () => {
    const train = [0, 1, 2, 3, 4, 5].map(helps);
    const fit = fitNodeScore({ train, heldBack: [6, 7].map(helps), tokens: words });
    assert.ok(fit.after.lexical > 0, JSON.stringify(fit.after));
    assert.equal(fit.train.before.goldRecall, 1);
    assert.equal(fit.train.after.goldRecall, 1);
    assert.ok(fit.train.after.evidenceTokens < fit.train.before.evidenceTokens);
    const h = fit.heldBack!;
    assert.ok(h.after.evidenceTokens < h.before.evidenceTokens, `${h.before.evidenceTokens} → ${h.after.evidenceTokens}`);
    assert.ok(h.after.decisionAccuracy > h.before.decisionAccuracy);
    assert.equal(fit.adopted, true, fit.reason);
  });

  it('refuses a fit that would be worse on the held-back questions (gold lost there)', () => {
    const fit = fitNodeScore({ train: [0, 1, 2, 3, 4, 5].map(helps), heldBack: [6, 7].map(hurts), tokens: words });
    assert.ok(fit.after.lexical > 0, 'the training questions still chose lexical evidence');
    assert.ok(fit.heldBack!.after.goldRecall < fit.heldBack!.before.goldRecall);
    assert.equal(fit.adopted, false);
    assert.match(fit.reason, /not better on the 2 held-back question\(s\) than dense cosine alone; not adopted/);
  });

  it('keeps the weights in use when nothing on the grid beats them on the training questions', () => {
    const fit = fitNodeScore({ train: [0, 1, 2, 3].map(hurts), heldBack: [6].map(helps), tokens: words });
    assert.deepEqual(fit.after, fit.before);
    assert.equal(fit.heldBack, undefined);
    assert.equal(fit.adopted, false);
    assert.match(fit.reason, /no weights on the grid were better than dense cosine alone on the 4 training question/);
  });
});

const ranked = (ids: string[]) => ids.map((id, i) => ({ id, score: 1 - i / 20 }));

/**
 * The relevant item `r` among others. `bm25Right`: first by BM25, not found by the dense side
 * (whose list is the others); else first by the dense side and ninth by BM25, whose other items
 * the dense side does not list (equal-weight RRF puts it first, BM25 alone ninth).
 */
function judged(q: number, bm25Right: boolean): JudgedQuestion {
  const r = `q${q}-r`;
  const others = (p: string) => Array.from({ length: 9 }, (_, i) => `q${q}-${p}${i}`);
  const qrels = new Map([[r, 1]]);
  if (bm25Right) return { lexical: ranked([r, ...others('x')]), dense: ranked(others('x').reverse()), qrels };
  return { dense: ranked([r, ...others('x')]), lexical: ranked([...others('y').slice(0, 8), r]), qrels };
}

describe('decideFusion', () => {
  const counts = { train: 6, heldBack: 2, unjudged: 0 };
  const rrf = { kind: 'rrf', rrfK: 60 } as const;
  it('adopts a fit whose held-back nDCG@10 is above the fusion in use', () => {
    const r = decideFusion([0, 1, 2, 3, 4, 5].map((q) => judged(q, true)), [6, 7].map((q) => judged(q, true)), rrf, counts);
    assert.equal(r.after!.kind, 'linear');
    assert.equal(r.trainNdcg, 1);
    assert.equal(r.heldBack!.after, 1);
    assert.ok(r.heldBack!.before < 1);
    assert.equal(r.adopted, true, r.reason);
  });
  it('refuses a fit that is worse on the held-back questions', () => {
    const r = decideFusion([0, 1, 2, 3, 4, 5].map((q) => judged(q, true)), [6, 7].map((q) => judged(q, false)), rrf, counts);
    assert.ok(r.heldBack!.after < r.heldBack!.before, JSON.stringify(r.heldBack));
    assert.equal(r.adopted, false);
    assert.match(r.reason, /not 0.005 higher mean nDCG@10 on the 2 held-back question\(s\) than RRF k=60; not adopted/);
  });
});
