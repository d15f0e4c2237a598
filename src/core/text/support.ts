/**
 * How well one region (a sentence, a row) supports one part of a question, without a model:
 *  - coverage: the share of the part's content terms the region mentions, each term weighted by
 *    its rarity among the regions being compared (a term every region has says little); a term
 *    found only in the region's context (its item's title, a row's header) counts half;
 *  - cue: an answer of the kind the part asks for that the question does not already name (a date
 *    for "when", an amount for "how much", a name for "who");
 *  - quotable: a region an answer may quote — never a bare heading, caption or boilerplate line.
 * The no-LLM critic calls a part answered when some kept region covers it well and carries a cue;
 * the extractive reader quotes, per part, the region with the best support.
 */
import type { AnswerType, QuestionPart } from './question';
import { contentTerms, entitySpans, indexTerm, isNumberSpan, words } from './terms';

const SPLIT_WORD = /(\p{L}{3,}) ([b-hj-z])(?=[\s.,;:)]|$)/gu;

/** A PDF text layer splits a word's last letter off ("Balance Shee t", "Cash Flow s"): join it back. */
export function joinSplitWords(text: string): string {
  return text.replace(SPLIT_WORD, '$1$2');
}

/** A possessive read as the name it is of: "Lorne's eulogy" → "Lorne eulogy", as evidence names Lorne. */
export function foldPossessives(text: string): string {
  return text.replace(/(\p{L})['’]s\b/gu, '$1');
}

/**
 * Irregular English verb forms under their base form, which a question asks with after "did"
 * ("When did the war begin?", "What year did Queen Maren die?") while the evidence tells in the
 * past ("began in 1618", "died in 1391"); Porter stemming joins regular forms only ("died" → di,
 * "die" → die). Forms that are also common other words or names ("left", "found", "rose", "saw",
 * "lay", "bound", "shot", "Lent", "Fed", "Met") are left alone.
 */
const IRREGULAR_FORMS: ReadonlyArray<readonly [string, string]> = [
  ['arise', 'arose arisen'], ['bear', 'bore borne'], ['become', 'became'], ['begin', 'began begun'], ['bend', 'bent'],
  ['break', 'broke broken'], ['breed', 'bred'], ['bring', 'brought'], ['build', 'built'], ['buy', 'bought'], ['catch', 'caught'],
  ['choose', 'chose chosen'], ['deal', 'dealt'], ['die', 'died dies dying'], ['draw', 'drew drawn'], ['drive', 'drove driven'],
  ['eat', 'ate eaten'], ['fall', 'fell fallen'], ['feel', 'felt'], ['fight', 'fought'], ['flee', 'fled'], ['fly', 'flew flown'],
  ['forbid', 'forbade forbidden'], ['forget', 'forgot forgotten'], ['freeze', 'froze frozen'], ['give', 'gave given'], ['go', 'went gone'],
  ['grow', 'grew grown'], ['hide', 'hid hidden'], ['hold', 'held'], ['keep', 'kept'], ['know', 'knew known'],
  ['lead', 'led'], ['lose', 'lost'], ['make', 'made'], ['mean', 'meant'], ['overcome', 'overcame'],
  ['overthrow', 'overthrew overthrown'], ['pay', 'paid'], ['ride', 'rode ridden'], ['ring', 'rang rung'], ['rise', 'risen'], ['run', 'ran'],
  ['say', 'said'], ['seek', 'sought'], ['sell', 'sold'], ['send', 'sent'], ['shake', 'shook shaken'], ['shrink', 'shrank shrunk'],
  ['sing', 'sang sung'], ['sink', 'sank sunk'], ['sleep', 'slept'], ['speak', 'spoke spoken'], ['spend', 'spent'],
  ['stand', 'stood'], ['steal', 'stole stolen'], ['strike', 'struck stricken'], ['swear', 'swore sworn'], ['swim', 'swam swum'],
  ['take', 'took taken'], ['teach', 'taught'], ['tear', 'tore torn'], ['tell', 'told'], ['think', 'thought'], ['throw', 'threw thrown'],
  ['understand', 'understood'], ['undertake', 'undertook undertaken'], ['wake', 'woke woken'], ['wear', 'wore worn'], ['win', 'won'],
  ['withdraw', 'withdrew withdrawn'], ['write', 'wrote written'],
];
const BASE_FORM = new Map(IRREGULAR_FORMS.flatMap(([base, forms]) => forms.split(' ').map((f) => [f, base] as const)));
const IRREGULAR_WORD = new RegExp(`\\b(?:${[...BASE_FORM.keys()].join('|')})\\b`, 'gi');

/** Irregular verb forms read as their base form: "died" → die, "began" → begin (IRREGULAR_FORMS). */
export function foldIrregularVerbs(text: string): string {
  return text.replace(IRREGULAR_WORD, (w) => BASE_FORM.get(w.toLowerCase()) ?? w);
}

/**
 * Content terms for support, in English: contentTerms after folding possessives ("Lorne's",
 * "teachers'" → Lorne, teachers), irregular verbs ("died" → die), decades ("1970's" → 1970s),
 * formulas whose subscript became a separate digit ("O 2" → O2) and words a PDF split ("Shee t"),
 * so that a question about "Lorne's eulogy" covers a sentence naming Lorne. Both sides of a
 * comparison (question parts and evidence) must be read with it. Domain readings (a filing's line
 * items under their other names) are a profile's (profiles/filings/terms.ts `filingTerms`).
 */
export function supportTerms(text: string): string[] {
  return contentTerms(readingText(text));
}

/**
 * A code identifier also reads as the words it joins: `createMcpHonoApp` as "createMcpHonoApp
 * create Mcp Hono App", `QMD_EMBED_PARALLELISM` with "QMD EMBED PARALLELISM", `server.registerTool`
 * with "server register Tool". The identifier itself stays a term (an exact name still matches). A
 * name with capitals inside that opens with one ("McDonald", "YouTube") is a name, not joined words:
 * only an identifier that opens lower-case, or joins its parts with "_" or ".", is split.
 */
const IDENTIFIER = /(?<![\p{L}\p{N}_.])(?:[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Za-z][A-Za-z0-9]+(?:\.[A-Za-z][A-Za-z0-9]+)+)(?![\p{L}\p{N}_])/gu;
/** A name that can only be code: an identifier as IDENTIFIER reads it, a call (`name(`), a flag (`--watch`), a scoped package (`@scope/name`). */
const CODE_NAME = new RegExp(`${IDENTIFIER.source}|(?<![\\w-])--?[a-z][\\w-]*|@[\\w-]+\\/[\\w.-]+|\\b[A-Za-z_]\\w*(?=\\()`, 'gu');
export function withIdentifierWords(text: string): string {
  return text.replace(IDENTIFIER, (id) => `${id} ${identifierWords(id)}`);
}

/** The words an identifier joins: `createMcpHonoApp` → "create Mcp Hono App". */
const identifierWords = (id: string): string => id.replace(/[_.]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2');

/** The text as supportTerms reads it, before its terms are taken (profiles extend it). */
export function readingText(text: string): string {
  return (
    foldIrregularVerbs(foldPossessives(withIdentifierWords(text)))
      .replace(/(\p{L}s)['’](?=\s|$)/gu, '$1')
      // A decade written with an apostrophe names the decade: "the 1970's" covers "the 1970s".
      .replace(/\b(\d{2,4})['’]s\b/g, '$1s')
      // A formula whose subscript lost its formatting: "O 2", "CO 2" read as O2, CO2.
      .replace(/\b([B-HJ-Z][a-z]?|[A-Z]{2}) (\d)\b(?![.,]\d)/g, '$1$2')
      // A PDF text layer splits a word's last letter off ("Balance Shee t", "Cash Flow s").
      .replace(SPLIT_WORD, '$1$2')
  );
}

/** Whether a region says something the question does not: some content term of it is not a question term. */
export function addsToQuestion(own: ReadonlySet<string>, questionTerms: ReadonlySet<string>): boolean {
  for (const t of own) if (!questionTerms.has(t)) return true;
  return false;
}

/** Inverse document frequency over a set of regions' term sets: ln(1 + N / df). */
export function termWeights(regions: ReadonlyArray<ReadonlySet<string>>): (term: string) => number {
  const df = new Map<string, number>();
  for (const r of regions) for (const t of r) df.set(t, (df.get(t) ?? 0) + 1);
  const n = Math.max(1, regions.length);
  return (term) => Math.log(1 + n / Math.max(1, df.get(term) ?? 0));
}

export interface Coverage {
  /** Weighted share of the part's terms mentioned, 0–1. */
  coverage: number;
  covered: string[];
  missing: string[];
}

export function partCoverage(part: Pick<QuestionPart, 'terms'>, own: ReadonlySet<string>, context: ReadonlySet<string>, weight: (term: string) => number): Coverage {
  let total = 0;
  let got = 0;
  const covered: string[] = [];
  const missing: string[] = [];
  for (const t of part.terms) {
    const w = weight(t);
    total += w;
    if (own.has(t)) {
      got += w;
      covered.push(t);
    } else if (context.has(t)) {
      got += w / 2;
      covered.push(t);
    } else missing.push(t);
  }
  return { coverage: total > 0 ? got / total : 1, covered, missing };
}

const MONTHS = /\b(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\.?/i;
const YEAR = /\b(1[0-9]{3}|20[0-9]{2})s?\b/;
/** A span made of month and weekday names only ("February", "Monday, March"). */
const ONLY_DATE_WORDS =
  /^(?:(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\.?[\s,]*)+$/i;
/** A span that names only months or weekdays: a date, never a thing with an item of its own. */
export const isDateWordSpan = (span: string): boolean => ONLY_DATE_WORDS.test(span);
const DATE_WORDS = /\b(\d{1,2}(st|nd|rd|th) century|centuries|decade|today|yesterday|monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|fall|winter|bc|bce|ad|ce)\b/i;
/**
 * A number, written or in figures; a vague quantity counts ("How many ways …?" → "There are
 * several ways …", "How many solutions are there?" → "infinitely many"), since SQuAD-style answers are
 * often one. Not "many" or "few" alone: too common to mark an answer.
 */
const NUMERIC = /(?:[$€£¥]\s?)?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|million|billion|thousand|trillion|bn|mn)\b|%)?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|dozen|half|quarter|several|numerous|countless|dozens|hundreds|thousands|millions|billions|infinitely many)\b/i;

/**
 * The answer the region offers for the part's answer type, when it has one the question does not
 * already name; undefined otherwise (and for types without a cue: yes/no, other).
 */
export function answerCue(type: AnswerType, text: string, questionTerms: ReadonlySet<string>): string | undefined {
  const fresh = (s: string) => {
    const terms = contentTerms(s);
    return terms.length > 0 && !terms.every((t) => questionTerms.has(t));
  };
  switch (type) {
    case 'date': {
      for (const re of [MONTHS, YEAR, DATE_WORDS]) {
        for (const m of text.matchAll(new RegExp(re.source, 'gi'))) if (fresh(m[0])) return m[0];
      }
      return undefined;
    }
    case 'number': {
      for (const m of text.matchAll(new RegExp(NUMERIC.source, 'gi'))) {
        const digits = m[0].replace(/[^\d.]/g, '').replace(/\.$/, '');
        if (digits ? !questionTerms.has(digits) && !questionTerms.has(digits.replace(/\.\d+$/, '')) : fresh(m[0])) return m[0].trim();
      }
      return undefined;
    }
    case 'identifier': {
      // A name in code: a code span, an identifier (`createServer`, `max_bytes`, `fs.readFile`), a call, a flag or a scoped package.
      // It must name something the question does not: its words, not the identifier's own term, are compared.
      const names = (s: string) => s.replace(CODE_NAME, (id) => identifierWords(id));
      for (const m of text.matchAll(/`([^`\n]+)`/g)) if (fresh(names(m[1]!))) return m[1]!;
      for (const m of text.matchAll(CODE_NAME)) if (fresh(names(m[0]))) return m[0];
      return undefined;
    }
    case 'person':
    case 'place': {
      // A date is not a name: "(born 16 February 1988)" offers no country or person; nor is an
      // acronym a person ("premiered on NBC").
      for (const e of entitySpans(text)) if (!isNumberSpan(e) && !isDateWordSpan(e) && !(type === 'person' && /^\p{Lu}{2,}$/u.test(e)) && fresh(e)) return e;
      return undefined;
    }
    default:
      return undefined;
  }
}

const PREPOSITIONS = new Set(['in', 'on', 'at', 'for', 'by', 'after', 'before', 'during', 'within', 'over', 'under', 'than', 'about', 'from', 'to', 'with']);
const COUNT_WORDS: Record<string, number> = { two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 };

/**
 * How many things a question asks to be named, when it says: "What are three kinds of
 * igneous rock?" → 3, "Name two of …" → 2; undefined for a question that asks for one thing, a
 * number ("How many …") or nothing countable.
 */
export function askedListSize(question: string): number | undefined {
  const ws = words(question);
  if (ws[0] === 'how') return undefined;
  if (!ws.some((w) => w === 'what' || w === 'which' || w === 'name' || w === 'list')) return undefined;
  for (let i = 0; i + 1 < ws.length; i++) {
    // "in 2 games", "after three years": a count after a preposition qualifies, it does not ask.
    if (i > 0 && PREPOSITIONS.has(ws[i - 1]!)) continue;
    const n = COUNT_WORDS[ws[i]!] ?? (/^([2-9]|10)$/.test(ws[i]!) ? Number(ws[i]) : undefined);
    // The count must name things: a plural noun or "of" follows ("three kinds", "two of the …").
    if (n !== undefined && /^(of|\p{L}+s)$/u.test(ws[i + 1]!)) return n;
  }
  return undefined;
}

const LIST_ITEM = String.raw`[\p{L}\p{N}'’-]+(?:\s+[\p{L}\p{N}'’-]+){0,3}`;
const LIST = new RegExp(`${LIST_ITEM}(?:,\\s*${LIST_ITEM})*,?\\s+(?:and|or)\\s+${LIST_ITEM}`, 'gu');

/** The most items one enumeration in the text names: "macrophages, neutrophils, and dendritic cells" → 3. */
export function listedItems(text: string): number {
  let most = 0;
  for (const segment of text.split(/[;:()[\]]/)) {
    for (const m of segment.matchAll(LIST)) most = Math.max(most, (m[0].match(/,/g) ?? []).length + 2 - (/,\s*(?:and|or)\s/.test(m[0]) ? 1 : 0));
  }
  return most;
}

const CAPTION = /^\s*(figure|fig\.|table|exhibit|chart|source|sources|note|notes|see|page|contents|table of contents|index)\b[\s\d.:-]/i;

/**
 * Whether an answer may quote the region: sentences and rows, not headings, captions, page
 * furniture or title-like lines (most words capitalised), and not fragments of under four words.
 */
export function isQuotable(kind: string, text: string): boolean {
  if (kind === 'heading') return false;
  if (kind === 'row') return text.trim().length > 0;
  const ws = words(text);
  if (ws.length < 4) return false;
  if (CAPTION.test(text)) return false;
  const raw = text.match(/\p{L}[\p{L}'’-]*/gu) ?? [];
  const capitalised = raw.filter((w) => /^\p{Lu}/u.test(w)).length;
  // A title-like line: nearly every word capitalised and no sentence punctuation inside.
  if (raw.length >= 3 && capitalised / raw.length > 0.8 && !/[.;:!?]\s/.test(text.trim())) return false;
  // Mostly numbers and symbols (a page of figures, an exhibit index) with few words.
  if (ws.filter((w) => indexTerm(w) !== undefined && /\p{L}/u.test(w)).length < 2) return false;
  return true;
}
