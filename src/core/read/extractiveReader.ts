/**
 * The reader used when no LLM is configured (design §8): it answers by quoting kept evidence, with
 * citations to each quote's exact source range. Every quotable leaf (a sentence, a row) is scored
 * per part of the question (text/question.ts) by its support (text/support.ts):
 *  - coverage: the rarity-weighted share of the part's terms the leaf mentions (its item's title
 *    and heading path count half);
 *  - passage coverage: the same share over the leaf's passage — the kept leaves of its paragraph
 *    (or table), at most PASSAGE_REACH leaves either side. The sentence that answers is often the
 *    one next to the sentence that repeats the question's words ("… veterans." → "All missions
 *    were commanded by …"), so a leaf of a well-covering passage gains even when it names few
 *    question terms itself;
 *  - an answer of the kind the part asks for in the leaf itself, not already named by the
 *    question (a date for "when", an amount for "how much", a name for "who", an enumeration of
 *    that many things for "What are three kinds of …?");
 *  - its score against the query (a cosine), as a tie-breaker;
 *  - for filing questions: a row's statement-line bonus (rows.ts), less PART_ROW_PENALTY when
 *    another kept table of the file carries the same line item with far larger figures (a
 *    segment's or a guarantor group's row beside the whole company's); half its own coverage for
 *    a leaf that shares only periods with the question; CUE_BONUS more for a sentence stating an
 *    expectation when the question asks what is expected; DESCRIPTION_BONUS for a sentence that
 *    describes the company when the question asks what it does; KIND_TABLE_BONUS for a row whose
 *    table's heading or lead-in names the kind a "which <kind> had the most …" question picks from;
 *    of two copies of one line that tie, the one whose table's lead-in is about the question first.
 * A leaf that adds nothing to the question (every content term of it is in the question) is not
 * quoted, unless the question asks yes or no; nor is a bare heading, caption or boilerplate line. Per part, the best-supported leaf is
 * quoted, [1] for the first part; then further leaves, best first, while they reach
 * `relativeSupport` of the best (a close runner-up — often the sentence that answers when the top
 * one only restates the question — or the other half of a multi-hop answer), up to `maxQuotes`.
 * A comparison of named things ("Were X and Y of the same nationality?") gets one quote per thing.
 * A quote travels with the neighbours it needs to be read (same passage, each with its own
 * citation, in reading order): the sentence before one that opens with a pronoun ("He was
 * responsible for …" → who he is), and the sentence after that refers back to it and names it
 * ("This has traditionally been called the third use of the law").
 */
import { leavesOf } from '../compress/baselines';
import { analyzeQuestion, askedKindWords, asksCompanyActivity, COMPANY_ACTIVITY_WORDS, COMPANY_DESCRIPTION, questionFocus, superlativeKind, type QuestionPart } from '../text/question';
import { answerCue, addsToQuestion, askedListSize, isQuotable, listedItems, partCoverage, supportTerms, termWeights } from '../text/support';
import { askedFigure, labelKey, PART_SCALE, rowCover, rowFit, rowScale, rowWeight, statementNameTerms, tableFacts, type TableFacts } from './rows';
import { questionSourceNames, sourcePreference, squash } from './sources';
import { quoteContext } from './quoteContext';
import type { RegionNode } from '../../contracts/region';
import type { TraceCitation } from '../../contracts/trace';
import type { Answer, EvidenceRegion, Reader, ReaderInput } from './reader';

export interface ExtractiveOptions {
  /** Most quoted regions in an answer (default 2, raised to the number of parts). */
  maxQuotes?: number;
  /** A further quote must reach this share of the best support (default 0.8). */
  relativeSupport?: number;
}

