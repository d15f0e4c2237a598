/**
 * The scoring weights `canopy train` and the Train command fit beside the adapter (issue 17), on
 * the run's own split of the user's gold annotations — the same training and held-back
 * questions as the adapter's report:
 *
 * - the retrieval fusion: `tuneRetrieval.judgeQuestions` ranks every question over the index
 *   (an indexed item is relevant when it overlaps a gold span) and `retrieve/fitFusion.ts` fits on
 *   the training questions, exactly as `canopy tune` does; adopted when its mean nDCG@10 on the
 *   held-back questions is above the fusion in use;
 * - the node-score weights of the CANOPY rule (`train/nodeScoreFit.ts`): adopted when better on
 *   the held-back questions by the adapter report's figures.
 *
 * What is adopted is written into one place, the index's retrieval profile
 * (`<index>/retrieval-profile.json`, `retrieve/profile.ts`), for the encoder it was fitted with;
 * the AskService reads both from there for every later question with that encoder. What is not
 * adopted leaves the profile as it was.
 */
import * as path from 'node:path';
import type { SideMetrics } from '../../contracts/training';
import type { TokenCounter } from '../compress/tokens';
import { DENSE_ONLY, type NodeScoreWeights } from '../compress/hybridScore';
import { throwIfCancelled } from '../errors';
import type { CorpusIndex } from '../index/corpusIndex';
import { fitFusion, heldBackFusion, type JudgedQuestion } from '../retrieve/fitFusion';
import { describeFusion, isProfileOf, PROFILE_FILE, profileFor, readProfile, writeProfile, type FusionSetting, type RetrievalProfile } from '../retrieve/profile';
import { fitNodeScore, describeWeights, sameWeights, type NodeScoreFit } from '../train/nodeScoreFit';
import type { AskFit } from '../train/askFit';
import type { AskConfiguration } from '../train/askPipeline';
import { askCompressor, type CanopySettings } from '../config/settings';
import type { CompressorSetting } from '../../contracts/trace';
import type { ProfileGate } from '../retrieve/profile';
import type { PreparedRun } from '../train/run';
import type { FusionFitReport, ScoringReport } from '../train/scoringReport';
import { judgeQuestions, MIN_TUNE_QUESTIONS, TUNE_DEPTH } from './tuneRetrieval';

export { describeFusion } from '../retrieve/profile';

const sameFusion = (a: FusionSetting, b: FusionSetting) => JSON.stringify(a) === JSON.stringify(b);

export interface ScoringFitOptions {
  prepared: PreparedRun;
  encoderId: string;
  indexDir: string;
  /** The index to rank over; absent (or `corpusProblem`) skips the fusion fit with that reason. */
  corpus?: CorpusIndex;
  corpusProblem?: string;
  embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>;
  tokens: TokenCounter;
  /** Where the judgements came from, for the profile's `fittedOn`. */
  source: string;
  /** Report only; the profile is not written. */
  dryRun?: boolean;
  /**
   * The run's fit to the ask's configuration (`train/askFit.ts`): when given, the node-score
   * weights and the rank gate's options are the ones it chose, adopted when it was, instead of a
   * separate fit with the plain rule.
   */
  ask?: AskFit;
  signal?: AbortSignal;
}

/** The profile in the index folder when it is this encoder's; an unreadable one counts as none (and is replaced if something is adopted). */
async function tunedProfile(indexDir: string, encoderId: string): Promise<RetrievalProfile | undefined> {
  const tuned = await readProfile(path.join(indexDir, PROFILE_FILE)).catch(() => undefined);
  return tuned && isProfileOf(encoderId, tuned) ? tuned : undefined;
}

async function fitFusionOnSplit(o: ScoringFitOptions, current: FusionSetting): Promise<FusionFitReport> {
  const none = (reason: string, questions = { train: 0, heldBack: 0, unjudged: 0 }): FusionFitReport => ({ adopted: false, reason, questions, before: current });
  if (!o.corpus) return none(`no fusion fit: ${o.corpusProblem ?? 'no index'}`);
  const { split, prepared } = o.prepared;
  const questionsOf = (keys: readonly string[]) => keys.map((k) => ({ question: prepared.get(k)!.question, gold: prepared.get(k)!.gold }));
  const train = await judgeQuestions(o.corpus, o.embedQuery, questionsOf(split.kept), o.signal);
  const held = await judgeQuestions(o.corpus, o.embedQuery, questionsOf(split.heldBack), o.signal);
  const questions = { train: train.judged.length, heldBack: held.judged.length, unjudged: train.unjudged.length + held.unjudged.length };
  if (train.judged.length < MIN_TUNE_QUESTIONS) {
    return none(
      `no fusion fit: ${train.judged.length} training question(s) judge an indexed item relevant, at least ${MIN_TUNE_QUESTIONS} are needed` + (questions.unjudged > 0 ? ` (${questions.unjudged} judge nothing in the index — is the folder indexed?)` : ''),
      questions,
    );
  }
  return decideFusion(train.judged, held.judged, current, questions);
}

