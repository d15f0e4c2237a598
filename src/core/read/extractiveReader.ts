/**
 * The reader used when no LLM is configured (design §8): it answers by quoting kept evidence, with
 * citations to each quote's exact source range. Per part of the question (text/question.ts) it
 * quotes the sentence or row with the best support (text/support.ts): the rarity-weighted share of
 * the part's terms it mentions, an answer of the kind the part asks for (a date for "when", an
 * amount for "how much", a name for "who"), and its score against the question as a tie-breaker.
 * It never quotes a bare heading, caption or boilerplate line. A comparison of named things
 * ("Were X and Y of the same nationality?") gets one quote per thing; one more quote from another
 * item is added when it is nearly as well supported (multi-hop answers are often split).
 */
import { leavesOf } from '../compress/baselines';
import { analyzeQuestion, type QuestionPart } from '../text/question';
import { answerCue, isQuotable, partCoverage, termWeights } from '../text/support';
import { contentTerms } from '../text/terms';
import type { RegionNode } from '../../contracts/region';
import type { TraceCitation } from '../../contracts/trace';
import type { Answer, EvidenceRegion, Reader, ReaderInput } from './reader';

export interface ExtractiveOptions {
  /** Most quoted regions in an answer (default 3, raised to the number of parts). */
  maxQuotes?: number;
  /** A further quote from another item must reach this share of the best support (default 0.9). */
  relativeSupport?: number;
}

interface Candidate {
  region: EvidenceRegion;
  leaf: RegionNode;
  own: Set<string>;
  context: Set<string>;
  dense: number;
  quotable: boolean;
  order: number;
}

/** What an answering quote gains for carrying an answer of the asked kind. */
const CUE_BONUS = 0.3;
/** Weight of the region's score against the question (a cosine) beside the term coverage. */
const DENSE_WEIGHT = 0.25;

export class ExtractiveReader implements Reader {
  readonly mode = 'extractive' as const;

  constructor(private readonly options: ExtractiveOptions = {}) {}

  async answer(question: string, input: ReaderInput): Promise<Answer> {
    const analysis = analyzeQuestion(question);
    const questionTerms = new Set(analysis.terms);
    const candidates: Candidate[] = [];
    for (const region of input.regions) {
      for (const leaf of leavesOf(region.node)) {
        const text = leaf.header ? `${leaf.header} ${leaf.text}` : leaf.text;
        candidates.push({
          region,
          leaf,
          own: new Set(contentTerms(text)),
          context: new Set(contentTerms(`${region.itemTitle} ${leaf.context ?? ''}`)),
          dense: region.leafScores?.get(leaf.id) ?? region.score,
          quotable: isQuotable(leaf.kind, leaf.text),
          order: candidates.length,
        });
      }
    }
    const quotable = candidates.filter((c) => c.quotable);
    if (quotable.length === 0) {
      return {
        mode: 'extractive',
        text: candidates.length === 0 ? 'No evidence was kept for this question, so there is nothing to quote.' : 'The kept evidence holds only headings or captions, nothing that answers the question in a sentence.',
        citations: [],
      };
    }
    const weight = termWeights(candidates.map((c) => c.own));
    const support = (c: Candidate, part: QuestionPart): number => {
      const { coverage } = partCoverage(part, c.own, c.context, weight);
      const cue = answerCue(part.answerType, c.leaf.text, questionTerms) !== undefined ? CUE_BONUS : 0;
      return coverage + cue + DENSE_WEIGHT * c.dense;
    };
    const best = (part: QuestionPart, pool: Candidate[]): { c: Candidate; s: number } | undefined => {
      let top: { c: Candidate; s: number } | undefined;
      for (const c of pool) {
        const s = support(c, part);
        if (!top || s > top.s || (s === top.s && c.order < top.c.order)) top = { c, s };
      }
      return top;
    };

    // A comparison asks the same thing of each named thing: one part per entity.
    const parts: QuestionPart[] =
      analysis.comparison && analysis.parts.length === 1
        ? analysis.entities.map((e) => ({ ...analysis.parts[0]!, terms: [...new Set([...contentTerms(e), ...analysis.parts[0]!.terms.filter((t) => !analysis.entities.some((x) => contentTerms(x).includes(t)))])] }))
        : analysis.parts;
    const chosen: Array<{ c: Candidate; s: number }> = [];
    for (const part of parts) {
      const top = best(part, quotable);
      if (top && !chosen.some((x) => x.c === top.c)) chosen.push(top);
    }
    // Multi-hop: one more quote from another item when it is nearly as well supported for the whole question.
    const whole: QuestionPart = { text: question, answerType: analysis.parts[0]?.answerType ?? 'other', terms: analysis.terms, entities: analysis.entities };
    const maxQuotes = Math.max(this.options.maxQuotes ?? 3, chosen.length);
    const share = this.options.relativeSupport ?? 0.9;
    const ranked = quotable.map((c) => ({ c, s: support(c, whole) })).sort((a, b) => b.s - a.s || a.c.order - b.c.order);
    const lead = ranked[0]!;
    for (const r of ranked) {
      if (chosen.length >= maxQuotes) break;
      if (r.s < lead.s * share) break;
      if (chosen.some((x) => x.c.region.itemId === r.c.region.itemId)) continue;
      chosen.push(r);
    }
    const citations: TraceCitation[] = chosen.map(({ c }, i) => ({
      marker: i + 1,
      itemId: c.region.itemId,
      nodeId: c.leaf.id,
      file: c.region.file,
      anchor: c.leaf.anchor,
      text: c.leaf.text,
    }));
    const quote = (c: Candidate) => (c.leaf.header ? `${c.leaf.header} → ${c.leaf.text}` : c.leaf.text).replace(/\s+/g, ' ').trim();
    const text = chosen.map(({ c }, i) => `${quote(c)} [${i + 1}]`).join(' ');
    return { mode: 'extractive', text, citations };
  }
}
