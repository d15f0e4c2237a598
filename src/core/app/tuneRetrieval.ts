/**
 * `canopy tune`: fits the retrieval profile of the encoder in use from a workspace's own
 * judgements — its gold annotations (an item is relevant when its region covers a gold span) or a
 * qrels file naming relevant files per question — and writes it into the index folder, where the
 * `AskService` finds it (`retrieve/profile.ts`). The fit itself is `retrieve/fitFusion.ts`, the
 * same one that produced the built-in profile from the development pools.
 */
import * as path from 'node:path';
import type { Anchor } from '../../contracts/region';
import { coverage } from '../annotate/overlap';
import type { Annotation } from '../annotate/store';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import type { CorpusIndex } from '../index/corpusIndex';
import { seededRandom } from '../random';
import { fitFusion, heldBackFusion, type FusionFit, type HeldBackFusion, type JudgedQuestion } from '../retrieve/fitFusion';
import { PROFILE_FILE, readProfile, writeProfile, type FusionSetting, type RetrievalProfile } from '../retrieve/profile';

/** One judged question: its text and what makes an item relevant. */
export interface TuneQuestion {
  question: string;
  /** Gold spans: an item whose root region overlaps one is relevant (grade 1). */
  gold?: Anchor[];
  /** Relevant files (workspace-relative): every item of such a file is relevant, with this grade. */
  files?: Array<{ file: string; grade: number }>;
}

/** Fewer judged questions than this cannot support a fit worth shipping. */
export const MIN_TUNE_QUESTIONS = 5;
/** How deep each ranker's list is read (the retriever's pool for the linear fusion). */
export const TUNE_DEPTH = 100;

/** Annotations grouped into questions (by dataset id where imported, else by the question text). */
export function questionsFromAnnotations(annotations: readonly Annotation[]): TuneQuestion[] {
  const byKey = new Map<string, TuneQuestion>();
  for (const a of annotations) {
    const key = a.questionId ?? a.question;
    let q = byKey.get(key);
    if (!q) byKey.set(key, (q = { question: a.question, gold: [] }));
    q.gold!.push(a.anchor);
  }
  return [...byKey.values()];
}

async function qrelsOf(corpus: CorpusIndex, q: TuneQuestion): Promise<Map<string, number>> {
  const qrels = new Map<string, number>();
  for (const { file, grade } of q.files ?? []) for (const id of corpus.manifest.files[file]?.items ?? []) qrels.set(id, Math.max(grade, qrels.get(id) ?? 0));
  const gold = q.gold ?? [];
  for (const file of new Set(gold.map((a) => a.file))) {
    for (const id of corpus.manifest.files[file]?.items ?? []) {
      const item = await corpus.item(id);
      if (coverage(item.root.anchor, gold) > 0 || gold.some((g) => coverage(g, [item.root.anchor]) > 0)) qrels.set(id, Math.max(1, qrels.get(id) ?? 0));
    }
  }
  return qrels;
}

export interface TuneResult {
  profile: RetrievalProfile;
  fit: FusionFit;
  /** Questions left out: nothing they judge relevant is in the index. */
  unjudged: string[];
  /** Where the profile was written (absent with `dryRun`). */
  file?: string;
  /**
   * With a holdout: the fit used only the other questions, and both the fusion in use before and
   * the fitted one are measured on the held-back ones (mean nDCG@10).
   */
  heldBack?: HeldBackFusion;
}


/**
 * Each question's rankings (dense, BM25 per field and flat; depth `TUNE_DEPTH`) and graded relevance over the index, in the
 * order given; a question that judges nothing in the index relevant is left out (`unjudged`).
 */
