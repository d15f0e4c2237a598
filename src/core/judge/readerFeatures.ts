/**
 * The learned reader's candidates and their features (house style, "Learned judgment"): every
 * quotable leaf of the kept evidence — a sentence, a row, a list item — with named features that
 * say how well it answers the question. The model (judge/models/reader.json, trained by
 * tools/judge) turns them into a probability; the reader quotes by it, and the trace keeps each
 * feature's contribution.
 *
 * General features (any document, any language — terms are read in the question's language):
 *  - the encoder's cosine of question and leaf (`dense`), its gap to the best and its rank; the
 *    cosine of the leaf's enclosing region (`parent_dense`); the compressor's node score
 *    (`node_score`: the cosine plus lexical evidence where the hybrid node score ran);
 *  - lexical evidence: the rarity-weighted share of the question's terms the leaf names
 *    (`lex_own`), its gap to the best, the share its title and heading path name (`lex_context`,
 *    `title_cover`), its passage (its kept neighbours, up to three either side, `lex_passage`), its
 *    best neighbour (`lex_neighbor`), consecutive question terms it names together (`bigram`); the
 *    same shares with its title and heading path counting half where the leaf lacks a term
 *    (`support_own`, `support_passage`);
 *  - what it adds: the share of its terms the question does not name (`novel`), and whether it
 *    only restates the question (`restates`);
 *  - its place: its item's retrieval rank and score, a follow-up round's item, the first leaf of
 *    its paragraph, its kind (row, list item, code), its length, a number or a year in it;
 *  - the question names its file or item (`named_source`); the paragraph that leads into its table
 *    names the question's terms (`lead_in_cover`, where the PDF layout knows the lead-in).
 * A code block reads the text just before it under the same heading (its lead-in, "To stop the
 * daemon, run:") as its context, as a heading path is read.
 * English-only features (0 for another language): an answer of the kind the question's wh-word
 * asks for (`cue` — for a question that asks how to do something, a code block or a leaf that is
 * mostly code spans; never a link's target; for a date or a number also apart, `cue_date`,
 * `cue_number`, since one kind is a sharper cue than another; `cue_cover` with the passage's
 * coverage), an enumeration of as many things as asked (`list_enough`), a sentence opening with a
 * pronoun (`anaphoric`). A sentence that opens by referring back ("Both were …", "It was …") reads
 * the sentence before it as its context, as it reads its heading path (`support_own`).
 * A link's target (`[text](https://…)`, a bare URL) is no words of the text: terms are read without it.
 * The filings profile's features (0 outside filings, profiles/profiles.ts): a statement row naming
 * the asked line item for the asked period (`filing_row`: its label's cover of the metric relative
 * to the best kept row's, or to half the metric when no row names that much, times its table's fit
 * and — where the question names a fiscal period — its filing's, by the period its name carries),
 * a row of part of the company (`filing_part_row`), own words that are only periods
 * (`filing_period_only`), an expectation for a question about the future, by how much of what is
 * asked it names (`filing_forward`), a description of the company for a question about
 * what it does (`filing_describes`), a row of the table of the kind a "which … had the most"
 * question picks from (`filing_kind_table`), the file of the period the question names
 * (`filing_source_period`), and the profile's own copy of `lex_context` (`filing_lex_context`: a
 * filing's heading path is a statement's name or a column header, and its weight is learned apart,
 * so the general one is learned from what headings say elsewhere). In a filing, a table row that is
 * no line item — a glossary's or a footnote's prose, a header row of column labels (rows.ts
 * `isLineItem`) — is read as text, not as a row (`row`, `row_*`).
 */
import { leavesOf } from '../compress/baselines';
import type { KeptRegion } from '../critic/critic';
import { asksCompanyActivity, COMPANY_ACTIVITY_WORDS, COMPANY_DESCRIPTION, FORWARD, superlativeKind } from '../profiles/filings/cues';
import { askedFigure, isLineItem, labelKey, PART_SCALE, rowCover, rowFit, rowScale, rowWeight, statementNameTerms, tableFacts, type TableFacts } from '../profiles/filings/rows';
import { sourcePreference } from '../text/sourcePeriods';
import { filingTerms } from '../profiles/filings/terms';
import { fits } from '../profiles/profiles';
import type { QuestionPart } from '../text/question';
import { namesSource, questionSourceNames, squash } from '../text/sources';
import { answerCue, askedListSize, isQuotable, listedItems, partCoverage, termWeights } from '../text/support';
import type { RegionNode } from '../../contracts/region';
import type { QuestionReading } from './questionReading';