/**
 * Smallest gain in held-back mean nDCG@10 that adopts a fitted fusion: a refit that moves the
 * figure by less (HotpotQA gold: +0.0008) is noise, and the fusion in use stays.
 */
export const MIN_FUSION_GAIN = 0.005;

/**
 * Fits the fusion on the training questions' rankings and adopts it only when its mean nDCG@10
 * on the held-back questions is at least MIN_FUSION_GAIN above the fusion in use (`questions` is
 * what the report counts).
 */
export function decideFusion(train: readonly JudgedQuestion[], heldBackQuestions: readonly JudgedQuestion[], current: FusionSetting, questions: FusionFitReport['questions']): FusionFitReport {
  const fit = fitFusion(train, TUNE_DEPTH);
  const base = { questions, before: current, after: fit.best, trainNdcg: fit.ndcg };
  if (heldBackQuestions.length === 0) return { ...base, adopted: false, reason: 'no held-back question judges an indexed item relevant; the fit is not adopted' };
  const heldBack = heldBackFusion(heldBackQuestions, current, fit.best);
  if (sameFusion(fit.best, current)) return { ...base, heldBack, adopted: false, reason: 'the fit is the fusion in use' };
  const adopted = heldBack.after >= heldBack.before + MIN_FUSION_GAIN;
  return {
    ...base,
    heldBack,
    adopted,
    reason: adopted
      ? `mean nDCG@10 at least ${MIN_FUSION_GAIN} higher on the ${heldBack.questions} held-back question(s)`
      : `not ${MIN_FUSION_GAIN} higher mean nDCG@10 on the ${heldBack.questions} held-back question(s) than ${describeFusion(current)}; not adopted`,
  };
}

/**
 * The configuration an ask in this workspace runs with these settings (issue 36): the compressor
 * (`askCompressor`: the settings', or the gate fitted into the index's profile while the gate
 * settings are the defaults) and the node score (the profile's, unless the settings ask for the
 * dense cosine alone).
 */
export async function askConfiguration(s: CanopySettings, encoderId: string, indexDir: string | undefined): Promise<AskConfiguration> {
  const tuned = indexDir ? await tunedProfile(indexDir, encoderId) : undefined;
  const profile = profileFor(encoderId, tuned);
  return { compressor: askCompressor(s, profile.gate), nodeScore: s.nodeScore === 'dense' ? DENSE_ONLY : (profile.nodeScore ?? DENSE_ONLY) };
}

/** The gate options of a compressor, in the profile's form (0: no whole size; the item order when trained). */
export function gateOf(c: CompressorSetting): ProfileGate | undefined {
  return c.name === 'canopy' && c.items !== undefined ? { items: c.items, minItems: c.minItems ?? 1, wholeBelow: c.wholeBelow ?? 0, ...(c.itemOrder ? { order: { ...c.itemOrder } } : {}) } : undefined;
}

/** The ask fit's node-score part, in the form of the plain rule's node-score fit (the ask's figures). */
function nodeScoreFromAsk(ask: AskFit): NodeScoreFit {
  const same = sameWeights(ask.before.nodeScore, ask.after.nodeScore);
  return {
    before: ask.before.nodeScore,
    after: ask.after.nodeScore,
    train: ask.train,
    ...(ask.heldBack ? { heldBack: { before: ask.heldBack.before, after: ask.heldBack.after } } : {}),
    adopted: ask.adopted && !same,
    reason: same ? `the fit to the ask's configuration kept ${describeWeights(ask.before.nodeScore)}` : `fitted with the ask's configuration: ${ask.reason}`,
    candidates: ask.tried,
  };
}

