/**
 * Replay (design §9): the round engine over a trace's own recorded rankings, scores and critic
 * verdicts (engine/recorded.ts) with other settings — branching factor B, k, rounds, compressor,
 * critic — returning a new trace that says what was replayed. Nothing is re-embedded: the
 * encoder is never called. Replaying with the recorded settings reproduces the recorded trace
 * (tested over every recorded configuration).
 */
import { isDenseOnly } from '../compress/hybridScore';
import type { TokenCounter } from '../compress/tokens';
import { evidenceKey, type Critic, type CriticVerdict } from '../critic/critic';
import { RuleCritic } from '../critic/ruleCritic';
import { LearnedCritic } from '../judge/learnedCritic';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { systemClock, type Clock } from '../ports';
import { ExtractiveReader } from '../read/extractiveReader';
import type { Reader } from '../read/reader';
import { ReplaySettings } from '../../contracts/askSettings';
import { check } from '../../contracts/validation';
import { TRACE_SCHEMA, TRACE_SCHEMA_VERSION, type AskTrace, type TraceReplay, type TraceSettings } from '../../contracts/trace';
import { recordedCandidates, recordedCritic, recordedScorer, type ReplaySource } from './recorded';
import { readEvidence, roundCritic, runRounds, type RoundCritic } from './rounds';
import { traceOutcome } from './traceTree';

export interface ReplayDeps {
  tokens: TokenCounter;
  source?: ReplaySource;
  /** The reader; the extractive reader when absent (a replay never calls an LLM). */
  reader?: Reader;
  /** The critic for critic: 'rule'; the rule critic when absent. */
  critic?: Critic;
  clock?: Clock;
  newId?: () => string;
}

function withoutNodeScore(settings: TraceSettings): TraceSettings {
  const { nodeScore: _nodeScore, ...rest } = settings;
  return rest;
}

function fail(message: string): never {
  throw new CanopyError(ErrorCodes.badInput, message);
}

/**
 * The rule critic of a rule-critic trace: a round whose evidence is the recorded round's (same
 * items, same kept leaves) gets the recorded verdict — the same rule on the same evidence, plus
 * what its probe of the live index found, which a replay cannot search again. Other rounds are
 * judged anew (without a probe).
 */
function sameEvidenceRecorded(trace: AskTrace, live: RoundCritic): RoundCritic {
  return {
    kind: live.kind,
    async judge(input, signal) {
      const rec = trace.rounds[input.round - 1]?.critic;
      if (rec && rec.details?.evidenceKey === evidenceKey(input.evidence)) {
        const { evidenceKey: _key, ...details } = rec.details;
        return {
          sufficient: rec.sufficient,
          missing: [...rec.missing],
          ...(rec.followUpQuery ? { followUpQuery: rec.followUpQuery } : {}),
          ...(rec.followUpNames ? { followUpNames: [...rec.followUpNames] } : {}),
          source: rec.source as CriticVerdict['source'],
          details,
          ...(rec.judgment ? { judgment: rec.judgment } : {}),
        };
      }
      return live.judge(input, signal);
    },
  };
}