interface Candidate {
  region: EvidenceRegion;
  leaf: RegionNode;
  own: Set<string>;
  context: Set<string>;
  /** Terms of the leaf's passage (its kept neighbours in the same paragraph or table, and itself). */
  passage: Set<string>;
  dense: number;
  /** The question names the leaf's file or item title. */
  namedSource: boolean;
  /** A row's table (rows.ts): the years of its columns and the statement it is. */
  table?: TableFacts;
  quotable: boolean;
  order: number;
  /** The leaves before and after it in its passage (same paragraph or table), when kept. */
  prev?: RegionNode;
  next?: RegionNode;
  /** Terms of the lead-in of the table the leaf lies in (the paragraph just before it, when the controller kept the table). */
  leadIn?: Set<string>;
}

/** What an answering quote gains for carrying an answer of the asked kind. */
const CUE_BONUS = 0.3;
/**
 * Weight of the region's score against the question (a cosine) beside the term coverage: 1, not
 * 0.5, from three 150-question SQuAD samples (0.5 → 320 of 450 answers with the gold string,
 * 0.75 → 322, 1 → 327, 1.5 → 326); term coverage alone misses paraphrases.
 */
const DENSE_WEIGHT = 1;
/** Weight of the passage's coverage beside the leaf's own. */
const PASSAGE_WEIGHT = 0.5;
/** Leaves either side of a leaf that form its passage. */
const PASSAGE_REACH = 3;
/**
 * Share of its coverage a leaf keeps when the only question terms it names itself are periods:
 * "What are AMCOR's major acquisitions in FY2023, FY2022 and FY2021?" was answered [1] by a share
 * buyback "approved on August 17, 2022 … completed in fiscal year 2023" over the acquisitions on
 * the gold page (real-document benchmark, all 33 FinanceBench questions: one more [1] on the gold
 * page; none lost; 150 SQuAD questions, seed 7: no answer changed).
 */
const PERIOD_ONLY = 0.5;
/** A period label among support terms: a year, a decade, a fiscal year or quarter. */
const PERIOD_TERM = /^(?:(?:19|20)\d{2}s?|(?:fy|cy|q[1-4]|h[12])\d*)$/;
/**
 * A question about what is expected, and a sentence that states an expectation or a plan: "How much
 * does Pfizer expect to pay to spin off Upjohn in the future?" is answered by "We expect to incur
 * costs of approximately $700 million …", not by amounts due "as of July 2, 2023" (one more [1] on
 * the gold page in the 33 FinanceBench questions and in the default sample's 10).
 */
const FORWARD = /\b(expect(s|ed|ing)?|anticipat(e|es|ed|ing)|intend(s|ed)? to|plan(s|ned)? to|forecast(s|ed)?|in the future|going forward|will)\b/i;
/**
 * What a row loses when a kept table of the same filing carries its line item with far larger
 * figures (rows.ts PART_SCALE): the International stores' "Best Buy 127 …" no longer outranks the
 * Domestic "Best Buy 931 …" on the gold page (one more [1] on the gold page in the 33 questions).
 */
const PART_ROW_PENALTY = 0.2;
/** What a leaf gains when its file or item is named by the question ("… for 3M?" → 3M_2018_10K.pdf). */
const NAMED_SOURCE_BONUS = 0.3;
/**
 * What a sentence describing the company ("Amcor is a global leader in …", "We design, manufacture
 * and sell …"; text/question.ts COMPANY_DESCRIPTION) gains when the question asks what the company
 * does: its industry, its business (`asksCompanyActivity`). Such a question names no figure, date
 * or name, so no other cue marks the sentence that answers it.
 */
const DESCRIPTION_BONUS = 0.3;
/**
 * What a row gains when the question asks which thing of a kind ranks first ("Which region had the
 * worst topline performance?", text/question.ts `superlativeKind`) and the row's table is about
 * that kind: its heading or its lead-in names it ("B. Geographic Information", "… revenues by
 * geographic area"). The rows of such a table are the things to pick from.
 */
