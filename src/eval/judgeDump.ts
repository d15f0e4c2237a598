/**
 * What the judgment models train on (tools/judge): per question, the evidence the reader was given
 * — every kept region with its scores and what the rounds knew of its item — the gold (answer
 * strings, gold leaves) and each round's critic verdict, as one JSONL record. `canopy eval
 * --dump-judge <file>` writes it in every mode; the training script reads it back into the same
 * `KeptRegion`s the product's reader and critic compute their features from, so the features
 * trained on are the features used.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { KeptRegion } from '../core/critic/critic';
import type { RegionNode } from '../contracts/region';
import type { TraceCritic, StopReason } from '../contracts/trace';

export const JUDGE_DUMP_SCHEMA = 'canopy.judge-dump';

export interface SerializedRegion {
  itemId: string;
  itemTitle: string;
  file: string;
  node: RegionNode;
  score: number;
  /** Scores of the node's subtree and its ancestors: [id, score, dense?, lexical?]. */
  scores: Array<[string, number, number?, number?]>;
  rank?: number;
  round?: number;
  retrieval?: number;
  document?: KeptRegion['document'];
  leadIn?: string;
  /** A follow-up round's item: [id, cosine with the question] for the same nodes as `scores`. */
  questionScores?: Array<[string, number]>;
}

export interface JudgeRound {
  round: number;
  query: string;
  /** Items this round added to the evidence. */
  added: string[];
  critic?: TraceCritic;
}

export interface JudgeDumpRecord {
  schema: typeof JUDGE_DUMP_SCHEMA;
  dataset: string;
  questionId: string;
  question: string;
  /** Answer strings (any one counts, unless `allRequired`). */
  answers: string[];
  allRequired?: boolean;
  /**
   * Gold units resolved on the evidence items: a unit is in the evidence when all (`all`) or any
   * (`any`) of its leaves are kept. A unit whose document was never retrieved has leaf ids that
   * match nothing.
   */
  gold: Array<{ leafIds: string[]; mode: 'all' | 'any' }>;
  /** The items' ranks and scores came from real retrieval (pool mode), not from a given context's order. */
  retrieval: boolean;
  regions: SerializedRegion[];
  rounds: JudgeRound[];
  stop?: { reason: StopReason; round: number };
  truncated?: boolean;
}

/** The ids of a node's ancestors, from its path id (`item/0.2.1` → `item/0.2`, `item/0`, `item/`). */
function ancestors(id: string): string[] {
  const slash = id.lastIndexOf('/');
  const path = id.slice(slash + 1);
  const out: string[] = [];
  const parts = path.split('.');
  for (let i = parts.length - 1; i > 0; i--) out.push(`${id.slice(0, slash + 1)}${parts.slice(0, i).join('.')}`);
  return out;
}

export function serializeRegion(r: KeptRegion): SerializedRegion {
  const ids = new Set<string>(ancestors(r.node.id));
  const walk = (n: RegionNode) => {
    ids.add(n.id);
    n.children.forEach(walk);
  };
  walk(r.node);
  const scores: SerializedRegion['scores'] = [];
  for (const id of ids) {
    const s = r.leafScores?.get(id);
    if (s === undefined) continue;
    const c = r.components?.get(id);
    scores.push(c ? [id, s, c.dense, c.lexical] : [id, s]);
  }
  const questionScores: Array<[string, number]> = [];
  if (r.questionScores) for (const id of ids) if (r.questionScores.has(id)) questionScores.push([id, r.questionScores.get(id)!]);
  return {
    itemId: r.itemId,
    itemTitle: r.itemTitle,
    file: r.file,
    node: r.node,
    score: r.score,
    scores,
    ...(questionScores.length > 0 ? { questionScores } : {}),
    ...placeOf(r),
  };
}

/** The optional fields a kept region and its serialized form share as they are: where it was retrieved, its document, its table's lead-in. */
function placeOf(r: Pick<KeptRegion, 'rank' | 'round' | 'retrieval' | 'document' | 'leadIn'>): Pick<KeptRegion, 'rank' | 'round' | 'retrieval' | 'document' | 'leadIn'> {
  return {
    ...(r.rank !== undefined ? { rank: r.rank } : {}),
    ...(r.round !== undefined ? { round: r.round } : {}),
    ...(r.retrieval !== undefined ? { retrieval: r.retrieval } : {}),
    ...(r.document ? { document: r.document } : {}),
    ...(r.leadIn ? { leadIn: r.leadIn } : {}),
  };
}

export function deserializeRegion(s: SerializedRegion): KeptRegion {
  const leafScores = new Map<string, number>();
  const components = new Map<string, { dense: number; lexical: number }>();
  for (const [id, score, dense, lexical] of s.scores) {
    leafScores.set(id, score);
    if (dense !== undefined && lexical !== undefined) components.set(id, { dense, lexical });
  }
  return {
    itemId: s.itemId,
    itemTitle: s.itemTitle,
    file: s.file,
    node: s.node,
    score: s.score,
    leafScores,
    ...(components.size > 0 ? { components } : {}),
    ...placeOf(s),
    ...(s.questionScores ? { questionScores: new Map(s.questionScores) } : {}),
  };
}

/** Appends records to a JSONL file (created empty, with its folder, on construction). */
export class JudgeDumpWriter {
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '');
  }

  write(record: JudgeDumpRecord): void {
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
  }
}
