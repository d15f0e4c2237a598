/**
 * Trains the rank gate's item order (issue 36; `compress/itemGate.ts`, `ItemOrder`) with the
 * seed method's pairwise-preference objective, one level up: within each training question, every
 * item holding gold is preferred over every gold-free item. The model is linear over the gate's
 * item features (BM25 of the whole text, the root's and the best leaf's node score under the
 * ask's configuration, the log of the item's length, each standardised within the question's items), fitted as a logistic
 * regression on the pairs' feature differences (each pair once each way, so no bias is learnt),
 * each question weighing the same however many pairs it has. Deterministic (Newton's method from
 * zero weights, `logistic.ts`).
 *
 * The weights are scaled so the largest is 1 (an order does not change with the scale) and
 * rounded to three decimals, the form the retrieval profile stores.
 */
import type { RegionNode } from '../../contracts/region';
import { ITEM_ORDER_FEATURES, itemOrderFeatures, itemOrderScores, type ItemOrder } from '../compress/itemGate';
import type { NodeAdapter } from '../compress/nodeScorer';
import { askNodeScores, goldItems, type AskConfiguration } from './askPipeline';
import { fitLogistic } from './logistic';
import type { PreparedQuestion } from './report';

/** The untrained order: BM25 of the whole text alone. */
export const BM25_ORDER: ItemOrder = Object.freeze({ bm25: 1, root: 0, leaf: 0, length: 0 });

/** L2 penalty per unit of pair weight: three features and a few hundred pairs need little. */
const L2 = 0.01;

export interface ItemOrderFit {
  order: ItemOrder;
  /** Training questions with at least one gold and one gold-free item (the others give no pair). */
  questions: number;
  pairs: number;
  /** Share of the training pairs each order ranks the gold item above the gold-free one (ties count half): the order in use (BM25 when none was trained) and the trained one. */
  pairAccuracy: { inUse: number; trained: number };
}

interface QuestionRows {
  features: number[][];
  gold: boolean[];
}

function rowsOf(q: PreparedQuestion, config: AskConfiguration, adapter?: NodeAdapter): QuestionRows {
  const scores = askNodeScores(q, config, adapter);
  const score = (n: RegionNode) => scores.get(n.id) ?? Number.NEGATIVE_INFINITY;
  return { features: itemOrderFeatures(q.question, q.candidates.map((c) => c.item), score), gold: goldItems(q) };
}

function pairAccuracy(rows: readonly QuestionRows[], order: ItemOrder): number {
  let agreed = 0;
  let total = 0;
  for (const r of rows) {
    const s = itemOrderScores(r.features, order);
    r.gold.forEach((g, i) => {
      if (!g) return;
      r.gold.forEach((h, j) => {
        if (h) return;
        total++;
        agreed += s[i]! > s[j]! ? 1 : s[i] === s[j] ? 0.5 : 0;
      });
    });
  }
  return total === 0 ? 0 : agreed / total;
}

/**
 * Fits the order on the training questions, scored as `config` scores nodes (see the file
 * comment), over the named features (the others weigh 0); undefined when no question gives a pair.
 */
export function fitItemOrder(
  train: readonly PreparedQuestion[],
  config: AskConfiguration,
  features: ReadonlyArray<keyof ItemOrder> = ITEM_ORDER_FEATURES,
  adapter?: NodeAdapter,
): ItemOrderFit | undefined {
  const k = config.compressor;
  const inUse = (k.name === 'canopy' ? k.itemOrder : undefined) ?? BM25_ORDER;
  const columns = ITEM_ORDER_FEATURES.map((f, j) => (features.includes(f) ? j : -1)).filter((j) => j >= 0);
  const rows = train
    .map((q) => rowsOf(q, config, adapter))
    .filter((r) => r.gold.some((g) => g) && r.gold.some((g) => !g))
    .map((r) => ({ gold: r.gold, features: r.features.map((row) => ITEM_ORDER_FEATURES.map((_, j) => (columns.includes(j) ? row[j]! : 0))) }));
  const x: number[][] = [];
  const y: number[] = [];
  const w: number[] = [];
  for (const r of rows) {
    const golds = r.features.filter((_, i) => r.gold[i]);
    const others = r.features.filter((_, i) => !r.gold[i]);
    const weight = 1 / (golds.length * others.length);
    for (const g of golds) {
      for (const o of others) {
        const diff = columns.map((j) => g[j]! - o[j]!);
        x.push(diff, diff.map((v) => -v));
        y.push(1, 0);
        w.push(weight, weight);
      }
    }
  }
  if (x.length === 0) return undefined;
  const fitted = fitLogistic(x, y, w, { l2: L2 });
  const largest = Math.max(...fitted.weights.map(Math.abs));
  if (!(largest > 0)) return undefined;
  const round = (v: number) => Math.round((1000 * v) / largest) / 1000 || 0;
  const order = Object.fromEntries(ITEM_ORDER_FEATURES.map((f, j) => [f, columns.includes(j) ? round(fitted.weights[columns.indexOf(j)]!) : 0])) as unknown as ItemOrder;
  return { order, questions: rows.length, pairs: x.length / 2, pairAccuracy: { inUse: pairAccuracy(rows, inUse), trained: pairAccuracy(rows, order) } };
}

/**
 * The feature sets an order is trained over: the question's evidence (BM25, root and best leaf
 * node scores), and that with the item's length. Length can say more than the question's words
 * (HotpotQA's gold paragraphs are shorter than its distractors, 2WikiMultiHopQA's longer) but
 * prefers items for what they cost, so the search tries both and keeps what gains more.
 */
export const ITEM_ORDER_FEATURE_SETS: ReadonlyArray<ReadonlyArray<keyof ItemOrder>> = [
  ['bm25', 'root', 'leaf'],
  ['bm25', 'root', 'leaf', 'length'],
];