const KIND_TABLE_BONUS = 0.3;
/** The words that ask what a company does, as support terms (text/question.ts COMPANY_ACTIVITY_WORDS). */
const COMPANY_ACTIVITY_TERMS = supportTerms(COMPANY_ACTIVITY_WORDS);

/**
 * The region's leaves in reading order, each with the leaves of its passage: the run of leaves
 * under the same nearest ancestor that is not a balanced-grouping node (a paragraph, a table, a
 * list), cut to PASSAGE_REACH leaves either side.
 */
function passages(root: RegionNode): Array<{ leaf: RegionNode; passage: RegionNode[]; run: RegionNode[]; prev?: RegionNode; next?: RegionNode }> {
  const runs: RegionNode[][] = [];
  const walk = (node: RegionNode, run: RegionNode[] | undefined) => {
    if (node.children.length === 0) {
      if (run) run.push(node);
      else runs.push([node]);
      return;
    }
    let own = run;
    if (node.kind !== 'group' || !run) {
      own = [];
      runs.push(own);
    }
    for (const child of node.children) walk(child, own);
  };
  walk(root, undefined);
  const out: Array<{ leaf: RegionNode; passage: RegionNode[]; run: RegionNode[]; prev?: RegionNode; next?: RegionNode }> = [];
  for (const run of runs) {
    run.forEach((leaf, i) => out.push({ leaf, passage: run.slice(Math.max(0, i - PASSAGE_REACH), i + PASSAGE_REACH + 1), run, prev: run[i - 1], next: run[i + 1] }));
  }
  // Reading order (runs were opened parent-first; leaves keep their order within each run).
  const position = new Map(leavesOf(root).map((l, i) => [l.id, i]));
  return out.sort((a, b) => position.get(a.leaf.id)! - position.get(b.leaf.id)!);
}

/** A sentence that opens with a pronoun or a demonstrative names its subject in the sentence before. */
const ANAPHORIC_START = /^\s*(he|she|it|they|this|these|those|his|her|its|their|such)\b/i;
/** A sentence that opens by referring back ("This is called …", "It was named …") completes the one before. */
const REFERRING_START = /^\s*(this|these|that|such|it)\s+(is|was|are|were|has|have|had|became|becomes|remains|means|meant|led|\p{Ll}+ed)\b/iu;
const attachable = (leaf: RegionNode, quoted: ReadonlySet<string>) => leaf.kind === 'sentence' && !quoted.has(leaf.id) && isQuotable(leaf.kind, leaf.text);
const quote = (leaf: RegionNode, context = quoteContext(leaf)) => (context ? `${context} → ${leaf.text}` : leaf.text).replace(/\s+/g, ' ').trim();

const leafText = (leaf: RegionNode) => (leaf.header ? `${leaf.header} ${leaf.text}` : leaf.text);

export class ExtractiveReader implements Reader {
  readonly mode = 'extractive' as const;

  constructor(private readonly options: ExtractiveOptions = {}) {}

