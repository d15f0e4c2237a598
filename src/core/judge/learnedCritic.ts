/**
 * The critic used without an LLM (design §6): the rule critic's reading of the evidence — parts,
 * bridges, the look-ahead, the follow-up query it builds — and a learned verdict on top. After
 * each round the critic model (judge/models/critic.json) gives the probability that the kept
 * evidence already holds the answer, from the reader model's view of the evidence and the rule's
 * findings (judge/criticFeatures.ts):
 *  - where the rule finds every part answered, or has nothing left to ask, its verdict stands, and
 *    so does its search for a next hop or a named thing the evidence lacks (`modelDecides`);
 *  - where it would ask again for words its best sentences lack, the rounds stop when the
 *    probability reaches the model's threshold (chosen on the development data for the precision
 *    of a stop) — a lookup answered by the first passage needs no more rounds — and go on with the
 *    rule's follow-up otherwise;
 *  - a question in another language gets no English rule: the probability alone decides, and the
 *    follow-up asks for the question's words the evidence lacks (in its own language).
 * The verdict carries the probability and each feature's contribution (`judgment`), which the trace
 * and the inspector's critic card show.
 */
import type { Critic, CriticInput, CriticVerdict } from '../critic/critic';
import { languageName } from '../text/language';
import { criticFeatures } from './criticFeatures';
import type { LinearModel } from './linearModel';
import { builtinCriticModel, builtinReaderModel } from './models';
import { readQuestion } from './questionReading';

export interface LearnedCriticOptions {
  model?: LinearModel;
  reader?: LinearModel;
}

/**
 * Where the model decides: the rule critic would ask again (it has a follow-up query), and what it
 * asks for is words of the question its best sentences lack — not a next hop (a question multi-hop
 * by its form, a first hop whose bridge has no item yet, an answer's bridge with an item of its
 * own) and not a named thing of the question the evidence lacks. Those searches are the rule's: on
 * the development data no threshold let the model stop them without losing multi-hop evidence
 * (docs/evaluation.md, "Learned judgment").
 */
export function modelDecides(rule: CriticVerdict): boolean {
  if (rule.sufficient || !rule.followUpQuery) return false;
  const d = rule.details ?? {};
  const count = (key: string) => (Array.isArray(d[key]) ? (d[key] as unknown[]).length : 0);
  return !d.hopGap && !d.answerBridge && typeof d.nestedReference !== 'string' && count('missingEntities') === 0 && count('namedAbsent') === 0;
}

/** The stop threshold when a model names none. */
const DEFAULT_THRESHOLD = 0.8;

export class LearnedCritic implements Critic {
  readonly kind = 'rule' as const;

  constructor(
    private readonly rule: Critic,
    private readonly options: LearnedCriticOptions = {},
  ) {}

  get modelId(): string {
    return (this.options.model ?? builtinCriticModel()).id;
  }

  async judge(input: CriticInput, signal?: AbortSignal): Promise<CriticVerdict> {
    const model = this.options.model ?? builtinCriticModel();
    const reader = this.options.reader ?? builtinReaderModel();
    const threshold = model.threshold ?? DEFAULT_THRESHOLD;
    const question = readQuestion(input.question);
    if (!question.english) {
      const reading = criticFeatures(question, input.evidence, input.round, reader);
      const judgment = model.explain(reading.features);
      const sufficient = judgment.probability >= threshold;
      const verdict: CriticVerdict = {
        sufficient,
        missing: [],
        source: 'learned',
        details: { language: question.language.code, note: `the question reads as ${languageName(question.language.code)}: the English rule critic was not used`, ...(reading.best ? { best: reading.best } : {}) },
        judgment,
      };
      if (!sufficient) {
        // The question's own words that no kept leaf names, in its language.
        const held = new Set(input.evidence.flatMap((e) => [...(e.keptLeaves ?? e.keptTexts), e.title]).flatMap((t) => question.terms(t)));
        const missing = question.questionTerms.filter((t) => !held.has(t));
        verdict.missing = missing;
        const query = (missing.length > 0 ? [question.focus, ...missing] : [question.focus]).join(' ');
        if (!input.previousQueries.some((q) => q.trim().toLowerCase() === query.toLowerCase())) verdict.followUpQuery = query;
        else verdict.details!.noNewQuery = 'the query for what is missing was already issued';
      }
      return verdict;
    }
    const rule = await this.rule.judge(input, signal);
    const reading = criticFeatures(question, input.evidence, input.round, reader, rule);
    const judgment = model.explain(reading.features);
    const learned = { probability: judgment.probability, threshold, ...(reading.best ? { best: reading.best } : {}) };
    if (!modelDecides(rule) || judgment.probability < threshold) {
      return { ...rule, details: { ...rule.details, learned }, judgment };
    }
    // The rule would ask again; the evidence very likely holds the answer already.
    return {
      sufficient: true,
      missing: [],
      source: 'learned',
      details: { ...rule.details, learned, overruled: { followUpQuery: rule.followUpQuery, missing: rule.missing } },
      judgment,
    };
  }
}