/** Leaves either side of a leaf that form its passage. */
export const PASSAGE_REACH = 3;

/** One leaf of the kept evidence the reader may quote. */
export interface ReaderCandidate {
  region: KeptRegion;
  leaf: RegionNode;
  /** Position in reading order over all the evidence. */
  order: number;
  prev?: RegionNode;
  next?: RegionNode;
  /** The leaves of its paragraph, list or table (its run), in order. */
  run: RegionNode[];
  /** The leaf may be quoted at all (not a heading, caption or fragment; not a restatement unless yes/no). */
  quotable: boolean;
  /** Its content terms (as the question's language reads them), of its title and heading path, and of its passage. */
  own: Set<string>;
  /** Its title and heading path's terms, with — for a sentence that opens by referring back — the sentence before it. */
  context: Set<string>;
  /** Its title and heading path's terms alone. */
  heading: Set<string>;
  passage: Set<string>;
  /** Its document fits the filings profile. */
  filing: boolean;
  features: Record<string, number>;
}

export interface PassageLeaf {
  leaf: RegionNode;
  passage: RegionNode[];
  run: RegionNode[];
  prev?: RegionNode;
  next?: RegionNode;
}

/**
 * The region's leaves in reading order, each with its passage: the run of leaves under the same
 * nearest ancestor that is not a balanced-grouping node (a paragraph, a table, a list), cut to
 * PASSAGE_REACH leaves either side.
 */
export function passages(root: RegionNode): PassageLeaf[] {
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
  const out: PassageLeaf[] = [];
  for (const run of runs) {
    run.forEach((leaf, i) => {
      const p: PassageLeaf = { leaf, passage: run.slice(Math.max(0, i - PASSAGE_REACH), i + PASSAGE_REACH + 1), run };
      if (run[i - 1]) p.prev = run[i - 1]!;
      if (run[i + 1]) p.next = run[i + 1]!;
      out.push(p);
    });
  }
  const position = new Map(leavesOf(root).map((l, i) => [l.id, i]));
  return out.sort((a, b) => position.get(a.leaf.id)! - position.get(b.leaf.id)!);
}

const leafText = (leaf: RegionNode) => (leaf.header ? `${leaf.header} ${leaf.text}` : leaf.text);
/** A link's target is an address, not words the text says: `[Report issues](https://host/org/sdk/issues)` reads as "Report issues". */
export const withoutLinkTargets = (text: string): string => text.replace(/\]\((?:[^()\s]|\([^()\s]*\))+\)/g, ']').replace(/<?\b(?:https?|ftp):\/\/[^\s<>)\]]+>?/g, ' ');
const ANAPHORIC_START = /^\s*(he|she|it|they|this|these|those|his|her|its|their|such)\b/i;
/** A sentence that opens by referring back ("It was …", "Both were …", "The two …"): its subject is named by the sentence before it. */
const REFERS_BACK = /^\s*(?:he|she|it|they|this|these|those|his|her|its|their|such|both|each|neither|either|the two)\b(?!\s+(?:of|the|a|an|and)\b)/i;
const YEAR = /\b(1[5-9]\d{2}|20\d{2})\b/;
const NUMBER = /\d/;
/** A period label among terms: a year, a decade, a fiscal year or quarter (the filings profile's own-words-only-periods cue). */
const PERIOD_TERM = /^(?:(?:19|20)\d{2}s?|(?:fy|cy|q[1-4]|h[12])\d*)$/;

/** The node's cosine with the question: for a follow-up round's item its own, else the hybrid score's component when it ran, else the node score. */
function denseOf(region: KeptRegion, id: string): number | undefined {
  const q = region.questionScores?.get(id);
  if (q !== undefined) return q;
  const c = region.components?.get(id);
  if (c) return c.dense;
  return region.leafScores?.get(id);
}