  async answer(asked: string, input: ReaderInput): Promise<Answer> {
    // What the question asks, without instructions around it ("Answer in USD millions.").
    const question = questionFocus(asked);
    const analysis = analyzeQuestion(question);
    const questionTerms = new Set(supportTerms(question));
    // A leaf naming only question terms restates the question — unless the question asks yes or no, where restating is the answer.
    const mustAdd = analysis.parts.every((p) => p.answerType !== 'yesno');
    // The evidence of the sources the question names, of the period it names when several fit
    // ("Best Buy … Q2 of FY2024" → the 2024 Q2 10-Q over the 2019 10-K).
    const prefer = sourcePreference(question, questionSourceNames(question, analysis));
    const fit = new Map<string, number>();
    const fitOf = (region: EvidenceRegion) => {
      const key = `${region.file}\u0000${region.itemTitle}`;
      let v = fit.get(key);
      if (v === undefined) fit.set(key, (v = prefer ? prefer(region.file, region.itemTitle) : 0));
      return v;
    };
    const bestFit = Math.max(0, ...input.regions.map(fitOf));
    const isNamed = (region: EvidenceRegion) => bestFit > 0 && fitOf(region) === bestFit;
    // A leaf without a score of its own (a region the controller kept) takes the mean of the scored ones, not 0.
    const scored: number[] = [];
    for (const region of input.regions) for (const leaf of leavesOf(region.node)) {
      const d = region.leafScores?.get(leaf.id) ?? (region.score !== 0 ? region.score : undefined);
      if (d !== undefined) scored.push(d);
    }
    const meanDense = scored.length > 0 ? scored.reduce((a, b) => a + b, 0) / scored.length : 0;
    const candidates: Candidate[] = [];
    for (const region of input.regions) {
      const termsOf = new Map<string, string[]>();
      const terms = (leaf: RegionNode) => {
        let t = termsOf.get(leaf.id);
        if (!t) termsOf.set(leaf.id, (t = supportTerms(leafText(leaf))));
        return t;
      };
      const tables = new Map<RegionNode[], TableFacts>();
      const leadIn = region.element?.leadIn ? new Set(supportTerms(region.element.leadIn)) : undefined;
      for (const { leaf, passage, run, prev, next } of passages(region.node)) {
        const own = new Set(terms(leaf));
        let table = tables.get(run);
        if (!table && leaf.kind === 'row') tables.set(run, (table = tableFacts(run, `${region.itemTitle}\n${leaf.context ?? ''}`)));
        candidates.push({
          region,
          leaf,
          own,
          context: new Set(supportTerms(`${region.itemTitle} ${leaf.context ?? ''}`)),
          passage: new Set(passage.flatMap(terms)),
          dense: region.leafScores?.get(leaf.id) ?? (region.score !== 0 ? region.score : meanDense),
          namedSource: isNamed(region),
          ...(table ? { table } : {}),
          quotable: isQuotable(leaf.kind, leaf.text) && (!mustAdd || addsToQuestion(own, questionTerms)),
          order: candidates.length,
          ...(prev ? { prev } : {}),
          ...(next ? { next } : {}),
          ...(leadIn ? { leadIn } : {}),
        });
      }
    }
    const quotable = candidates.filter((c) => c.quotable);
    if (quotable.length === 0) {
      return {
        mode: 'extractive',
        text:
          candidates.length === 0
            ? 'No evidence was kept for this question, so there is nothing to quote.'
            : 'The kept evidence holds only headings, captions or lines that repeat the question, nothing that answers it in a sentence.',
        citations: [],
      };
    }
    const weight = termWeights(candidates.map((c) => c.own));
    // A statement row naming the asked line item with a figure for the asked period (rows.ts).
    const figure = askedFigure(asked, question, [...new Set(input.regions.map((r) => squash(r.file.replace(/\.[^.]+$/, ''))))]);
    const rowBonus = new Map<Candidate, number>();
    // When the question names a source (a company's filing), another source's rows answer nothing.
    const someNamed = quotable.some((c) => c.namedSource);
    for (const c of quotable) if (c.table && (c.namedSource || !someNamed)) rowBonus.set(c, rowCover(figure, c.leaf, weight));
    // A label's cover relative to the best row's — a computed figure's components (operating income, D&A)
    // each name only part of its terms — times the table's fit (an asked year among its columns, the named statement).
    const bestCover = Math.max(0, ...rowBonus.values());
    for (const [c, v] of rowBonus) rowBonus.set(c, bestCover > 0 ? (rowWeight(figure, c.table!) * v * rowFit(figure, c.table!)) / bestCover : 0);
    // The same line item in several kept tables of a filing: the one with far smaller figures is a part of the company (rows.ts PART_SCALE).
    const scales = new Map<Candidate, number>();
    const largest = new Map<string, number>();
    for (const c of quotable) {
      if (c.leaf.kind !== 'row') continue;
      const key = labelKey(c.leaf.text);
      const scale = rowScale(c.leaf.text);
      if (!key || scale === 0) continue;
      scales.set(c, scale);
      largest.set(`${c.region.file}\u0000${key}`, Math.max(scale, largest.get(`${c.region.file}\u0000${key}`) ?? 0));
    }
    const partRows = new Set([...scales].filter(([c, scale]) => scale < PART_SCALE * largest.get(`${c.region.file}\u0000${labelKey(c.leaf.text)}`)!).map(([c]) => c));
    // "What are three kinds of …?" asks for a list: an enumeration of that many things is its answer's kind.
    const listSize = new Map<string, number | undefined>();
    const listsEnough = (part: QuestionPart, c: Candidate) => {
      if (!listSize.has(part.text)) listSize.set(part.text, askedListSize(part.text));
      const n = listSize.get(part.text);
      return n !== undefined && listedItems(c.leaf.text) >= n;
    };
    const forward = FORWARD.test(question);
    const describes = asksCompanyActivity(question);
    // "Which geographic region had the biggest drop …?": rows of a table whose heading or lead-in names the kind.
    const kind = superlativeKind(question);
    const kindTerms = kind ? supportTerms(kind) : [];
    const ofKind = (c: Candidate) =>
      kindTerms.length > 0 && c.leaf.kind === 'row' && kindTerms.some((t) => c.context.has(t) || (c.leadIn?.has(t) ?? false));
    const support = (c: Candidate, part: QuestionPart): number => {
      const mine = partCoverage(part, c.own, c.context, weight);
      // A leaf whose own words share only periods with the question ("2022", "2023") says nothing about what it asks.
      const named = part.terms.filter((t) => c.own.has(t));
      const own = named.length > 0 && named.every((t) => PERIOD_TERM.test(t)) ? PERIOD_ONLY * mine.coverage : mine.coverage;
      const passage = partCoverage(part, c.passage, c.context, weight).coverage;
      const cue = (answerCue(part.answerType, c.leaf.text, questionTerms) !== undefined || listsEnough(part, c) ? CUE_BONUS : 0) + (forward && FORWARD.test(c.leaf.text) ? CUE_BONUS : 0);
      const described = describes && c.leaf.kind === 'sentence' && COMPANY_DESCRIPTION.test(c.leaf.text) ? DESCRIPTION_BONUS : 0;
      return (
        own +
        PASSAGE_WEIGHT * passage +
        cue +
        described +
        (ofKind(c) ? KIND_TABLE_BONUS : 0) +
        DENSE_WEIGHT * c.dense +
        (c.namedSource ? NAMED_SOURCE_BONUS : 0) +
        (rowBonus.get(c) ?? 0) -
        (partRows.has(c) ? PART_ROW_PENALTY : 0)
      );
    };
    // Two copies of one line (the same row in two tables) tie exactly: the one whose table's lead-in is about the question goes first —
    // the lead-in that covers more of the question, and of two that cover as much, the one with fewer words of its own
    // ("Cash and cash equivalents were as follows" over "Cash, cash equivalents and restricted cash reported on … are reconciled to …").
    const leadInCover = (c: Candidate, part: QuestionPart) => {
      if (!c.leadIn || c.leadIn.size === 0) return 0;
      const cover = partCoverage(part, c.leadIn, new Set(), weight).coverage;
      const asked = new Set(part.terms);
      return cover + [...c.leadIn].filter((t) => asked.has(t)).length / c.leadIn.size;
    };
    const rank = (part: QuestionPart) =>
      quotable
        .map((c) => ({ c, s: support(c, part) }))
        .sort((a, b) => b.s - a.s || (a.c.leaf.text === b.c.leaf.text ? leadInCover(b.c, part) - leadInCover(a.c, part) : 0) || a.c.order - b.c.order);

    // Part terms read as the support terms read the evidence (possessives folded: "Tesla's" → tesla);
    // a statement's name says where to look, not what to match ("… in the balance sheet" is no term an auditor's sentence answers).
    const whereTerms = statementNameTerms(asked, figure);
    // So do the words that ask what a company does ("What industry does Acme primarily operate in?"): the sentence that
    // answers describes the company ("we are a global leader in packaging") and need not say "industry" or "operate".
    if (describes) for (const t of COMPANY_ACTIVITY_TERMS) whereTerms.add(t);
    // So do the words that name the kind of answer asked for ("What year did Genghis Khan die?", "What type of rally …?"): the
    // sentence that answers names the year or the rally ("died in 1227", "a pep rally"), not the word "year" or "type".
    for (const t of supportTerms(askedKindWords(question).join(' '))) whereTerms.add(t);
    const withTerms = (p: QuestionPart): QuestionPart => {
      const terms = [...new Set(supportTerms(p.text))];
      const what = terms.filter((t) => !whereTerms.has(t));
      return { ...p, terms: what.length > 0 ? what : terms };
    };
    const entityTerms = analysis.compared.map((e) => supportTerms(e));
    // A comparison asks the same thing of each named thing: one part per entity.
    const parts: QuestionPart[] =
      analysis.comparison && analysis.parts.length === 1
        ? analysis.compared.map((e, i) => {
            const base = withTerms(analysis.parts[0]!);
            return { ...base, terms: [...new Set([...entityTerms[i]!, ...base.terms.filter((t) => !entityTerms.some((x) => x.includes(t)))])] };
          })
        : analysis.parts.map(withTerms);
    const chosen: Array<{ c: Candidate; s: number }> = [];
    for (const part of parts) {
      const top = rank(part).find((r) => !chosen.some((x) => x.c === r.c));
      if (top) chosen.push(top);
    }
    // Close runners-up for the whole question: the sentence beside a restating one, or the other half of a multi-hop answer.
    const wholeTerms = [...questionTerms].filter((t) => !whereTerms.has(t));
    const whole: QuestionPart = { text: question, answerType: analysis.parts[0]?.answerType ?? 'other', terms: wholeTerms.length > 0 ? wholeTerms : [...questionTerms], entities: analysis.entities };
    const maxQuotes = Math.max(this.options.maxQuotes ?? 2, chosen.length);
    const share = this.options.relativeSupport ?? 0.8;
    const ranked = rank(whole);
    const lead = ranked[0]!;
    for (const r of ranked) {
      if (chosen.length >= maxQuotes) break;
      if (r.s < lead.s * share) break;
      if (chosen.some((x) => x.c === r.c)) continue;
      chosen.push(r);
    }
    // Each quote with the neighbours it needs to be read: the sentence before one that opens with a
    // pronoun ("He was responsible …" → who he is), the sentence after that names it ("This was called …").
    const quoted = new Set(chosen.map(({ c }) => c.leaf.id));
    const groups = chosen.map(({ c }) => {
      const leaves = [c.leaf];
      if (c.prev && ANAPHORIC_START.test(c.leaf.text) && attachable(c.prev, quoted)) leaves.unshift(c.prev);
      if (c.next && REFERRING_START.test(c.next.text) && attachable(c.next, quoted)) leaves.push(c.next);
      for (const l of leaves) quoted.add(l.id);
      return { c, leaves };
    });
    const citations: TraceCitation[] = [];
    const pieces: string[] = [];
    for (const { c, leaves } of groups) {
      for (const leaf of leaves) {
        const marker = citations.length + 1;
        citations.push({ marker, itemId: c.region.itemId, nodeId: leaf.id, file: c.region.file, anchor: leaf.anchor, text: leaf.text });
        pieces.push(`${quote(leaf)} [${marker}]`);
      }
    }
    const text = pieces.join(' ');
    return { mode: 'extractive', text, citations };
  }
}