/** Fits both, and writes what is adopted into the index's retrieval profile (see the file comment). */
export async function fitScoring(o: ScoringFitOptions): Promise<ScoringReport> {
  const tuned = await tunedProfile(o.indexDir, o.encoderId);
  const currentFusion = profileFor(o.encoderId, tuned).fusion;
  // What asks use now: the tuned profile's weights, else the built-in encoder's, else the cosine alone.
  const currentNode: NodeScoreWeights = profileFor(o.encoderId, tuned).nodeScore ?? DENSE_ONLY;
  const { split, prepared } = o.prepared;
  const nodeScore = o.ask
    ? nodeScoreFromAsk(o.ask)
    : fitNodeScore({
        train: split.kept.map((k) => prepared.get(k)!),
        heldBack: split.heldBack.map((k) => prepared.get(k)!),
        tokens: o.tokens,
        current: currentNode,
        ...(o.signal ? { signal: o.signal } : {}),
      });
  const gateBefore = o.ask ? gateOf(o.ask.before.compressor) : undefined;
  const gateAfter = o.ask ? gateOf(o.ask.after.compressor) : undefined;
  const gate = gateBefore && gateAfter ? { before: gateBefore, after: gateAfter, adopted: o.ask!.adopted && JSON.stringify(gateBefore) !== JSON.stringify(gateAfter) } : undefined;
  throwIfCancelled(o.signal);
  const fusion = await fitFusionOnSplit(o, currentFusion);
  const out: ScoringReport = { fusion, nodeScore, ...(gate ? { gate } : {}) };
  if (o.dryRun || (!fusion.adopted && !nodeScore.adopted && !gate?.adopted)) return out;
  const when = new Date().toISOString().slice(0, 10);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const profile: RetrievalProfile = {
    format: 'canopy.retrieval-profile',
    version: 1,
    encoder: o.encoderId,
    fusion: fusion.adopted ? fusion.after! : currentFusion,
    fittedOn: fusion.adopted
      ? `canopy train ${when}: ${fusion.questions.train} training question(s) from ${o.source} (mean nDCG@10 ${fusion.trainNdcg!.toFixed(3)}); held back ${fusion.heldBack!.questions}: ${fusion.heldBack!.before.toFixed(3)} → ${fusion.heldBack!.after.toFixed(3)}`
      : (tuned?.fittedOn ?? `the built-in profile: ${profileFor(o.encoderId, undefined).fittedOn}`),
    ...(fusion.adopted ? {} : tuned?.figures ? { figures: tuned.figures } : {}),
  };
  const node = nodeScore.adopted ? nodeScore.after : tuned?.nodeScore;
  // Not adopted and not tuned before: the file says nothing and asks keep the built-in weights (profileFor).
  if (node) profile.nodeScore = { dense: node.dense, lexical: node.lexical, ...(node.model ? { model: node.model } : {}) };
  if (nodeScore.adopted) {
    const h = nodeScore.heldBack!;
    profile.nodeScoreFittedOn = `canopy train ${when}: ${describeWeights(nodeScore.after)} over ${describeWeights(nodeScore.before)} on ${o.prepared.split.kept.length} training question(s) from ${o.source}; held back ${h.after.questions}: gold recall ${pct(h.before.goldRecall)} → ${pct(h.after.goldRecall)}, tokens ${h.before.evidenceTokens} → ${h.after.evidenceTokens}, decision accuracy ${pct(h.before.decisionAccuracy)} → ${pct(h.after.decisionAccuracy)}`;
  } else if (tuned?.nodeScoreFittedOn) profile.nodeScoreFittedOn = tuned.nodeScoreFittedOn;
  if (gate?.adopted) {
    const h = o.ask!.heldBack!;
    profile.gate = gate.after;
    profile.gateFittedOn = `canopy train ${when}: ${o.ask!.describe.after} over ${o.ask!.describe.before} on ${o.prepared.split.kept.length} training question(s) from ${o.source}; held back ${h.after.questions}, the ask's configuration: gold recall ${pct(h.before.goldRecall)} → ${pct(h.after.goldRecall)}, tokens ${h.before.evidenceTokens} → ${h.after.evidenceTokens}, decision accuracy ${pct(h.before.decisionAccuracy)} → ${pct(h.after.decisionAccuracy)}`;
  } else if (tuned?.gate) {
    profile.gate = tuned.gate;
    if (tuned.gateFittedOn) profile.gateFittedOn = tuned.gateFittedOn;
  }
  const file = path.join(o.indexDir, PROFILE_FILE);
  await writeProfile(file, profile);
  out.profile = { file };
  return out;
}

/** A few lines for a terminal: each fit's before/after on the held-back questions, and whether it was adopted. */
export function formatScoring(r: ScoringReport): string[] {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const f = r.fusion;
  const lines = [`retrieval fusion (${f.questions.train} training, ${f.questions.heldBack} held-back questions judged over the index):`];
  if (f.heldBack && f.after) {
    lines.push(`  before  ${describeFusion(f.before)}: nDCG@10 ${f.heldBack.before.toFixed(3)}`);
    lines.push(`  fitted  ${describeFusion(f.after)}: nDCG@10 ${f.heldBack.after.toFixed(3)}`);
  }
  lines.push(`  ${f.adopted ? 'adopted' : 'kept the fusion in use'} — ${f.reason}`);
  const n = r.nodeScore;
  lines.push(`node scores (CANOPY rule, ${n.candidates} weightings tried on the training questions):`);
  const side = (name: string, w: NodeScoreWeights, m: SideMetrics) =>
    `  ${name.padEnd(7)} ${describeWeights(w)}: decision acc ${pct(m.decisionAccuracy)}  gold recall ${pct(m.goldRecall)}  tokens ${m.evidenceTokens} (${pct(m.tokenShare)} of whole)`;
  if (n.heldBack) {
    lines.push(side('before', n.before, n.heldBack.before));
    lines.push(side('fitted', n.after, n.heldBack.after));
  }
  lines.push(`  ${n.adopted ? 'adopted' : 'kept the weights in use'} — ${n.reason}`);
  if (r.profile) lines.push(`retrieval profile: ${r.profile.file}`);
  return lines;
}
