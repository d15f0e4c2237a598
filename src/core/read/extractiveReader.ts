/**
 * The reader used when no LLM is configured (design §8): it answers by quoting kept evidence, with
 * citations to each quote's exact source range. Which leaf it quotes, and in which order, is a
 * learned judgment: every quotable leaf (a sentence, a row, a list item) gets the reader model's
 * probability that it answers the question, from named features (judge/readerFeatures.ts), and
 * each citation carries that probability and the features' contributions into the trace.
 *
 *  - [1] is the leaf with the highest probability;
 *  - a question that asks several things (English clauses) or compares named things gets, for each
 *    further part or thing, the likeliest leaf that names it;
 *  - close runners-up follow (at least `relativeSupport` of [1]'s probability), up to `maxQuotes`
 *    quotes — one more (`maxQuotesUnsure`) when [1] itself is more likely wrong than right;
 *  - a quote travels with the neighbour it needs to be read (English): the sentence before one
 *    that opens with a pronoun, the sentence after that refers back and names it, the code block
 *    it introduces (it ends in a colon, or the question asks how to do something);
 *  - when even [1] is unlikely (below the model's threshold), the answer says that no kept region
 *    clearly answers and gives the closest ones as such — never a partial match as the answer.
 * Never quoted: headings, captions, fragments, and — unless the question asks yes or no — a leaf
 * that only restates the question.
 */
import { readQuestion } from '../judge/questionReading';
import { readerCandidates, type ReaderCandidate } from '../judge/readerFeatures';
import type { LinearModel } from '../judge/linearModel';
import { builtinReaderModel } from '../judge/models';
import { partCoverage } from '../text/support';
import { quoteContext } from './quoteContext';
import type { RegionNode } from '../../contracts/region';
import type { TraceCitation } from '../../contracts/trace';
import type { Answer, Reader, ReaderInput } from './reader';

export interface ExtractiveOptions {
  /** Most quoted regions in an answer (default 2, raised to the number of parts). */
  maxQuotes?: number;
  /** The same when [1]'s probability is below one half (default 3). */
  maxQuotesUnsure?: number;
  /**
   * A further quote must reach this share of [1]'s probability (default 0.5: at about the rule
   * reader's answer length, 1.7–2.4 citations per answer on the development sets).
   */
  relativeSupport?: number;
  /** The reader model; the built-in one (judge/models/reader.json) when absent. */
  model?: LinearModel;
}

/** [1] is more likely wrong than right below this probability: a further runner-up may follow. */
const UNSURE = 0.5;
/** Below this probability for [1] when the model names no threshold of its own. */
const DEFAULT_CONFIDENCE = 0.2;

/** A sentence that opens by referring back ("This is called …", "It was named …") completes the one before. */
const REFERRING_START = /^\s*(this|these|that|such|it)\s+(is|was|are|were|has|have|had|became|becomes|remains|means|meant|led|\p{Ll}+ed)\b/iu;
const ANAPHORIC_START = /^\s*(he|she|it|they|this|these|those|his|her|its|their|such)\b/i;
/** The terms in order name the phrase's terms one after another. */
function namesPhrase(text: readonly string[], phrase: readonly string[]): boolean {
  for (let i = 0; i + phrase.length <= text.length; i++) if (phrase.every((t, j) => text[i + j] === t)) return true;
  return false;
}
/** Text that ends in a colon introduces what follows it. */
const INTRODUCES = /:\s*$/;
/** The longest code block a quote brings along (characters): a longer one is cited on its own or not at all. */
const INTRODUCED_MAX = 600;

/** The code block right after the candidate in reading order, in its item and under its heading, when short enough to quote. */
function introducedCode(candidates: readonly ReaderCandidate[], c: ReaderCandidate): ReaderCandidate | undefined {
  if (c.leaf.kind === 'code') return undefined;
  const next = candidates[c.order + 1];
  if (!next || next.region !== c.region || next.leaf.kind !== 'code' || (next.leaf.context ?? '') !== (c.leaf.context ?? '')) return undefined;
  return next.leaf.text.length <= INTRODUCED_MAX ? next : undefined;
}
const quote = (leaf: RegionNode, context = quoteContext(leaf)) => (context ? `${context} → ${leaf.text}` : leaf.text).replace(/\s+/g, ' ').trim();

export class ExtractiveReader implements Reader {
  readonly mode = 'extractive' as const;

  constructor(private readonly options: ExtractiveOptions = {}) {}

  get modelId(): string {
    return (this.options.model ?? builtinReaderModel()).id;
  }