/** The id of a node's parent, from its path id (`item/0.2.1` → `item/0.2`); undefined for a root. */
function parentId(id: string): string | undefined {
  const slash = id.lastIndexOf('/');
  const dot = id.lastIndexOf('.');
  return dot > slash ? id.slice(0, dot) : undefined;
}

export interface ReaderReading {
  question: QuestionReading;
  candidates: ReaderCandidate[];
  /** Term rarity over the candidates' terms. */
  weight: (term: string) => number;
  /** The parts the reader quotes for, with their terms as the evidence is read. */
  parts: QuestionPart[];
}

/**
 * Every leaf of the kept regions with its features. `regions` in the order the reader input holds
 * them (the rounds' order); leaves in reading order within each.
 */
export function readerCandidates(question: QuestionReading, regions: readonly KeptRegion[]): ReaderReading {
  const terms = question.terms;
  const anyFiling = question.english && regions.some((r) => fits(r.document, 'filing'));
  const mustAdd = question.answerType !== 'yesno';
  const candidates: ReaderCandidate[] = [];
  // A leaf without a score of its own (a region the controller kept) takes the mean of the scored ones, not 0.
  const scored: number[] = [];
  for (const region of regions) for (const leaf of leavesOf(region.node)) {
    const d = denseOf(region, leaf.id);
    if (d !== undefined) scored.push(d);
  }
  const meanDense = scored.length > 0 ? scored.reduce((a, b) => a + b, 0) / scored.length : 0;
  const rows = new Map<RegionNode[], TableFacts>();
  for (const region of regions) {
    const filing = anyFiling && fits(region.document, 'filing');
    const read = filing ? filingTerms : terms;
    const termsOf = new Map<string, Set<string>>();
    const leafTerms = (leaf: RegionNode) => {
      let t = termsOf.get(leaf.id);
      if (!t) termsOf.set(leaf.id, (t = new Set(read(withoutLinkTargets(leafText(leaf))))));
      return t;
    };
    const context = (leaf: RegionNode) => new Set(read(`${region.itemTitle} ${leaf.context ?? ''}`));
    let before: RegionNode | undefined;
    for (const { leaf, passage, run, prev, next } of passages(region.node)) {
      const own = leafTerms(leaf);
      const heading = context(leaf);
      const ctx = new Set(heading);
      // An English sentence that opens by referring back reads its subject from the sentence before
      // it: that sentence's terms count as its context (half, as a heading's do).
      if (question.english && prev && leaf.kind === 'sentence' && REFERS_BACK.test(leaf.text)) for (const t of leafTerms(prev)) ctx.add(t);
      // A code block is introduced by the text just before it under the same heading ("To stop the
      // daemon, run:"): that text's terms are its context too.
      if (leaf.kind === 'code' && before && before.kind !== 'code' && (before.context ?? '') === (leaf.context ?? '')) for (const t of leafTerms(before)) ctx.add(t);
      before = leaf;
      const passageTerms = new Set<string>();
      for (const p of passage) for (const t of leafTerms(p)) passageTerms.add(t);
      if (filing && leaf.kind === 'row' && !rows.has(run)) rows.set(run, tableFacts(run, `${region.itemTitle}\n${leaf.context ?? ''}`));
      const c: ReaderCandidate = {
        region,
        leaf,
        order: candidates.length,
        quotable: isQuotable(leaf.kind, leaf.text) && (!mustAdd || [...own].some((t) => !question.allTerms.has(t))),
        own,
        context: ctx,
        heading,
        passage: passageTerms,
        run,
        filing,
        features: {},
      };
      if (prev) c.prev = prev;
      if (next) c.next = next;
      candidates.push(c);
    }
  }
  const weight = termWeights(candidates.map((c) => c.own));
  const whole: QuestionPart = { text: question.focus, answerType: question.answerType, terms: question.questionTerms, entities: question.entities };
  const cover = (set: ReadonlySet<string>, ctx: ReadonlySet<string> = EMPTY) => partCoverage(whole, set, ctx, weight).coverage;

  // Per-candidate raw values first (the relative features need the best of each).
  const denseById = new Map<ReaderCandidate, number>();
  const lexOwn = new Map<ReaderCandidate, number>();
  for (const c of candidates) {
    denseById.set(c, denseOf(c.region, c.leaf.id) ?? (c.region.score !== 0 ? c.region.score : meanDense));
    lexOwn.set(c, cover(c.own));
  }
  const bestDense = Math.max(...[...denseById.values()], Number.NEGATIVE_INFINITY);
  const bestLex = Math.max(0, ...lexOwn.values());
  const denseRank = rankOf([...denseById.entries()]);
  const byItem = new Map<string, number>();
  for (const c of candidates) byItem.set(c.region.itemId, Math.max(byItem.get(c.region.itemId) ?? 0, c.region.retrieval ?? 0));
  const bestRetrieval = Math.max(0, ...byItem.values());
  const names = questionSourceNames(question.focus);
  const listSize = question.english ? askedListSize(question.focus) : undefined;
  const bigramsIn = (t: string) => {
    if (question.bigrams.size === 0) return 0;
    const ts = terms(t);
    let hits = 0;
    const seen = new Set<string>();
    for (let i = 0; i + 1 < ts.length; i++) {
      const b = `${ts[i]} ${ts[i + 1]}`;
      if (question.bigrams.has(b) && !seen.has(b)) {
        seen.add(b);
        hits++;
      }
    }
    return hits / question.bigrams.size;
  };
  const byId = new Map(candidates.map((c) => [c.leaf.id, c]));
  const asksFigure = question.answerType === 'number' || question.answerType === 'date' || /\d/.test(question.focus);

  for (const c of candidates) {
    const dense = denseById.get(c)!;
    const parent = parentId(c.leaf.id);
    const parentDense = parent !== undefined ? denseOf(c.region, parent) : undefined;
    const own = lexOwn.get(c)!;
    const neighbours = [c.prev, c.next].filter((n): n is RegionNode => n !== undefined).map((n) => byId.get(n.id)).filter((n): n is ReaderCandidate => n !== undefined);
    const novel = c.own.size === 0 ? 0 : [...c.own].filter((t) => !question.allTerms.has(t)).length / c.own.size;
    const words = c.leaf.text.split(/\s+/).filter(Boolean).length;
    // A filing's table row that is no line item — a glossary's or a footnote's prose, a header row of
    // column labels — is read as the text it is, not as a row of figures (the filings profile).
    const row = c.leaf.kind === 'row' && !(c.filing && !isLineItem(c.leaf.text));
    const f: Record<string, number> = {
      node_score: c.region.leafScores?.get(c.leaf.id) ?? dense,
      dense,
      dense_gap: dense - bestDense,
      dense_rank: 1 / (1 + denseRank.get(c)!),
      parent_dense: parentDense ?? dense,
      lex_own: own,
      support_own: cover(c.own, c.context),
      support_passage: cover(c.passage, c.context),
      lex_gap: own - bestLex,
      lex_context: cover(EMPTY, c.heading),
      lex_passage: cover(c.passage),
      lex_neighbor: Math.max(0, ...neighbours.map((n) => lexOwn.get(n)!)),
      title_cover: cover(new Set(terms(c.region.itemTitle))),
      bigram: bigramsIn(leafText(c.leaf)),
      novel,
      restates: c.own.size > 0 && novel === 0 ? 1 : 0,
      words_log: Math.log1p(words),
      row: row ? 1 : 0,
      list_item: c.leaf.kind === 'listItem' ? 1 : 0,
      code: c.leaf.kind === 'code' || c.leaf.modality === 'code' ? 1 : 0,
      first_in_passage: c.prev ? 0 : 1,
      has_number: NUMBER.test(c.leaf.text) ? 1 : 0,
      has_year: YEAR.test(c.leaf.text) ? 1 : 0,
      named_source: names.length > 0 && namesSource(names, c.region.file, c.region.itemTitle) ? 1 : 0,
    };
    // The paragraph just before the table the leaf lies in, when the layout knows it (a PDF table the controller kept).
    if (c.region.leadIn) f.lead_in_cover = cover(new Set(terms(c.region.leadIn)));
    // A row is read by its cells, a sentence by its words: their coverage and cosine weigh apart.
    if (row) {
      f.row_support = f.support_own!;
      f.row_dense = dense;
      // A row holds figures: it answers a question that asks for one or names one (a year, an amount).
      f.row_figure = asksFigure ? 1 : 0;
    }
    // Where the rounds retrieved the item (not a given context's order): its rank, score and round.
    if (c.region.rank !== undefined) f.item_rank = 1 / (1 + c.region.rank);
    if (c.region.round !== undefined) f.later_round = c.region.round > 1 ? 1 : 0;
    if (c.region.retrieval !== undefined && bestRetrieval > 0) f.retrieval_rel = c.region.retrieval / bestRetrieval;
    if (question.english) {
      // A question that asks how to do something is answered by code: a code block, or a leaf that is
      // mostly code spans (a command written inline), that says something the question does not.
      const procedure = question.procedure && novel > 0 && (f.code === 1 || mostlyCode(c.leaf.text));
      // A link's target is no answer either ("[Build a server](./get-started/first-server.md)" names no file the text says).
      const cue = procedure || answerCue(question.answerType, withoutLinkTargets(c.leaf.text), question.allTerms) !== undefined ? 1 : 0;
      f.cue = cue;
      // The kind of answer weighs apart by kind: a date for "when" is a sharper cue than a capitalised name for "who".
      if (question.answerType === 'date') f.cue_date = cue;
      if (question.answerType === 'number') f.cue_number = cue;
      f.cue_cover = cue * Math.max(own, f.lex_passage!);
      f.list_enough = listSize !== undefined && listedItems(c.leaf.text) >= listSize ? 1 : 0;
      f.anaphoric = ANAPHORIC_START.test(c.leaf.text) ? 1 : 0;
    }
    c.features = f;
  }
  if (anyFiling) filingFeatures(question, candidates, rows, weight);
  return { question, candidates, weight, parts: question.parts };
}

