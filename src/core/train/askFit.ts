/**
 * Fits what the workspace's ask decides with to its gold (issue 36). An ask compresses with the
 * rank gate (its share, its least item count, short items kept whole), the glimpse and a hybrid
 * node score; the adapter trained on §10's pairwise preferences (`trainer.ts`) only reaches it
 * through the dense part of that score. So, on the training questions and measured the way an ask
 * compresses (`askPipeline.ts`), this fit chooses the adapter's blend weight (0: the untrained
 * encoder) beside the gate's options and the lexical weight — coordinate by coordinate over a
 * small grid, each coordinate's values tried with the others fixed, until no coordinate changes.
 * With the rank gate on, it first trains the gate's item order on the training questions
 * (`itemOrderFit.ts`: gold items preferred over gold-free ones) and runs the search twice, from
 * the gate ranking by BM25 (the order in use) and from the trained order; the larger gain wins, so
 * a better order can buy a smaller share at the same recall.
 *
 * A candidate is eligible on the training questions when its gold recall is not lower, its
 * evidence tokens not more and its refinement-decision accuracy not lower than the configuration
 * in use; among the eligible, the largest gain in decision accuracy plus the share of tokens saved
 * wins (ties keep the value in use). The chosen configuration is then measured on the held-back
 * questions against the configuration in use, with the untrained encoder, and **adopted only when
 * better there**: gold recall not lower, tokens not more, decision accuracy not lower, one of the
 * two strictly better. The plain rule's figures (dense cosine, no gate: `report.ts`) for the same
 * adapter are kept beside, so the report can say what the design's rule would have given.
 */
import type { SideMetrics } from '../../contracts/training';
import { throwIfCancelled } from '../errors';
import type { TokenCounter } from '../compress/tokens';
import { adapterFromWeights } from './checkpoint';
import type { LowRank } from './lowRank';
import { addQuestionCounts, beforeAfter, sideMetrics, zeroCounts, type BeforeAfter, type PreparedQuestion } from './report';
import { askQuestionCounts, describeAskConfiguration, evaluateAsk, type AskConfiguration } from './askPipeline';
import { better, noWorse } from './nodeScoreFit';
import { describeItemOrder } from '../compress/itemGate';
import { fitItemOrder, ITEM_ORDER_FEATURE_SETS, type ItemOrderFit } from './itemOrderFit';

/** The values each coordinate may take (the configuration in use is always a candidate too). */
export interface AskGrid {
  /** Blend weight α of the trained adapter (node vector v + α·A·B·v); 0 = the untrained encoder. */
  blend: readonly number[];
  /** The rank gate's share of a round's items kept for their rank. */
  items: readonly number[];
  /** The least number of items the gate keeps. */
  minItems: readonly number[];
  /** Items of at most this many characters kept whole (0: none, every item is refined). */
  wholeBelow: readonly number[];
  /** The lexical weight beside a dense weight of 1 (the lexical model in use is kept). */
  lexical: readonly number[];
}

/**
 * Measured on HotpotQA's development questions (docs/annotations.md, "The ask's configuration"):
 * `wholeBelow` moves decision accuracy most (short partly gold items kept whole are wrong
 * decisions), the share and least count move tokens and recall, the lexical weight and the
 * adapter's blend the refinement inside the items.
 */
export const ASK_GRID: AskGrid = {
  blend: [0, 0.25, 0.5, 0.75, 1],
  items: [0.1, 0.2, 0.3, 0.4, 0.5],
  minItems: [2, 3, 4, 5, 6],
  wholeBelow: [0, 150, 300, 450, 600, 800],
  lexical: [0, 0.25, 0.5, 1, 2],
};

/** One point of the search: a configuration and the adapter's blend. */
export interface AskCandidate {
  config: AskConfiguration;
  blend: number;
}

export interface AskFit {
  /** The configuration the workspace's ask used (with the untrained encoder), and the fitted one. */
  before: AskConfiguration;
  after: AskConfiguration;
  /** The adapter's blend weight chosen (0: the adapter takes no part; no checkpoint is needed). */
  blend: number;
  /** `describeAskConfiguration` of each, for reports. */
  describe: { before: string; after: string };
  /** The ask's figures on the training questions (what chose). */
  train: { before: SideMetrics; after: SideMetrics };
  /** The ask's figures on the held-back questions (what adopts), and the plain rule's for the same adapter. */
  heldBack?: { before: SideMetrics; after: SideMetrics; plain: BeforeAfter };
  adopted: boolean;
  /** Why it was adopted or not, in a sentence. */
  reason: string;
  /** Configurations measured on the training questions. */
  tried: number;
  /** The gate's item order trained on the training questions (absent without the rank gate or without pairs), and whether the fitted configuration ranks by it. */
  order?: ItemOrderFit & { used: boolean };
}

const EPS = 1e-9;

