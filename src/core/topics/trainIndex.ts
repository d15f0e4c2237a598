/**
 * Training the topic-compass scorer against a real index (design §4, MCompassRAG §3.3): labelled
 * queries come from dataset qrels, gold annotations, synthetic queries from the documents' own
 * structure, or — when an LLM is configured — an LLM teacher (base and expanded queries written
 * from a chunk and its neighbours, candidates of the expanded query judged by the teacher; the
 * student is trained on the base query only). Each query runs through the hybrid retriever of
 * the index; its candidates, with the gold marked, become one scorer group. Seeded: the same
 * inputs give the same split and the same weights. A held-back share of the queries is never
 * trained on and is scored at the end (IE@1/3/5 of the hybrid order and of the compass order).
 */
import type { ChatModel } from '../llm/llm';
import { ieAtK, ndcgAtK } from '../retrieve/metrics';
import type { Retriever } from '../retrieve/retriever';
import type { TopicBank } from './bank';
import { defaultCompassOptions, type CompassOptions } from './compass';
import type { TopicScorerCheckpoint } from './indexTopics';
import { TopicScorer } from './scorer';
import { scorerGroups, splitByQuery, syntheticQueries, trainTopicScorer, type LabelledCandidates } from './training';
import { seededRandom } from '../random';
import { shuffled } from './vectorMath';

export interface TrainingQuery {
  id: string;
  text: string;
  /** Item ids that answer it. */
  positives: string[];
}

export type TrainingSource = TopicScorerCheckpoint['training']['source'];

