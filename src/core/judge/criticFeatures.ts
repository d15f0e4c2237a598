/**
 * The learned critic's features (house style, "Learned judgment"): what the kept evidence holds
 * after a round, as named values a model turns into the probability that it already holds the
 * answer.
 *
 *  - the reader's view (language-neutral): the reader model's best and second-best probability
 *    over the quotable leaves (`reader_p1`, `reader_p2`), how many leaves it finds likely
 *    (`reader_likely`), the best cosine and question-term coverage of a leaf;
 *  - the rounds: the round, the items and leaves in the evidence;
 *  - the rule critic's reading (English): whether it found every part answered
 *    (`rule_sufficient`), the share of parts answered and the weakest part's coverage, named
 *    things of the question the evidence lacks, bridges it found, a question multi-hop by its form
 *    whose next hop is missing (`rule_hop_gap`), an answer's bridge with an item of its own
 *    (`rule_answer_bridge`), and whether its look-ahead found the follow-up worth a round.
 * Every feature is named in `CRITIC_FEATURES`; the trace keeps their contributions.
 */
import type { CriticVerdict, EvidenceView } from '../critic/critic';
import type { LinearModel } from './linearModel';
import type { QuestionReading } from './questionReading';
import { readerCandidates } from './readerFeatures';

export interface CriticReading {
  features: Record<string, number>;
  /** The reader's likeliest leaf and its probability, for the trace. */
  best?: { nodeId: string; itemId: string; text: string; probability: number };
}

/** A leaf the reader finds at least this likely counts as likely. */
const LIKELY = 0.5;

export function criticFeatures(question: QuestionReading, evidence: readonly EvidenceView[], round: number, reader: LinearModel, rule?: CriticVerdict): CriticReading {
  const regions = evidence.flatMap((e) => e.regions ?? []);
  const reading = readerCandidates(question, regions);
  const quotable = reading.candidates.filter((c) => c.quotable);
  const scored = quotable.map((c) => ({ c, p: reader.predict(c.features).probability })).sort((a, b) => b.p - a.p);
  const top = scored[0];
  const f: Record<string, number> = {
    reader_p1: top?.p ?? 0,
    reader_p2: scored[1]?.p ?? 0,
    reader_likely: Math.log1p(scored.filter((s) => s.p >= LIKELY).length),
    best_dense: Math.max(0, ...quotable.map((c) => c.features.dense ?? 0)),
    best_lex: Math.max(0, ...quotable.map((c) => c.features.lex_own ?? 0)),
    round,
    items: Math.log1p(evidence.length),
    leaves: Math.log1p(reading.candidates.length),
  };
  if (rule && question.english) Object.assign(f, ruleFeatures(rule));
  return {
    features: f,
    ...(top ? { best: { nodeId: top.c.leaf.id, itemId: top.c.region.itemId, text: top.c.leaf.text.slice(0, 200), probability: top.p } } : {}),
  };
}

/** The rule critic's verdict as features (its details: critic/ruleCritic.ts). */
function ruleFeatures(rule: CriticVerdict): Record<string, number> {
  const d = rule.details ?? {};
  const parts = Array.isArray(d.parts) ? (d.parts as Array<{ answered?: boolean; coverage?: number }>) : [];
  const answered = parts.filter((p) => p.answered).length;
  const coverage = parts.map((p) => (typeof p.coverage === 'number' ? p.coverage : 0));
  const count = (key: string) => (Array.isArray(d[key]) ? (d[key] as unknown[]).length : 0);
  const probe = d.probe as { worth?: boolean } | undefined;
  return {
    rule_sufficient: rule.sufficient ? 1 : 0,
    rule_parts_answered: parts.length > 0 ? answered / parts.length : 0,
    rule_min_coverage: coverage.length > 0 ? Math.min(...coverage) : 0,
    rule_missing_named: Math.log1p(count('missingEntities') + count('namedAbsent')),
    rule_bridges: Math.log1p(count('bridges')),
    rule_hop_gap: d.hopGap ? 1 : 0,
    rule_answer_bridge: d.answerBridge ? 1 : 0,
    rule_nested: typeof d.nestedReference === 'string' ? 1 : 0,
    rule_probe_dry: probe && probe.worth === false ? 1 : 0,
    rule_no_query: rule.sufficient || rule.followUpQuery ? 0 : 1,
  };
}
