/**
 * Whether a question's retrieval uses the topic compass (docs/topics.md, "When the compass is
 * on"). `canopy.topics.enabled` turns it on by hand. Otherwise it turns on by itself only where
 * the method claims its gain and the index's own measurement shows it: the index's items are
 * coarse (decided from the index's statistics: tree nodes per item) and the scorer's held-back
 * figure, measured on the default retrieval's own candidates with real questions (at least
 * MIN_HELD_OUT_QUERIES of them held back), beats the default on IE@3 and is not below it on nDCG@10. Every outcome carries its reason, for the trace and the Topics tab.
 */
import { describeFusion, type FusionSetting } from '../retrieve/profile';
import type { TopicScorerCheckpoint } from './indexTopics';

/** The candidates a scorer re-ranks, in words: the hybrid under this fusion, its top `count`. */
export const candidatesOf = (fusion: FusionSetting, count = 50): string => `hybrid, ${describeFusion(fusion)}, top ${count}`;

/**
 * Items with at least this many tree nodes on average are coarse: with branching factor 2 about
 * 20 sentences, several paragraphs (a pool paragraph has about 10; a SQuAD section of 8
 * paragraphs about 80; docs/topics.md).
 */
export const COARSE_NODES_PER_ITEM = 40;

/** Fewer held-back queries than this are too few to turn the compass on (a handful flips on noise). */
export const MIN_HELD_OUT_QUERIES = 30;

export interface IndexGrain {
  items: number;
  nodes: number;
  nodesPerItem: number;
  coarse: boolean;
}

/** The index's grain from its manifest's file entries (items and tree nodes per file). */
export function indexGrain(files: Readonly<Record<string, { items: readonly string[]; nodes: number }>>): IndexGrain {
  let items = 0;
  let nodes = 0;
  for (const e of Object.values(files)) {
    items += e.items.length;
    nodes += e.nodes;
  }
  const nodesPerItem = items > 0 ? nodes / items : 0;
  return { items, nodes, nodesPerItem, coarse: nodesPerItem >= COARSE_NODES_PER_ITEM };
}

export interface CompassDecision {
  on: boolean;
  /** `setting`: canopy.topics.enabled; `auto`: the index's grain and the scorer's held-back figure. */
  by: 'setting' | 'auto';
  reason: string;
}

export interface DecisionInput {
  /** canopy.topics.enabled. */
  enabled: boolean;
  grain: IndexGrain;
  /** The scorer checkpoint, when the compass can open; else why it cannot. */
  compass: { checkpoint: TopicScorerCheckpoint } | { reason: string };
  /** The default retrieval's candidates in words (describeFusion): a scorer trained on others does not count. */
  defaultCandidates: string;
}

const f3 = (x: number) => x.toFixed(3);

export function decideCompass(input: DecisionInput): CompassDecision {
  const { grain } = input;
  const perItem = `${grain.nodesPerItem.toFixed(1)} tree nodes per item`;
  if (input.enabled) {
    if ('reason' in input.compass) return { on: false, by: 'setting', reason: `canopy.topics.enabled is on, but retrieval stays the default: ${input.compass.reason}` };
    return { on: true, by: 'setting', reason: 'canopy.topics.enabled is on' };
  }
  if (!grain.coarse) {
    return { on: false, by: 'auto', reason: `off by default: this index's items are paragraph-sized (${perItem}, coarse from ${COARSE_NODES_PER_ITEM}), where the compass measured no gain over the default retrieval (docs/topics.md)` };
  }
  if ('reason' in input.compass) return { on: false, by: 'auto', reason: `off: the items are coarse (${perItem}), but ${input.compass.reason}` };
  const t = input.compass.checkpoint.training;
  if (t.candidates !== input.defaultCandidates) {
    return { on: false, by: 'auto', reason: `off: the items are coarse (${perItem}), but the scorer was trained on other candidates (${t.candidates ?? 'the equal-weight RRF hybrid'}) than today's default retrieval (${input.defaultCandidates}); run canopy topics train` };
  }
  if (t.source === 'synthetic') {
    return { on: false, by: 'auto', reason: `off: the items are coarse (${perItem}), but the scorer was trained on synthetic queries only (their text is in their own chunk: no measure of real questions); run canopy topics train with qrels, annotations or the teacher` };
  }
  const ie = t.heldOut?.['IE@3'];
  const ndcg = t.heldOut?.['nDCG@10'];
  if (!ie || !ndcg) return { on: false, by: 'auto', reason: `off: the items are coarse (${perItem}), but the scorer has no held-back figure (train it with a held-back share)` };
  if (t.heldOutQueries < MIN_HELD_OUT_QUERIES) return { on: false, by: 'auto', reason: `off: the items are coarse (${perItem}), but the scorer's held-back figure rests on ${t.heldOutQueries} queries (at least ${MIN_HELD_OUT_QUERIES} needed)` };
  const figures = `held-back IE@3 ${f3(ie.compass)} vs default ${f3(ie.hybrid)}, nDCG@10 ${f3(ndcg.compass)} vs ${f3(ndcg.hybrid)} on ${t.heldOutQueries} ${t.source} queries`;
  if (ie.compass > ie.hybrid && ndcg.compass >= ndcg.hybrid) return { on: true, by: 'auto', reason: `on: the items are coarse (${perItem}) and the compass beats the default retrieval here (${figures})` };
  return { on: false, by: 'auto', reason: `off: the items are coarse (${perItem}), but the compass does not beat the default retrieval here (${figures})` };
}