/** The gain a candidate is chosen by: decision accuracy points plus the share of tokens saved (both 0–1). */
function gain(m: SideMetrics, base: SideMetrics): number {
  return m.decisionAccuracy - base.decisionAccuracy + (base.evidenceTokens === 0 ? 0 : 1 - m.evidenceTokens / base.evidenceTokens);
}

function withCoordinate(c: AskCandidate, key: keyof AskGrid, value: number): AskCandidate | undefined {
  const k = c.config.compressor;
  if (k.name !== 'canopy') return undefined;
  switch (key) {
    case 'blend':
      return { ...c, blend: value };
    case 'items':
      return { ...c, config: { ...c.config, compressor: { ...k, items: value } } };
    case 'minItems':
      return { ...c, config: { ...c.config, compressor: { ...k, minItems: value } } };
    case 'wholeBelow': {
      const { wholeBelow: _drop, ...rest } = k;
      return { ...c, config: { ...c.config, compressor: value > 0 ? { ...rest, wholeBelow: value } : rest } };
    }
    case 'lexical':
      return { ...c, config: { ...c.config, nodeScore: { ...c.config.nodeScore, dense: 1, lexical: value } } };
  }
}

function valueOf(c: AskCandidate, key: keyof AskGrid): number | undefined {
  const k = c.config.compressor;
  if (key === 'blend') return c.blend;
  if (key === 'lexical') return c.config.nodeScore.dense === 1 ? c.config.nodeScore.lexical : undefined;
  if (k.name !== 'canopy') return undefined;
  return key === 'wholeBelow' ? (k.wholeBelow ?? 0) : k[key];
}

/**
 * Chooses the configuration and blend on `train`, confirms it on `heldBack` (see the file comment).
 * `adapter` is the trained adapter's weights (α = 1); without one only the configuration is fitted.
 * A configuration without the rank gate is fitted on the lexical weight (and blend) alone.
 */
export function fitAsk(o: {
  train: readonly PreparedQuestion[];
  heldBack: readonly PreparedQuestion[];
  tokens: TokenCounter;
  current: AskConfiguration;
  adapter?: LowRank;
  blendWeights: (w: LowRank, alpha: number) => LowRank;
  grid?: AskGrid;
  signal?: AbortSignal;
}): AskFit {
  const grid = o.grid ?? ASK_GRID;
  const adapterAt = (alpha: number) => (o.adapter && alpha > 0 ? adapterFromWeights(o.blendWeights(o.adapter, alpha)) : undefined);
  const measured = new Map<string, { metrics: SideMetrics; kept: number[] }>();
  const measure = (c: AskCandidate, questions: readonly PreparedQuestion[]): SideMetrics => evaluateAsk(questions, o.tokens, c.config, adapterAt(c.blend));
  const onTrain = (c: AskCandidate): { metrics: SideMetrics; kept: number[] } => {
    const key = JSON.stringify(c);
    let m = measured.get(key);
    if (!m) {
      throwIfCancelled(o.signal);
      const adapter = adapterAt(c.blend);
      const counts = o.train.map((q) => askQuestionCounts(q, o.tokens, c.config, adapter));
      measured.set(key, (m = { metrics: sideMetrics(counts.reduce(addQuestionCounts, zeroCounts()), counts.length), kept: counts.map((x) => x.goldKept) }));
    }
    return m;
  };
  const start: AskCandidate = { config: o.current, blend: 0 };
  const { metrics: base, kept: baseKept } = onTrain(start);
  // Recall is guarded per question, not only pooled: a candidate that loses a gold span on one
  // training question and finds one on another ties the pooled figure but is the kind of move
  // that loses recall on other questions (HotpotQA, docs/annotations.md).
  const keepsEveryGold = (kept: readonly number[]) => kept.every((k, i) => k >= baseKept[i]!);
  const gated = o.current.compressor.name === 'canopy' && o.current.compressor.items !== undefined;
  const keys: Array<keyof AskGrid> = (['wholeBelow', 'items', 'minItems', 'lexical', 'blend'] as const).filter((k) => (k === 'blend' ? o.adapter !== undefined : gated || k === 'lexical'));
  /**
   * The coordinate search from `from`, which is itself a candidate only when eligible. With
   * `perQuestion` a candidate must also keep every training question's gold that the
   * configuration in use keeps. The searches from a trained order go without it: an order moves
   * gold between questions by design (its pairs are every training question's), and a smaller
   * share or least count drops each question's last-ranked item, so under that guard no order
   * could buy fewer tokens with it (2WikiMultiHopQA, docs/annotations.md); pooled recall, tokens
   * and decision accuracy still may not be worse, and the held-back questions still decide.
   */
  const search = (from: AskCandidate, perQuestion: boolean) => {
    const eligible = (x: { metrics: SideMetrics; kept: number[] }) => noWorse(x.metrics, base) && (!perQuestion || keepsEveryGold(x.kept));
    const first = onTrain(from);
    let best = { candidate: from, metrics: first.metrics, gain: from === start ? 0 : eligible(first) ? gain(first.metrics, base) : Number.NEGATIVE_INFINITY };
    for (let pass = 0, changed = true; changed && pass < 4; pass++) {
      changed = false;
      for (const key of keys) {
        for (const value of grid[key]) {
          if (valueOf(best.candidate, key) === value) continue;
          const c = withCoordinate(best.candidate, key, value);
          if (!c) continue;
          const x = onTrain(c);
          if (!eligible(x)) continue;
          const g = gain(x.metrics, base);
          if (g > best.gain + EPS) {
            best = { candidate: c, metrics: x.metrics, gain: g };
            changed = true;
          }
        }
      }
    }
    return best;
  };
  let best = search(start, true);
  // The gate's item order, trained on the training questions with the node scores in use: over
  // the features that read the question, and over those and the item's length.
  const orders = gated ? ITEM_ORDER_FEATURE_SETS.map((features) => fitItemOrder(o.train, o.current, features)).filter((f) => f !== undefined) : [];
  let orderFit = orders[0];
  // An order is searched with only when it ranks the training questions' gold items above their
  // gold-free ones more often than the order in use: its searches go without the per-question
  // guard (below), which an order no better at its own objective must not be a way around.
  let orderUsed = false;
  // Each order is searched from the configuration in use and from the best one BM25 reached
  // (coordinate moves are greedy; a better order may pay off only past a point BM25 stopped at).
  const byBm25 = best.candidate;
  for (const fit of orders.filter((f) => f.pairAccuracy.trained > f.pairAccuracy.inUse + EPS)) {
    for (const from of byBm25 === start ? [start] : [start, byBm25]) {
      const k = from.config.compressor;
      if (k.name !== 'canopy') continue;
      const ordered = search({ ...from, config: { ...from.config, compressor: { ...k, itemOrder: fit.order } } }, false);
      if (ordered.gain > best.gain + EPS) {
        best = ordered;
        orderFit = fit;
        orderUsed = true;
      }
    }
  }
  const after = best.candidate;
  const fit = {
    before: o.current,
    after: after.config,
    blend: after.blend,
    describe: { before: describeAskConfiguration(o.current), after: describeAskConfiguration(after.config) },
    train: { before: base, after: best.metrics },
    tried: measured.size,
    ...(orderFit ? { order: { ...orderFit, used: orderUsed } } : {}),
  };
  const plain = beforeAfter(o.heldBack, o.tokens, adapterAt(after.blend) ?? ((v) => v));
  if (o.heldBack.length === 0) return { ...fit, adopted: false, reason: 'no held-back questions to confirm the fit on' };
  const heldBack = { before: measure(start, o.heldBack), after: measure(after, o.heldBack), plain };
  if (best.candidate === start) {
    return { ...fit, heldBack, adopted: false, reason: `nothing on the grid was better than the configuration in use on the ${o.train.length} training question(s)` };
  }
  const adopted = better(heldBack.after, heldBack.before);
  return {
    ...fit,
    heldBack,
    adopted,
    reason: adopted
      ? `better on the ${o.heldBack.length} held-back question(s) with the ask's configuration: gold recall not lower, tokens not more, decision accuracy not lower, one of them strictly better`
      : `not better on the ${o.heldBack.length} held-back question(s) with the ask's configuration than the configuration in use; not adopted`,
  };
}