const EMPTY: ReadonlySet<string> = new Set();

/** A leaf that is mostly code spans: a command or a call written inline ("`npm i @types/stopword --save-dev`"). */
function mostlyCode(text: string): boolean {
  const spans = [...text.matchAll(/`[^`\n]+`/g)].reduce((n, m) => n + m[0].length, 0);
  return spans > 0 && spans >= 0.5 * text.trim().length;
}

/** 0-based rank of each entry by value, best first. */
function rankOf<K>(entries: Array<[K, number]>): Map<K, number> {
  const sorted = [...entries].sort((a, b) => b[1] - a[1]);
  return new Map(sorted.map(([k], i) => [k, i]));
}

/** The least cover a statement row's is measured against (`filing_row`): the best row's counts whole only when it names at least this share of the metric. */
const COVER_FLOOR = 0.5;
/** What is left of a statement row's support in a filing whose name carries none of the asked period, where another kept filing's does. */
const OTHER_PERIOD_FILE = 0.5;
/** The words a question about the future asks with (cues.ts FORWARD), as terms: an expectation need not repeat them to be about what is asked. */
const FORWARD_TERMS: ReadonlySet<string> = new Set(filingTerms('expect expects expected expecting anticipate anticipates anticipated intend intends intended plan plans planned forecast forecasts future going forward will'));

/** The filings profile's features, for candidates of filing documents (the rules of the former extractive reader, now features). */
function filingFeatures(question: QuestionReading, candidates: ReaderCandidate[], rows: Map<RegionNode[], TableFacts>, weight: (t: string) => number): void {
  const filings = candidates.filter((c) => c.filing);
  if (filings.length === 0) return;
  const asked = question.asked;
  const figure = askedFigure(asked, question.focus, [...new Set(filings.map((c) => squash(c.region.file.replace(/\.[^.]+$/, ''))))]);
  const whereTerms = statementNameTerms(asked, figure);
  const describes = asksCompanyActivity(question.focus);
  if (describes) for (const t of filingTerms(COMPANY_ACTIVITY_WORDS)) whereTerms.add(t);
  const forward = FORWARD.test(question.focus);
  const kind = superlativeKind(question.focus);
  const kindTerms = kind ? filingTerms(kind) : [];
  const prefer = sourcePreference(question.focus);
  const questionTerms = [...new Set(filingTerms(question.focus))].filter((t) => !whereTerms.has(t));
  // A statement row naming the asked line item: its label's cover of the metric relative to the best kept row's (or to
  // COVER_FLOOR, when no row names half the metric: a row that names one word of it is no line item asked), times its table's fit.
  const cover = new Map<ReaderCandidate, number>();
  // When the question names a source among the evidence (a company's filing, an article), another source's rows answer nothing.
  const someNamed = candidates.some((c) => c.features.named_source === 1);
  for (const c of filings) {
    const table = rows.get(c.run);
    if (table && (!someNamed || c.features.named_source === 1)) cover.set(c, rowCover(figure, c.leaf, weight));
  }
  // The same line item in several kept tables of a filing: the one with far smaller figures is part of the company.
  const largest = new Map<string, number>();
  const scales = new Map<ReaderCandidate, number>();
  for (const c of filings) {
    if (c.leaf.kind !== 'row') continue;
    const key = labelKey(c.leaf.text);
    const scale = rowScale(c.leaf.text);
    if (!key || scale === 0) continue;
    scales.set(c, scale);
    const k = `${c.region.file}\u0000${key}`;
    largest.set(k, Math.max(scale, largest.get(k) ?? 0));
  }
  // The period a filing's own name carries (sourcePeriods.ts: "…_2024Q2_10Q" for "Q2 of FY2024"): a row of a
  // filing of another period than the best-fitting kept filing's is a row for another period, whatever its columns say.
  const periodFit = (c: ReaderCandidate) => {
    const p = prefer ? prefer(c.region.file, c.region.itemTitle) : 0;
    return Math.max(0, p >= 10 ? p - 10 : p);
  };
  const bestCover = Math.max(COVER_FLOOR, ...cover.values());
  const bestPeriod = Math.max(0, ...[...cover.keys()].map(periodFit));
  const periodShare = (c: ReaderCandidate) => (bestPeriod > 0 ? OTHER_PERIOD_FILE + (1 - OTHER_PERIOD_FILE) * (periodFit(c) / bestPeriod) : 1);
  // An expectation about what is asked: the share of the question's other terms (not its words of expecting) the leaf names.
  const askedTerms = questionTerms.filter((t) => !FORWARD_TERMS.has(t));
  const forwardCover = (c: ReaderCandidate) => (askedTerms.length === 0 ? 1 : partCoverage({ terms: askedTerms }, c.own, c.context, weight).coverage);
  for (const c of filings) {
    const f = c.features;
    const table = rows.get(c.run);
    const v = cover.get(c);
    f.filing_row = table && v !== undefined ? (rowWeight(figure, table) * v * rowFit(figure, table) * periodShare(c)) / bestCover : 0;
    const scale = scales.get(c);
    f.filing_part_row = scale !== undefined && scale < PART_SCALE * largest.get(`${c.region.file}\u0000${labelKey(c.leaf.text)}`)! ? 1 : 0;
    const named = questionTerms.filter((t) => c.own.has(t));
    f.filing_period_only = named.length > 0 && named.every((t) => PERIOD_TERM.test(t)) ? 1 : 0;
    f.filing_forward = forward && FORWARD.test(c.leaf.text) ? forwardCover(c) : 0;
    f.filing_describes = describes && c.leaf.kind === 'sentence' && COMPANY_DESCRIPTION.test(c.leaf.text) ? 1 : 0;
    const leadIn = c.region.leadIn ? new Set(filingTerms(c.region.leadIn)) : undefined;
    f.filing_kind_table = kindTerms.length > 0 && c.leaf.kind === 'row' && kindTerms.some((t) => c.context.has(t) || (leadIn?.has(t) ?? false)) ? 1 : 0;
    // sourcePeriods.ts: 10 + the period's fit for a file of a named source, the fit alone otherwise (−0.5 … 2).
    const p = prefer ? prefer(c.region.file, c.region.itemTitle) : 0;
    f.filing_source_period = (p >= 10 ? p - 10 : p) / 2;
    // A filing's heading path is a statement's name or a table's column header: what it shares with the
    // question says another thing there than a guide's heading or a web page's section does. The
    // profile's own copy of the feature learns the difference filings make, so the general
    // `lex_context` learns from the other documents what a heading says (domain-augmented features).
    f.filing_lex_context = f.lex_context!;
  }
}