export interface CompassTrainingOptions {
  seed?: number;
  /** Share of the queries held back (never trained on); default 0.2. 0 trains on all. */
  holdout?: number;
  compass?: Partial<CompassOptions>;
  /** Hybrid candidates per query; default 50. */
  candidates?: number;
  hidden?: number;
  epochs?: number;
  loss?: 'listwise' | 'bce';
  /** false: train on the base features only (the control without topic signal); default true. */
  topicFeatures?: boolean;
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

export interface LabelledQuery extends LabelledCandidates {
  id: string;
}

/** Runs each query through the hybrid retriever: its vector, candidates and gold. */
export async function labelQueries(
  hybrid: Retriever,
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>,
  queries: readonly TrainingQuery[],
  options: { candidates?: number; onProgress?: (message: string) => void; signal?: AbortSignal } = {},
): Promise<LabelledQuery[]> {
  const depth = options.candidates ?? 50;
  const out: LabelledQuery[] = [];
  for (const q of queries) {
    options.signal?.throwIfAborted();
    const r = await hybrid.retrieve(q.text, depth, { candidates: depth, ...(options.signal ? { signal: options.signal } : {}) });
    out.push({ id: q.id, eq: await embedQuery(q.text, options.signal), candidates: r.candidates.slice(0, depth), positives: new Set(q.positives) });
    if (out.length % 100 === 0) options.onProgress?.(`labelled ${out.length}/${queries.length} queries`);
  }
  return out;
}

/** Ranks each query's candidates with a scorer (ties keep the hybrid order). */
export function rankWith(bank: TopicBank, scorer: TopicScorer | undefined, queries: readonly LabelledQuery[], compass: CompassOptions): string[][] {
  const groups = scorerGroups(bank, queries, compass);
  return queries.map((q, i) => {
    const ids = q.candidates.map((c) => c.itemId);
    if (!scorer) return ids;
    const rows = groups[i]!.rows;
    const s = rows.map((row, j) => ({ id: ids[j]!, score: scorer.score(row, true), j }));
    return s.sort((a, b) => b.score - a.score || a.j - b.j).map((x) => x.id);
  });
}

/** Mean IE@k over queries (a query with no gold counts 0 when it has gold outside the candidates). */
export function meanIe(ranked: readonly string[][], queries: readonly LabelledQuery[], k: number): number {
  if (queries.length === 0) return Number.NaN;
  return ranked.reduce((s, r, i) => s + ieAtK(r, queries[i]!.positives, k), 0) / queries.length;
}

/** Mean nDCG@k over queries, every positive of grade 1. */
export function meanNdcg(ranked: readonly string[][], queries: readonly LabelledQuery[], k: number): number {
  if (queries.length === 0) return Number.NaN;
  return ranked.reduce((s, r, i) => s + ndcgAtK(r, new Map([...queries[i]!.positives].map((p) => [p, 1])), k), 0) / queries.length;
}

/** Trains the scorer on the labelled queries' training split; returns the checkpoint. */
export function trainOnLabelled(
  bank: TopicBank,
  labelled: readonly LabelledQuery[],
  meta: { source: TrainingSource; encoderId: string; notes?: string[]; candidates?: string },
  options: CompassTrainingOptions = {},
): { checkpoint: TopicScorerCheckpoint; scorer: TopicScorer; train: LabelledQuery[]; heldOut: LabelledQuery[] } {
  const seed = options.seed ?? 1;
  const compass: CompassOptions = { ...defaultCompassOptions, ...options.compass };
  const split = splitByQuery(
    labelled.map((q) => q.id),
    options.holdout ?? 0.2,
    seed,
  );
  const held = new Set(split.heldOut);
  const heldOut = labelled.filter((q) => held.has(q.id));
  // A training query whose gold is not among its candidates teaches the listwise loss nothing.
  const train = labelled.filter((q) => !held.has(q.id) && q.candidates.some((c) => q.positives.has(c.itemId)));
  if (train.length === 0) throw new Error('no training query has a gold item among its hybrid candidates');
  const trained = trainTopicScorer(scorerGroups(bank, train, compass), {
    seed,
    ...(options.topicFeatures === false ? { topics: false } : {}),
    ...(options.hidden !== undefined ? { hidden: options.hidden } : {}),
    ...(options.epochs !== undefined ? { epochs: options.epochs } : {}),
    ...(options.loss ? { loss: options.loss } : {}),
  });
  let heldOutMetrics: TopicScorerCheckpoint['training']['heldOut'];
  if (heldOut.length > 0) {
    const base = rankWith(bank, undefined, heldOut, compass);
    const comp = rankWith(bank, trained.scorer, heldOut, compass);
    heldOutMetrics = Object.fromEntries([1, 3, 5].map((k) => [`IE@${k}`, { hybrid: meanIe(base, heldOut, k), compass: meanIe(comp, heldOut, k) }]));
    heldOutMetrics['nDCG@10'] = { hybrid: meanNdcg(base, heldOut, 10), compass: meanNdcg(comp, heldOut, 10) };
  }
  const checkpoint: TopicScorerCheckpoint = {
    format: 'canopy.topic-scorer',
    version: 1,
    createdAt: new Date().toISOString(),
    encoderId: meta.encoderId,
    compass: { selectEntries: compass.selectEntries, topics: compass.topics, selection: compass.selection, abstraction: compass.abstraction, candidates: options.candidates ?? 50 },
    weights: trained.scorer.toJSON(),
    training: {
      source: meta.source,
      seed,
      trainQueries: train.length,
      heldOutQueries: heldOut.length,
      losses: trained.losses.map((l) => Math.round(l * 1e4) / 1e4),
      ...(meta.candidates ? { candidates: meta.candidates } : {}),
      ...(heldOutMetrics ? { heldOut: heldOutMetrics } : {}),
      ...(meta.notes && meta.notes.length > 0 ? { notes: meta.notes } : {}),
    },
  };
  return { checkpoint, scorer: trained.scorer, train, heldOut };
}

/** Synthetic training queries from the documents' structure (first sentence, else title). */
export function structuralQueries(items: ReadonlyMap<string, { title: string; text: string }>, count: number, seed = 1): TrainingQuery[] {
  const chunks = [...items].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, t]) => ({ id, title: t.title, text: t.text }));
  return syntheticQueries(chunks, { count, seed }).map((q) => ({ id: q.queryId, text: q.text, positives: q.positives }));
}

