// The rank gate's item order, trained by `canopy train`'s ask fit (issue 36): on hand-built
// questions whose gold item shares none of the question's words (BM25 ranks it last) but whose
// node vectors match the query, the pairwise-preference fit learns to rank by the node scores;
// the search then keeps fewer items at better recall, the held-back questions confirm it, and the
// fitted gate carries the order in the profile's form. An order no better than the one in use at
// its own objective is not searched with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPreferences } from '../../../src/core/annotate/preferences';
import { gateOf } from '../../../src/core/app/scoringFit';
import type { TokenCounter } from '../../../src/core/compress/tokens';
import { fitAsk, formatAskFit, type AskGrid } from '../../../src/core/train/askFit';
import type { AskConfiguration } from '../../../src/core/train/askPipeline';
import { fitItemOrder } from '../../../src/core/train/itemOrderFit';
import type { PreparedQuestion } from '../../../src/core/train/report';
import { blendWeights } from '../../../src/core/train/run';
import { textItem } from '../../helpers/items';

const words: TokenCounter = { name: 'words', count: (t) => t.split(/\s+/).filter(Boolean).length };
const unit = (x: number, y: number) => Float32Array.from([x / Math.hypot(x, y), y / Math.hypot(x, y)]);

/**
 * Six items: five distractors that repeat the question's words (cosine 0 with the query) and one
 * gold item that shares none of them (cosine 1). `goldFirst` puts the gold item's words in the
 * question instead, so BM25 ranks it first too.
 */
function question(i: number, goldFirst = false): PreparedQuestion {
  const cue = `marlow${i} turbine`;
  const candidates = [];
  let goldAnchor;
  for (let j = 0; j < 6; j++) {
    const gold = j === 3;
    const sentences = gold
      ? [`Quillon${i} works drafted the blueprint in spring.`, 'The drafting office kept every copy.']
      : [`The ${cue} overhaul log lists ${cue} parts.`, `Inspectors of the ${cue} signed it.`];
    const item = textItem(`q${i}/item${j}.md`, `xq${i}v${j}`, [sentences]);
    const vectors = new Map<string, Float32Array>();
    const walk = (n: typeof item.root) => {
      vectors.set(n.id, gold ? unit(1, 0.05) : unit(0.05, 1));
      n.children.forEach(walk);
    };
    walk(item.root);
    if (gold) goldAnchor = item.root.children[0]!.children[0]!.anchor;
    candidates.push({ item, vectors });
  }
  const q = goldFirst ? `Which Quillon${i} works drafted the blueprint?` : `Which ${cue} overhaul names its inspectors?`;
  const gold = [goldAnchor!];
  return { key: `q${i}`, question: q, query: unit(1, 0), gold, candidates, pairs: buildPreferences(candidates.map((c) => c.item), gold).pairs };
}

const current: AskConfiguration = { compressor: { name: 'canopy', items: 0.5, minItems: 1 }, nodeScore: { dense: 1, lexical: 0 } };
const grid: AskGrid = { blend: [0], items: [0.1, 0.5], minItems: [1, 2], wholeBelow: [0], lexical: [0] };

describe('the rank gate item order fitted to the ask', () => {
  it('learns to prefer the gold items by their node scores where BM25 ranks them last', () => {
    const train = Array.from({ length: 8 }, (_, i) => question(i));
    const fit = fitItemOrder(train, current, ['bm25', 'root', 'leaf'])!;
    assert.equal(fit.questions, 8);
    assert.equal(fit.pairs, 8 * 5);
    assert.equal(fit.pairAccuracy.inUse, 0, 'BM25 ranks every gold item below the distractors');
    assert.equal(fit.pairAccuracy.trained, 1);
    assert.equal(fit.order.length, 0, 'a feature left out weighs 0');
    assert.ok(fit.order.root > 0 && fit.order.bm25 < fit.order.root, JSON.stringify(fit.order));
    assert.equal(Math.max(...Object.values(fit.order).map(Math.abs)), 1, 'scaled so the largest weight is 1');
  });

  it('searches the gate with the trained order, keeps fewer items at better recall, and the fitted gate carries it', () => {
    const train = Array.from({ length: 8 }, (_, i) => question(i));
    const heldBack = Array.from({ length: 4 }, (_, i) => question(100 + i));
    const fit = fitAsk({ train, heldBack, tokens: words, current, blendWeights, grid });
    const k = fit.after.compressor;
    assert.ok(k.name === 'canopy' && k.itemOrder, fit.describe.after);
    assert.equal(fit.order?.used, true);
    assert.deepEqual(k.itemOrder, fit.order!.order);
    assert.ok(k.items! < 0.5 || k.minItems! < 3, fit.describe.after);
    const h = fit.heldBack!;
    assert.equal(h.before.goldRecall, 0);
    assert.equal(h.after.goldRecall, 1);
    assert.ok(h.after.evidenceTokens < h.before.evidenceTokens, `${h.before.evidenceTokens} → ${h.after.evidenceTokens}`);
    assert.equal(fit.adopted, true, fit.reason);
    assert.match(fit.describe.after, /items ranked by −?[\d.]+ × BM25 \+ [\d.]+ × root score/);
    assert.ok(formatAskFit(fit).some((l) => /item order trained on 40 gold-over-gold-free item pairs of 8 training question\(s\): .*ordered right 0\.0% by the order in use → 100\.0%; the fitted configuration ranks by it/.test(l)));
    // The profile's form of the fitted gate holds the order (what `canopy train` writes).
    assert.deepEqual(gateOf(k)?.order, fit.order!.order);
  });

  it('does not search with an order that ranks no more pairs right than BM25', () => {
    const train = Array.from({ length: 8 }, (_, i) => question(i, true));
    const heldBack = Array.from({ length: 4 }, (_, i) => question(100 + i, true));
    const fit = fitAsk({ train, heldBack, tokens: words, current, blendWeights, grid });
    assert.equal(fit.order?.pairAccuracy.inUse, 1);
    assert.equal(fit.order?.used, false);
    const k = fit.after.compressor;
    assert.ok(k.name === 'canopy' && k.itemOrder === undefined, fit.describe.after);
  });
});
