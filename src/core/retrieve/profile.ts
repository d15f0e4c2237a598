/**
 * How the hybrid retriever fuses its two rankings, per encoder (design §4): reciprocal-rank
 * fusion (the design's equal-weight RRF, kept for comparison), or a score-level fusion — each
 * list's scores min-max normalised over the query's candidates, BM25 plus `dense` times the
 * cosine. The weight is fitted on qrels (the development data for the built-in encoder, a user's
 * own qrels or gold annotations through `canopy tune`), and the fitted profile travels with the
 * encoder: the built-in one is shipped here, a tuned one is read from the index folder.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CanopyError, ErrorCodes } from '../errors';
import { writeFileAtomic } from '../store/atomicFile';
import { type FusionSetting, RetrievalProfile } from '../../contracts/retrievalProfile';
import type { TraceSettings } from '../../contracts/trace';
import { check } from '../../contracts/validation';

export type { FusionSetting, ProfileGate, ProfileNodeScore, RetrievalProfile } from '../../contracts/retrievalProfile';

export const RRF_EQUAL: FusionSetting = { kind: 'rrf', rrfK: 60 };

/**
 * The built-in encoder's profile (USE-lite): fitted with tools/fit-fusion.ts on the development
 * pools (docs/evaluation.md, "Retrieval fusion: the encoder's profile"): 0.4 × BM25 per field +
 * 0.6 × flat BM25 + 0.15 × cosine, the best mean nDCG@10 over HotpotQA, SciFact and MuSiQue (a
 * plateau: five neighbours within 0.0005), and above BM25 alone on each. The former profile (BM25 + 0.2 × cosine, no flat list) stays
 * selectable as `hybrid:linear=0.2` in `canopy eval`. `canopy tune` fits one for another encoder.
 */
export const BUILTIN_PROFILE: RetrievalProfile = {
  format: 'canopy.retrieval-profile',
  version: 1,
  encoder: 'use-lite/',
  fusion: { kind: 'linear', dense: 0.15, depth: 100, flat: 0.6 },
  fittedOn:
    'development pools HotpotQA (300 questions), SciFact (809 queries) and MuSiQue (100 questions), nDCG@10 0.775 / 0.703 / 0.596 against BM25 alone 0.769 / 0.674 / 0.586 and the former profile (BM25 + 0.2 × cosine) 0.776 / 0.681 / 0.586',
  // The cosine beside the IDF-weighted coverage of the question's terms (hybridScore.ts): with the
  // rank gate and the glimpse, the only node score that keeps CANOPY at or above flat top-m at equal
  // tokens on all six given-items sets (SciFact −3.9 with the cosine alone; docs/evaluation.md).
  nodeScore: { dense: 1, lexical: 0.5, model: 'coverage' },
  nodeScoreFittedOn:
    'given-items development splits (HotpotQA 300, 2Wiki 250, MuSiQue 100, SciFact 809, TAT-QA 829, FeTaQA 300) with the rank gate and the glimpse: CANOPY − flat top-m at equal tokens +8.3 / +3.6 / +4.8 / +0.9 / +9.5 / +10.4 points of gold recall; lexical weights 0.25–3 and the BM25 model measured lower on SciFact',
};

/**
 * The profile for an encoder: the tuned one when its encoder matches, else the built-in one. A
 * tuned profile of the built-in encoder without node-score weights (`canopy tune` fits only the
 * fusion) keeps the built-in node score rather than falling back to the cosine alone.
 */
export function profileFor(encoderId: string, tuned: RetrievalProfile | undefined): RetrievalProfile {
  if (tuned && encoderId.startsWith(tuned.encoder)) {
    if (tuned.nodeScore || !encoderId.startsWith(BUILTIN_PROFILE.encoder)) return tuned;
    return { ...tuned, nodeScore: BUILTIN_PROFILE.nodeScore!, nodeScoreFittedOn: `the built-in profile's: ${BUILTIN_PROFILE.nodeScoreFittedOn}` };
  }
  return BUILTIN_PROFILE;
}

/** A fusion in words, for reports and the CLI: "BM25 (0.6 flat) + 0.15 × cosine (top 100 of each)", "RRF k=60". */
export function describeFusion(f: FusionSetting): string {
  return f.kind === 'linear' ? `${f.flat ? `BM25 (${f.flat} flat)` : 'BM25'} + ${f.dense} × cosine (top ${f.depth} of each)` : `RRF k=${f.rrfK}`;
}

/** Whether `tuned` is the profile an encoder's questions use (its encoder matches). */
export const isProfileOf = (encoderId: string, tuned: RetrievalProfile): boolean => encoderId.startsWith(tuned.encoder);

export const PROFILE_FILE = 'retrieval-profile.json';

/** Reads a tuned profile; undefined when the file does not exist, E_BAD_INPUT naming the file when it is not a profile. */
export async function readProfile(file: string): Promise<RetrievalProfile | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CanopyError(ErrorCodes.badInput, `${file} is not JSON: ${(err as Error).message}`, { file });
  }
  const head = raw as { format?: unknown; version?: unknown } | null;
  if (head === null || typeof head !== 'object' || head.format !== 'canopy.retrieval-profile' || head.version !== 1) {
    throw new CanopyError(ErrorCodes.badInput, `${file} is not a Canopy retrieval profile of version 1`, { file });
  }
  const checked = check(RetrievalProfile, raw, 'profile');
  if (!checked.ok) throw new CanopyError(ErrorCodes.badInput, `${file}: ${checked.problem}`, { file });
  return checked.value;
}

/** What a trace's settings record about retrieval. */
export function retrievalRecord(r: { dense: boolean; bm25: boolean; fusion: FusionSetting }, topics: boolean, topicsReason?: string): TraceSettings['retrieval'] {
  const f = r.fusion;
  return {
    dense: r.dense,
    bm25: r.bm25,
    topics,
    ...(topicsReason ? { topicsReason } : {}),
    ...(f.kind === 'rrf' ? { fusion: 'rrf' as const, rrfK: f.rrfK, ...(f.bm25Weight !== undefined ? { bm25Weight: f.bm25Weight } : {}) } : { fusion: 'linear' as const, denseWeight: f.dense, depth: f.depth, ...(f.flat ? { flatWeight: f.flat } : {}) }),
  };
}

/**
 * The profile an index's questions use: the tuned one in the index folder when it is this
 * encoder's, else the built-in one; a tuned file that cannot be read counts as absent here (the
 * ask service reports it as a warning).
 */
export async function indexProfile(indexDir: string, encoderId: string): Promise<RetrievalProfile> {
  const tuned = await readProfile(path.join(indexDir, PROFILE_FILE)).catch(() => undefined);
  return profileFor(encoderId, tuned);
}

export async function writeProfile(file: string, profile: RetrievalProfile): Promise<void> {
  // The index folder may not exist yet (a fit to the ask's configuration needs no index).
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify(profile, null, 2)}\n`);
}