/** A few lines for a terminal: the ask's configuration before and after on the held-back questions, the plain rule's beside. */
export function formatAskFit(f: AskFit): string[] {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const row = (name: string, m: SideMetrics) =>
    `  ${name.padEnd(14)} decision acc ${pct(m.decisionAccuracy)} (${m.decisions})  gold recall ${pct(m.goldRecall)} (${m.goldSpans})  tokens ${m.evidenceTokens} (${pct(m.tokenShare)} of whole)`;
  const lines = [`the ask's configuration (${f.tried} configurations measured on the training questions):`, `  in use:  ${f.describe.before}`, `  fitted:  ${f.describe.after}; adapter blend ${f.blend}`];
  if (f.order) {
    const o = f.order;
    lines.push(
      `  the rank gate's item order trained on ${o.pairs} gold-over-gold-free item pairs of ${o.questions} training question(s): ${describeItemOrder(o.order)}; training pairs ordered right ${pct(o.pairAccuracy.inUse)} by the order in use → ${pct(o.pairAccuracy.trained)}; ${o.used ? 'the fitted configuration ranks by it' : o.pairAccuracy.trained > o.pairAccuracy.inUse + EPS ? 'not used (the search gained more with the order in use)' : 'not used (it orders no more pairs right than the order in use)'}`,
    );
  }
  if (f.heldBack) {
    const h = f.heldBack;
    lines.push(`held back (${h.before.questions} questions), the ask's configuration:`, row('before', h.before), row('after', h.after));
    lines.push(`held back, the plain rule (dense cosine, no gate) with the adapter at blend ${f.blend}:`, row('untrained', h.plain.before), row('trained', h.plain.after));
  }
  lines.push(`  ${f.adopted ? 'adopted' : 'not adopted'} — ${f.reason}`);
  return lines;
}