export async function replayTrace(trace: AskTrace, settings: ReplaySettings, deps: ReplayDeps, signal?: AbortSignal): Promise<AskTrace> {
  // The ranges are the schema's (contracts/askSettings.ts), stated once for every layer.
  const checked = check(ReplaySettings, settings, 'settings');
  if (!checked.ok) fail(`replay: ${checked.problem}`);
  const clock = deps.clock ?? systemClock;
  const started = clock.now();
  const recorded = trace.settings;
  const topK = settings.topK ?? recorded.topK;
  const maxRounds = settings.maxRounds ?? recorded.maxRounds;
  const b = settings.branchingFactor ?? recorded.branchingFactor;
  const compressor = settings.compressor ?? recorded.compressor;
  const nodeScore = settings.nodeScore ?? recorded.nodeScore;
  const criticMode = settings.critic ?? (recorded.critic === 'none' ? 'none' : recorded.critic === 'rule' ? 'rule' : 'recorded');
  const reader = deps.reader ?? new ExtractiveReader();
  const notes: string[] = [];
  const regrouping = b !== recorded.branchingFactor;
  if (regrouping && recorded.adapterId) {
    fail(`replay: B cannot change for a trace scored through adapter ${recorded.adapterId}: group scores would need new vectors`);
  }
  if (criticMode === 'recorded' && recorded.critic === 'llm') notes.push('the LLM critic’s recorded verdicts are reused; they judged the recorded evidence');
  if (trace.answer.mode === 'llm' && reader.mode === 'extractive') notes.push('the answer is re-read by the extractive reader; no LLM is called in a replay');
  if (regrouping) notes.push(`trees re-grouped with B = ${b}; group scores from the cached node vectors`);

  // The recorded critic's kind: the rule critic, with the learned stop over it when the trace ran one.
  const builtin = (): Critic => {
    if (!recorded.criticModel) return new RuleCritic();
    const learned = new LearnedCritic(new RuleCritic());
    if (learned.modelId !== recorded.criticModel) notes.push(`the trace's critic model ${recorded.criticModel} is not the built-in ${learned.modelId}: verdicts on new evidence come from the built-in one`);
    return learned;
  };
  const critic: RoundCritic | undefined =
    criticMode === 'rule'
      ? deps.critic
        ? roundCritic(deps.critic)
        : recorded.critic === 'rule'
          ? sameEvidenceRecorded(trace, roundCritic(builtin()))
          : roundCritic(new RuleCritic())
      : criticMode === 'recorded'
        ? recordedCritic(trace)
        : undefined;
  const first = trace.rounds[0];
  throwIfCancelled(signal);
  const result = await runRounds(
    {
      question: trace.question,
      topK,
      maxRounds,
      compressor,
      readerTokenCap: recorded.readerTokenCap,
      // Each recorded round brings its own routing; the first one's stands for the question.
      routing: first?.routing ?? { modalities: ['text', 'table', 'image', 'transcript', 'code'], aggregate: false, source: 'rule', reason: 'no recorded round' },
      firstQuery: first?.query ?? trace.question,
    },
    {
      source: recordedCandidates(trace),
      scorer: recordedScorer(trace, b, deps.source, nodeScore),
      ...(critic ? { critic } : {}),
      tokens: deps.tokens,
      clock,
    },
    signal,
  );
  const read = await readEvidence(trace.question, result, { reader, tokens: deps.tokens, cap: recorded.readerTokenCap }, signal);
  notes.push(...result.notes);
  if (trace.rounds.some((r) => r.retrieved.some((i) => i.controller))) notes.push('controller runs are not replayed');

  const changed: TraceReplay['changed'] = {};
  if (topK !== recorded.topK) changed.topK = topK;
  if (maxRounds !== recorded.maxRounds) changed.maxRounds = maxRounds;
  if (b !== recorded.branchingFactor) changed.branchingFactor = b;
  if (JSON.stringify(compressor) !== JSON.stringify(recorded.compressor)) changed.compressor = compressor;
  const criticSetting: TraceSettings['critic'] = criticMode === 'recorded' ? recorded.critic : criticMode;
  if (criticSetting !== recorded.critic) changed.critic = criticSetting;
  if (JSON.stringify(nodeScore ?? null) !== JSON.stringify(recorded.nodeScore ?? null)) changed.nodeScore = nodeScore && !isDenseOnly(nodeScore) ? { ...nodeScore } : { dense: 1, lexical: 0 };

  return {
    schema: TRACE_SCHEMA,
    version: TRACE_SCHEMA_VERSION,
    id: deps.newId?.() ?? `${started.toString(36)}-replay-${Math.random().toString(36).slice(2, 8)}`,
    createdAt: new Date(started).toISOString(),
    question: trace.question,
    settings: { ...withoutNodeScore(recorded), topK, maxRounds, branchingFactor: b, compressor, critic: criticSetting, reader: reader.mode, ...(nodeScore && !isDenseOnly(nodeScore) ? { nodeScore: { ...nodeScore } } : {}) },
    index: trace.index,
    rounds: result.rounds,
    stop: result.stop,
    ...traceOutcome(read.readerInput, read.uncompressed, read.answer, result.items),
    ms: clock.now() - started,
    replay: { of: trace.id, changed, notes },
  };
}