const teacherSystem =
  'You write search queries for a retrieval benchmark and judge evidence. Answer with one JSON object and nothing else.';

function parseJson(text: string): Record<string, unknown> | undefined {
  const m = /\{[\s\S]*\}/.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(m[0]) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * The LLM teacher (MCompassRAG §3.3, prompts A.1/A.2 in spirit): for each sampled chunk, a base
 * question that needs the chunk without revealing its answer, and an expanded question with
 * context from the neighbouring chunks; then the teacher judges the expanded question's top
 * hybrid candidates (direct or supporting evidence only, not topical similarity). The student
 * (the scorer) is trained on the base question with the chunk and the teacher's positives as
 * gold. Runs offline (training), never at query time.
 */
export async function teacherQueries(
  llm: ChatModel,
  items: ReadonlyMap<string, { title: string; text: string }>,
  hybrid: Retriever,
  options: { count: number; seed?: number; judge?: number; signal?: AbortSignal; onProgress?: (m: string) => void },
): Promise<{ queries: TrainingQuery[]; failures: number }> {
  const ids = [...items.keys()].sort();
  const picked = shuffled(ids, seededRandom(options.seed ?? 1)).slice(0, options.count);
  const queries: TrainingQuery[] = [];
  let failures = 0;
  const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);
  for (const id of picked) {
    options.signal?.throwIfAborted();
    const at = ids.indexOf(id);
    const target = items.get(id)!;
    const prev = at > 0 ? items.get(ids[at - 1]!) : undefined;
    const next = at + 1 < ids.length ? items.get(ids[at + 1]!) : undefined;
    const gen = await llm
      .chat(
        [
          { role: 'system', content: teacherSystem },
          {
            role: 'user',
            content:
              `Previous chunk:\n${clip(prev?.text ?? '', 1200)}\n\nTarget chunk (${target.title}):\n${clip(target.text, 2400)}\n\nNext chunk:\n${clip(next?.text ?? '', 1200)}\n\n` +
              'Write {"base": a natural question that needs information in the target chunk, without copying it or revealing the answer, "expanded": the base question with helpful context from the neighbouring chunks, no answer hints}.',
          },
        ],
        { json: true, temperature: 0.7, maxTokens: 300, ...(options.signal ? { signal: options.signal } : {}) },
      )
      .catch(() => undefined);
    const parsed = gen ? parseJson(gen.text) : undefined;
    const base = typeof parsed?.base === 'string' ? parsed.base.trim() : '';
    const expanded = typeof parsed?.expanded === 'string' ? parsed.expanded.trim() : base;
    if (!base) {
      failures++;
      continue;
    }
    const positives = new Set([id]);
    const r = await hybrid.retrieve(expanded, options.judge ?? 3, options.signal ? { signal: options.signal } : {});
    for (const c of r.items.slice(0, options.judge ?? 3)) {
      if (c.item.id === id) continue;
      const verdict = await llm
        .chat(
          [
            { role: 'system', content: teacherSystem },
            {
              role: 'user',
              content: `Question: ${expanded}\n\nChunk:\n${clip(c.item.root.text, 2400)}\n\nIs the chunk relevant: does it give direct or supporting evidence for answering the question (not merely the same topic)? Answer {"relevant": true|false}.`,
            },
          ],
          { json: true, temperature: 0, maxTokens: 20, ...(options.signal ? { signal: options.signal } : {}) },
        )
        .catch(() => undefined);
      if (verdict && parseJson(verdict.text)?.relevant === true) positives.add(c.item.id);
    }
    queries.push({ id: `teacher:${id}`, text: base, positives: [...positives] });
    if (queries.length % 20 === 0) options.onProgress?.(`teacher: ${queries.length}/${picked.length} queries`);
  }
  return { queries, failures };
}