  async answer(asked: string, input: ReaderInput): Promise<Answer> {
    const model = this.options.model ?? builtinReaderModel();
    const question = readQuestion(asked);
    const reading = readerCandidates(question, input.regions);
    const quotable = reading.candidates.filter((c) => c.quotable);
    if (quotable.length === 0) {
      return {
        mode: 'extractive',
        text:
          reading.candidates.length === 0
            ? 'No evidence was kept for this question, so there is nothing to quote.'
            : 'The kept evidence holds only headings, captions or lines that repeat the question, nothing that answers it in a sentence.',
        citations: [],
      };
    }
    const probability = new Map<ReaderCandidate, number>(quotable.map((c) => [c, model.predict(c.features).probability]));
    const ranked = [...quotable].sort((a, b) => probability.get(b)! - probability.get(a)! || a.order - b.order);
    const top = ranked[0]!;
    const chosen: ReaderCandidate[] = [top];

    // A further part of the question, or a further compared thing: its own likeliest quote that names it.
    const groups = question.english ? (question.compared.length >= 2 ? question.compared.map((e) => [...new Set(question.terms(e))]) : question.parts.length > 1 ? question.parts.map((p) => p.terms) : []) : [];
    const coverOf = (c: ReaderCandidate, terms: string[]) => partCoverage({ terms }, c.own, c.context, reading.weight).coverage;
    // A compared thing of several common words ("tool error") is named by a leaf that says it as a
    // phrase, not by one that has its words apart ("errors and protocol-level failures"): where
    // some leaf says it, its quote is one of those. (A name — "Scott Derrickson" — is often named
    // in part, "Derrickson", and keeps the coverage rule.)
    const common = new Set(groups.filter((_, i) => question.compared.length >= 2 && !/\p{Lu}/u.test(question.compared[i] ?? '')));
    const phrased = (terms: string[]) => {
      if (!common.has(terms) || terms.length < 2) return undefined;
      const naming = new Set(ranked.filter((c) => namesPhrase(question.terms(c.leaf.text), terms)));
      return naming.size > 0 ? naming : undefined;
    };
    for (const terms of groups) {
      const naming = phrased(terms);
      if (terms.length === 0 || chosen.some((c) => (naming ? naming.has(c) : coverOf(c, terms) >= 0.99))) continue;
      let best: ReaderCandidate | undefined;
      let bestValue = 0;
      for (const c of ranked) {
        if (chosen.includes(c) || (naming && !naming.has(c))) continue;
        const cover = coverOf(c, terms);
        if (cover === 0) continue;
        const value = probability.get(c)! * (0.5 + 0.5 * cover);
        if (value > bestValue) {
          best = c;
          bestValue = value;
        }
      }
      if (best) chosen.push(best);
    }
    // Close runners-up: the other half of a multi-hop answer, the sentence beside a restating one.
    // When even [1] is more likely wrong than right, the user sees one close runner-up more: the
    // answer is then as likely in the second or third quote as in the first.
    const unsure = probability.get(top)! < UNSURE;
    const maxQuotes = Math.max(unsure ? (this.options.maxQuotesUnsure ?? 3) : (this.options.maxQuotes ?? 2), chosen.length);
    const share = this.options.relativeSupport ?? 0.5;
    for (const c of ranked) {
      if (chosen.length >= maxQuotes || probability.get(c)! < share * probability.get(top)!) break;
      if (!chosen.includes(c)) chosen.push(c);
    }

    // Each quote with the neighbours it needs to be read (English cues): the sentence before one that
    // opens with a pronoun comes first — also when it is a quote of its own further down — and the
    // sentence after that refers back follows.
    const chosenBy = new Map(chosen.map((c) => [c.leaf.id, c]));
    const placed = new Set<string>();
    const attachable = (leaf: RegionNode | undefined): leaf is RegionNode => leaf !== undefined && leaf.kind === 'sentence' && !placed.has(leaf.id) && leaf.text.split(/\s+/).length >= 4;
    const groupsOfLeaves: Array<{ c: ReaderCandidate; leaves: RegionNode[] }> = [];
    for (const c of chosen) {
      if (placed.has(c.leaf.id)) continue;
      placed.add(c.leaf.id);
      const leaves = [c.leaf];
      if (question.english && ANAPHORIC_START.test(c.leaf.text) && attachable(c.prev)) leaves.unshift(c.prev);
      if (question.english && c.next && REFERRING_START.test(c.next.text) && !chosenBy.has(c.next.id) && attachable(c.next)) leaves.push(c.next);
      // Text that introduces a code block ("To stop the daemon, run:") is read with it: the block
      // follows a quote that ends in a colon, or one quoted for a question that asks how to do something.
      const block = introducedCode(reading.candidates, c);
      if (block && !placed.has(block.leaf.id) && (INTRODUCES.test(c.leaf.text) || question.procedure)) leaves.push(block.leaf);
      for (const l of leaves) placed.add(l.id);
      groupsOfLeaves.push({ c, leaves });
    }

    const citations: TraceCitation[] = [];
    const pieces: string[] = [];
    for (const { c, leaves } of groupsOfLeaves) {
      for (const leaf of leaves) {
        const marker = citations.length + 1;
        const citation: TraceCitation = { marker, itemId: c.region.itemId, nodeId: leaf.id, file: c.region.file, anchor: leaf.anchor, text: leaf.text };
        // A quote carries the model's judgment; a neighbour attached for reading carries its own when it was chosen too.
        const judged = leaf === c.leaf ? c : chosenBy.get(leaf.id);
        if (judged) citation.judgment = model.explain(judged.features);
        citations.push(citation);
        pieces.push(`${quote(leaf)} [${marker}]`);
      }
    }
    const confidence = model.threshold ?? DEFAULT_CONFIDENCE;
    const p1 = probability.get(top)!;
    if (p1 < confidence) {
      return {
        mode: 'extractive',
        text: `No kept region clearly answers this question (the likeliest has probability ${p1.toFixed(2)}, below ${confidence.toFixed(2)}). The closest: ${pieces.join(' ')}`,
        citations,
        notes: [`low confidence: the reader model's best probability ${p1.toFixed(2)} is below its threshold ${confidence.toFixed(2)}`],
      };
    }
    return { mode: 'extractive', text: pieces.join(' '), citations };
  }
}
