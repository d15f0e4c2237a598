/**
 * How the hybrid retriever fuses its two rankings, per encoder (design §4): reciprocal-rank
 * fusion (the design's equal-weight RRF, kept for comparison), or a score-level fusion — each
 * list's scores min-max normalised over the query's candidates, BM25 plus `dense` times the
 * cosine. The weight is fitted on qrels (the development data for the built-in encoder, a user's
 * own qrels or gold annotations through `canopy tune`), and the fitted profile travels with the
 * encoder: the built-in one is shipped here, a tuned one is read from the index folder.
 */
import { promises as fs } from 'node:fs';
import { CanopyError, ErrorCodes } from '../errors';
import { writeFileAtomic } from '../store/atomicFile';
import type { TraceSettings } from '../../contracts/trace';

export type FusionSetting = { kind: 'rrf'; rrfK: number; bm25Weight?: number } | { kind: 'linear'; dense: number; depth: number };

export interface RetrievalProfile {
  format: 'canopy.retrieval-profile';
  version: 1;
  /** The encoder the weights were fitted for (a prefix, for the built-in model's family). */
  encoder: string;
  fusion: FusionSetting;
  /** Where the weights came from and what they measured, for the trace and the docs. */
  fittedOn: string;
  figures?: Record<string, number>;
  /**
   * Node-score weights for the CANOPY rule (dense cosine and lexical evidence,
   * `compress/hybridScore.ts`), fitted by `canopy train` on the user's gold; questions for this
   * encoder use them unless a request names others. Absent: the dense cosine alone.
   */
  nodeScore?: ProfileNodeScore;
  /** Where the node-score weights came from and what the held-back questions measured (`canopy train`). */
  nodeScoreFittedOn?: string;
}

/** The node-score weights a profile carries (structurally `NodeScoreWeights`; retrieve sits below compress). */
export interface ProfileNodeScore {
  dense: number;
  lexical: number;
  model?: 'bm25' | 'coverage';
}

/** Most a node-score weight may be (the replay settings' range). */
const NODE_SCORE_MAX = 100;

export function validateNodeScore(n: unknown, where: string): ProfileNodeScore {
  const o = n as Partial<Record<string, unknown>> | null;
  const weight = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= NODE_SCORE_MAX;
  if (o && typeof o === 'object' && weight(o.dense) && weight(o.lexical) && (o.model === undefined || o.model === 'bm25' || o.model === 'coverage')) {
    return { dense: o.dense as number, lexical: o.lexical as number, ...(o.model !== undefined ? { model: o.model as 'bm25' | 'coverage' } : {}) };
  }
  throw new CanopyError(ErrorCodes.badInput, `${where}: nodeScore must be {dense, lexical} weights from 0 to ${NODE_SCORE_MAX}, model "bm25" or "coverage"`);
}

export const RRF_EQUAL: FusionSetting = { kind: 'rrf', rrfK: 60 };

/**
 * The built-in encoder's profile (USE-lite): fitted with tools/fit-fusion.ts on the development
 * pools (docs/evaluation.md, "Retrieval fusion: the encoder's profile"); w = 0.2 and 0.3 tie on
 * the mean, and the smaller weight stays closer to BM25. `canopy tune` fits one for another encoder.
 */
export const BUILTIN_PROFILE: RetrievalProfile = {
  format: 'canopy.retrieval-profile',
  version: 1,
  encoder: 'use-lite/',
  fusion: { kind: 'linear', dense: 0.2, depth: 100 },
  fittedOn: 'development pools HotpotQA (300 questions) and SciFact (809 queries), mean nDCG@10 0.726 against BM25 alone 0.721 and equal-weight RRF 0.548',
};

/** The profile for an encoder: the tuned one when its encoder matches, else the built-in one. */
export function profileFor(encoderId: string, tuned: RetrievalProfile | undefined): RetrievalProfile {
  if (tuned && encoderId.startsWith(tuned.encoder)) return tuned;
  return BUILTIN_PROFILE;
}

export const PROFILE_FILE = 'retrieval-profile.json';

export function validateFusion(f: unknown, where: string): FusionSetting {
  const o = f as Partial<Record<string, unknown>> | null;
  if (o && o.kind === 'rrf' && typeof o.rrfK === 'number' && o.rrfK > 0 && (o.bm25Weight === undefined || (typeof o.bm25Weight === 'number' && o.bm25Weight >= 0))) {
    return { kind: 'rrf', rrfK: o.rrfK, ...(o.bm25Weight !== undefined ? { bm25Weight: o.bm25Weight as number } : {}) };
  }
  if (o && o.kind === 'linear' && typeof o.dense === 'number' && o.dense >= 0 && Number.isInteger(o.depth) && (o.depth as number) >= 1) {
    return { kind: 'linear', dense: o.dense, depth: o.depth as number };
  }
  throw new CanopyError(ErrorCodes.badInput, `${where}: fusion must be {kind: "rrf", rrfK > 0} or {kind: "linear", dense ≥ 0, depth ≥ 1}`);
}

/** Reads a tuned profile; undefined when the file does not exist, E_BAD_INPUT naming the file when it is not a profile. */
export async function readProfile(file: string): Promise<RetrievalProfile | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let raw: Partial<RetrievalProfile>;
  try {
    raw = JSON.parse(text) as Partial<RetrievalProfile>;
  } catch (err) {
    throw new CanopyError(ErrorCodes.badInput, `${file} is not JSON: ${(err as Error).message}`, { file });
  }
  if (raw.format !== 'canopy.retrieval-profile' || raw.version !== 1 || typeof raw.encoder !== 'string') {
    throw new CanopyError(ErrorCodes.badInput, `${file} is not a Canopy retrieval profile of version 1`, { file });
  }
  return {
    format: raw.format,
    version: 1,
    encoder: raw.encoder,
    fusion: validateFusion(raw.fusion, file),
    fittedOn: String(raw.fittedOn ?? ''),
    ...(raw.figures ? { figures: raw.figures } : {}),
    ...(raw.nodeScore !== undefined ? { nodeScore: validateNodeScore(raw.nodeScore, file) } : {}),
    ...(raw.nodeScoreFittedOn !== undefined ? { nodeScoreFittedOn: String(raw.nodeScoreFittedOn) } : {}),
  };
}

/** What a trace's settings record about retrieval. */
export function retrievalRecord(r: { dense: boolean; bm25: boolean; fusion: FusionSetting }, topics: boolean): TraceSettings['retrieval'] {
  const f = r.fusion;
  return {
    dense: r.dense,
    bm25: r.bm25,
    topics,
    ...(f.kind === 'rrf' ? { fusion: 'rrf' as const, rrfK: f.rrfK, ...(f.bm25Weight !== undefined ? { bm25Weight: f.bm25Weight } : {}) } : { fusion: 'linear' as const, denseWeight: f.dense, depth: f.depth }),
  };
}

export async function writeProfile(file: string, profile: RetrievalProfile): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(profile, null, 2)}\n`);
}