export async function judgeQuestions(
  corpus: CorpusIndex,
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>,
  questions: readonly TuneQuestion[],
  signal?: AbortSignal,
): Promise<{ judged: Array<JudgedQuestion & { index: number }>; unjudged: string[] }> {
  const judged: Array<JudgedQuestion & { index: number }> = [];
  const unjudged: string[] = [];
  for (const [index, q] of questions.entries()) {
    throwIfCancelled(signal);
    const qrels = await qrelsOf(corpus, q);
    if (![...qrels.values()].some((g) => g > 0)) {
      unjudged.push(q.question);
      continue;
    }
    const dense = await corpus.vectors.query(await embedQuery(q.question, signal), TUNE_DEPTH);
    const lexical = await corpus.lexical.query(q.question, TUNE_DEPTH);
    const flat = await corpus.lexical.query(q.question, TUNE_DEPTH, undefined, 'flat');
    const ranked = (hits: Array<{ id: string; score: number }>) => hits.map((h) => ({ id: h.id, score: h.score }));
    judged.push({ index, dense: ranked(dense), lexical: ranked(lexical), flat: ranked(flat), qrels });
  }
  return { judged, unjudged };
}

export async function tuneRetrieval(o: {
  corpus: CorpusIndex;
  indexDir: string;
  encoderId: string;
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>;
  questions: readonly TuneQuestion[];
  /** Where the judgements came from, for the profile's `fittedOn`. */
  source: string;
  dryRun?: boolean;
  /** Share of questions held back (seeded) to report before/after; 0 (default) fits on all. */
  holdout?: number;
  seed?: number;
  /** The fusion in use before tuning (the "before" of the held-back report). */
  current?: FusionSetting;
  signal?: AbortSignal;
}): Promise<TuneResult> {
  const { judged, unjudged } = await judgeQuestions(o.corpus, o.embedQuery, o.questions, o.signal);
  if (judged.length < MIN_TUNE_QUESTIONS) {
    throw new CanopyError(
      ErrorCodes.badInput,
      `${o.source}: ${judged.length} question(s) judge an indexed item relevant; tuning needs at least ${MIN_TUNE_QUESTIONS}` +
        (unjudged.length > 0 ? ` (${unjudged.length} judge nothing in the index — is the folder indexed?)` : ''),
    );
  }
  const holdout = o.holdout ?? 0;
  let train: JudgedQuestion[] = judged;
  let test: JudgedQuestion[] = [];
  if (holdout > 0) {
    const random = seededRandom(o.seed ?? 1);
    const order = judged.map((q) => ({ q, r: random() })).sort((a, b) => a.r - b.r).map((x) => x.q);
    const n = Math.max(1, Math.round(holdout * order.length));
    test = order.slice(0, n);
    train = order.slice(n);
    if (train.length < MIN_TUNE_QUESTIONS) {
      throw new CanopyError(ErrorCodes.badInput, `${o.source}: holding back ${n} of ${judged.length} judged questions leaves ${train.length} to fit on; at least ${MIN_TUNE_QUESTIONS} are needed`);
    }
  }
  const fit = fitFusion(train, TUNE_DEPTH);
  // Node-score weights `canopy train` fitted for this encoder stay; an unreadable profile is replaced.
  const existing = await readProfile(path.join(o.indexDir, PROFILE_FILE)).catch(() => undefined);
  const kept = existing?.nodeScore && existing.encoder === o.encoderId ? { nodeScore: existing.nodeScore, ...(existing.nodeScoreFittedOn ? { nodeScoreFittedOn: existing.nodeScoreFittedOn } : {}) } : {};
  const profile: RetrievalProfile = {
    format: 'canopy.retrieval-profile',
    version: 1,
    encoder: o.encoderId,
    fusion: fit.best,
    fittedOn: `${fit.questions} question(s) from ${o.source} (mean nDCG@10)`,
    figures: fit.figures,
    ...kept,
  };
  const out: TuneResult = { profile, fit, unjudged };
  if (test.length > 0) {
    out.heldBack = heldBackFusion(test, o.current ?? { kind: 'rrf', rrfK: 60 }, fit.best);
  }
  if (!o.dryRun) {
    const file = path.join(o.indexDir, PROFILE_FILE);
    await writeProfile(file, profile);
    out.file = file;
  }
  return out;
}
