/**
 * What a question asks, read without a model: the kind of answer it expects (a date for "when",
 * an amount for "how much", a name for "who"…), its parts when it asks several things at once
 * ("Which plot lost ash trees, and what should be replanted there?"), and its content terms and
 * named entities. The no-LLM critic judges sufficiency part by part with it, and the extractive
 * reader picks one answering sentence per part with it (src/core/text/support.ts).
 */
import { contentTerms, entitySpans, isNumberSpan, words } from './terms';

/**
 * The kind of answer a question (part) expects; `other` when nothing in its wording says.
 * `identifier`: a name in code or on a command line ("Which function …", "What command …").
 */
export type AnswerType = 'date' | 'number' | 'person' | 'place' | 'identifier' | 'yesno' | 'other';

export interface QuestionPart {
  /** The part's own words, as the question wrote them. */
  text: string;
  answerType: AnswerType;
  /** Content terms (stemmed, stop words removed), unique, in order. */
  terms: string[];
  /** Named-entity-like spans of the part. */
  entities: string[];
}

export interface QuestionAnalysis {
  question: string;
  parts: QuestionPart[];
  /** Content terms of the whole question, unique. */
  terms: string[];
  entities: string[];
  /** A comparison of two or more named things ("Were X and Y of the same nationality?", "Which is older, X or Y?"). */
  comparison: boolean;
  /** The named things a comparison compares (empty when the question is none). */
  compared: string[];
}

const WH = new Set(['what', 'when', 'where', 'which', 'who', 'whom', 'whose', 'why', 'how']);
const AUX = new Set(['is', 'are', 'was', 'were', 'do', 'does', 'did', 'can', 'could', 'has', 'have', 'had', 'will', 'would', 'should', 'shall', 'may', 'might', 'must']);

const DATE_NOUNS = /\b(year|years|date|day|month|decade|century|era|period|time|season|week)\b/;
const NUMBER_NOUNS =
  /\b(amount|number|total|sum|count|percentage|percent|share|ratio|rate|margin|revenue|revenues|sales|income|profit|loss|cost|costs|expense|expenses|price|value|size|population|height|length|width|weight|distance|area|capacity|age|score|salary|budget|debt|cash|capex|capital|dividend|dividends|eps|earnings|assets|liabilities|equity)\b/;
const PLACE_NOUNS = /\b(city|country|state|town|county|province|region|place|location|continent|island|river|mountain|village|capital|nation|headquarters)\b/;
/** Nouns for a name in code or on a command line, read right after "what"/"which" ("Which function …", "What environment variable …"). */
const IDENTIFIER_NOUNS = /^(?:\w+ )?(functions?|methods?|commands?|flags?|options?|packages?|modules?|variables?|parameters?|settings?|endpoints?|apis?|hooks?|callbacks?|identifiers?|keywords?)\b/;
const PERSON_NOUNS = /\b(person|man|woman|actor|actress|author|writer|director|singer|player|president|founder|ceo|king|queen|leader|artist|composer|poet|politician|scientist|who)\b/;

/** The answer type of one clause, from its wh-word and the noun it asks about. */
export function answerTypeOf(clause: string): AnswerType {
  const ws = words(clause);
  const lower = ws.join(' ');
  const firstWh = ws.findIndex((w) => WH.has(w));
  if (firstWh < 0) return ws.length > 0 && AUX.has(ws[0]!) ? 'yesno' : 'other';
  const wh = ws[firstWh]!;
  const after = ws.slice(firstWh + 1, firstWh + 5).join(' ');
  if (wh === 'when') return 'date';
  if (wh === 'where') return 'place';
  if (wh === 'who' || wh === 'whom' || wh === 'whose') return 'person';
  if (wh === 'how') {
    const next = ws[firstWh + 1];
    if (next === 'much' || next === 'many' || next === 'long' || next === 'old' || next === 'far' || next === 'big' || next === 'large' || next === 'tall' || next === 'high' || next === 'often') {
      return next === 'long' && /\bago\b/.test(lower) ? 'date' : 'number';
    }
    return 'other';
  }
  if (wh === 'what' || wh === 'which') {
    // The noun right after the wh-word (or one word on: "Which CLI flag …") names a code name.
    if (IDENTIFIER_NOUNS.test(ws.slice(firstWh + 1, firstWh + 3).join(' '))) return 'identifier';
    if (DATE_NOUNS.test(after)) return 'date';
    if (NUMBER_NOUNS.test(after)) return 'number';
    if (PLACE_NOUNS.test(after)) return 'place';
    if (PERSON_NOUNS.test(after)) return 'person';
  }
  if (/^(in|on|at|during) (what|which) (year|date|month|day|decade|century)/.test(lower)) return 'date';
  return 'other';
}

/**
 * A question that asks how to do something — "How do I stop the daemon?", "How can we register the
 * types?", "how to mount a handler", "prefix search example" — is answered in software
 * documentation by what to type or write: a code block, a command, a call. English wording only.
 */
export function asksProcedure(question: string): boolean {
  const q = question.toLowerCase();
  return /\bhow (?:do|can|should|could|would|might|may|must) (?:i|we|you|one)\b/.test(q) || /\bhow to\b/.test(q) || /\b(?:examples?|snippets?|syntax)\b/.test(q);
}

/**
 * The words that name the kind of answer a question asks for, which the sentence that answers need
 * not repeat: a unit of date ("What year did Queen Maren die?", "In which century …", "What day
 * of the week …" → year; day, week) — "She died in 1391" names no year, while "during the later
 * years of her reign" does — and a kind ("What type of rally was held?" → type), which a sentence
 * about "all types of classes" shares while "a pep rally" does not. Lower-case words as the
 * question writes them; empty when it asks no such thing.
 */
export function askedKindWords(question: string): string[] {
  const date = /\b(?:what|which)\s+(year|date|day|month|decade|century)(?:\s+of\s+the\s+(week|year|month))?\b/i.exec(question);
  const kind = /\b(?:what|which)\s+(types?|kinds?|sorts?)\s+of\b/i.exec(question);
  return [...(date ? [date[1]!, ...(date[2] ? [date[2]] : [])] : []), ...(kind ? [kind[1]!] : [])].map((w) => w.toLowerCase());
}

/**
 * Splits a question into the things it asks: at "?" between questions, and at ", and" / "and" /
 * ";" when a wh-word follows (a new clause asking something else). A clause without its own
 * content terms is not a part of its own.
 */
export function questionParts(question: string): string[] {
  const sentences = question
    .split(/\?\s*/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const parts: string[] = [];
  for (const s of sentences) {
    const pieces = s.split(/\s*(?:,\s*and|;|\band)\s+(?=(?:what|when|where|which|who|whom|whose|why|how)\b)/i);
    for (const p of pieces) {
      const t = p.trim().replace(/^(and|but|also)\s+/i, '');
      if (contentTerms(t).length > 0) parts.push(t);
      else if (parts.length > 0) parts[parts.length - 1] = `${parts[parts.length - 1]} ${t}`;
    }
  }
  return parts.length > 0 ? parts : [question.trim()];
}

const unique = <T>(xs: T[]): T[] => [...new Set(xs)];

/**
 * "Maren Holt and Jonas Vik" is two names, "Salt and Ember" one: a span is split at "and" /
 * "or" when every side is itself a name of two or more capitalised words (`paired`: of one or
 * more, when the question pairs them with "both" / "either" / "neither").
 */
export function splitConjoined(entity: string, paired = false): string[] {
  const sides = entity.split(/\s+(?:and|or|&)\s+/);
  if (sides.length < 2) return [entity];
  const name = (s: string) => (s.match(/\p{Lu}[\p{L}'’.-]*/gu) ?? []).length >= (paired ? 1 : 2);
  return sides.every(name) ? sides : [entity];
}

/** A question that pairs named things ("both Corvalia and Meridium", "either X or Y") splits even one-word names. */
const entitiesOf = (text: string): string[] => {
  const paired = /\b(?:both|either|neither)\b/i.test(text);
  return unique(entitySpans(text).flatMap((e) => splitConjoined(e, paired)));
};

export function analyzeQuestion(question: string): QuestionAnalysis {
  const parts = questionParts(question).map((text) => ({
    text,
    answerType: answerTypeOf(text),
    terms: unique(contentTerms(text)),
    entities: entitiesOf(text),
  }));
  const entities = entitiesOf(question);
  const candidates = comparedThings(entities);
  // The comparing word must be the question's own: not inside a title it names ("The Little Easter
  // Kite"), and "of the same name" names a source, it compares nothing.
  let rest = question;
  for (const e of entities) rest = rest.split(e).join(' ');
  const lower = rest.toLowerCase().replace(/\bof the same name\b/g, ' ');
  const comparison =
    candidates.length >= 2 &&
    (/\b(both|same|either|neither|compared?|than|older|younger|earlier|later|first|larger|smaller|bigger|longer|shorter|taller|higher|lower|more|less|fewer)\b/.test(lower) || /,? or /.test(lower));
  if (!comparison) {
    // "the difference between X and Y", "X vs. Y": a comparison of things that need not be names.
    const between = contrastedThings(question);
    if (between) return { question, parts, terms: unique(contentTerms(question)), entities, comparison: true, compared: between };
  }
  return { question, parts, terms: unique(contentTerms(question)), entities, comparison, compared: comparison ? candidates : [] };
}

/** The two things "the difference between X and Y" or "X vs. Y" / "X versus Y" sets side by side, without their articles. */
function contrastedThings(question: string): string[] | undefined {
  const q = question.replace(/[?.!]+\s*$/, '').trim();
  const m = /\bdiff\w* between (.+?) and (.+)$/i.exec(q) ?? /^(?:.*\b(?:is|are|use|choose|pick)\s+)?(.+?)\s+(?:vs\.?|versus)\s+(.+)$/i.exec(q);
  if (!m) return undefined;
  const thing = (s: string) => s.replace(/^(?:the|a|an|using)\s+/i, '').replace(/\s+(?:in|for|when|on)\s+.*$/i, '').trim();
  const things = [thing(m[1]!), thing(m[2]!)];
  return things.every((t) => contentTerms(t).length > 0) && things[0] !== things[1] ? things : undefined;
}

/**
 * The named things a comparison can compare: not a bare number or year ("the 1941 film"), and not
 * a name inside another the question names ("Easter" in "the animated Easter special \"The Little
 * Easter Kite\"").
 */
function comparedThings(entities: readonly string[]): string[] {
  const named = entities.filter((e) => !isNumberSpan(e));
  const termsOf = named.map((e) => new Set(contentTerms(e)));
  return named.filter((e, i) => termsOf[i]!.size > 0 && !termsOf.some((o, j) => j !== i && o.size > termsOf[i]!.size && [...termsOf[i]!].every((t) => o.has(t))));
}

/**
 * The part of a question that asks, without the instructions around it: when the text holds
 * questions (sentences ending in "?"), those and any definitions ("… is defined as …") are kept
 * and instruction sentences are dropped ("Give the figure in USD millions.", "Round it to one
 * decimal place.", "If X is not disclosed, then say so and explain why."), a
 * lead-in that ends in "question:" is cut ("Some background first … The question: what is …"), and
 * so is a unit in parentheses ("(in USD millions)"). Text
 * without a "?" is returned as it is.
 */
export function questionFocus(question: string): string {
  const sentences = question.match(/[^.?!]+(?:[.?!]+(?=\s|$)|$)|[.?!]+/g) ?? [question];
  if (!sentences.some((s) => s.trim().endsWith('?'))) return question.trim();
  const kept = sentences
    .map((s) => s.trim())
    .filter((s) => s.endsWith('?') || /\b(is|are) defined as\b|^define\b/i.test(s))
    .map((s) => s.replace(/^.*\bquestion\s*:\s*/i, '').replace(/\s*\((?:in|as)?\s*(?:usd|us\$|\$|eur|gbp)?\s*(?:millions?|billions?|thousands?|percent(?:age)?s?)\)/gi, ''));
  return kept.join(' ').trim() || question.trim();
}

/**
 * A reporting period or currency as a question writes it ("FY2023", "Q2'2023", "Q22023", "Q2",
 * "YTD", "USD"): a qualifier of what is asked, which a filing writes its own way ("fiscal 2023",
 * "three months ended June 30, 2023", "$ in millions"), so the words never occur in the evidence.
 * `term` is a content term (text/terms.ts: lower case).
 */
export function isPeriodOrCurrency(term: string): boolean {
  return /^(?:fy|cy|ytd|qtd|ttm|ltm|q[1-4]|h[12]|[1-4]q|usd|eur|gbp|jpy|chf|cad|aud|cny|rmb)$/.test(term) || /^(?:fy|cy|q[1-4]|h[12]|[1-4]q)['’]?(?:\d{2}|\d{4})$/.test(term) || /^\d{4}['’]?(?:q[1-4]|h[12])$/.test(term);
}

/** A named-thing span that only names periods or currencies ("FY2023 and FY2022", "Q2 of FY2024", "USD"). */
export function isPeriodSpan(entity: string): boolean {
  const ws = words(entity).filter((w) => !/^(?:and|or|of|the|to|in|through|vs|versus)$/.test(w));
  return ws.length > 0 && ws.every(isPeriodOrCurrency);
}

const RELATION_NOUNS =
  'husband|wife|spouse|partner|sibling|siblings|brother|sister|father|mother|son|daughter|child|children|parent|parents|uncle|aunt|grandfather|grandmother|nephew|niece|cousin|owner|founder|creator|author|writer|director|producer|performer|composer|singer|lyricist|successor|predecessor|employer|manufacturer|developer|publisher|distributor|designer|architect|actor|actress|voice|label|birthplace|hometown';
/** "Maren Holt's husband", "the performer of Lanterns", "the spouse of the Lanterns performer". */
const POSSESSIVE_RELATION = new RegExp(`\\p{Lu}[\\p{L}\\d.’'-]*(?:\\s+\\p{Lu}[\\p{L}\\d.’'-]*)*['’]s?\\s+(?:[\\p{L}-]+\\s+)?(?:${RELATION_NOUNS})\\b`, 'gu');
const RELATION_OF = new RegExp(`\\b[Tt]he\\s+(?:[\\p{L}-]+\\s+)?(?:${RELATION_NOUNS})\\s+of\\s+`, 'gu');
/** A thing described by a clause of its own: "the venue that held …", "the person who ended …". */
const DESCRIBED = /(?:^|\s)(?:[Tt]he|[Aa]n?|[Tt]his)\s+(?:(?!(?:the|an?|this)\s)[\p{L}\d'’-]+\s+){0,4}?(?:who|whom|whose|who['’]s|that|which|where)\s+\p{L}/gu;
/** The same with a participle for the clause: "the film containing the song …", "the actor playing Captain Vell", "the league founded by …". */
const DESCRIBED_BY_PARTICIPLE =
  /(?:^|\s)(?:[Tt]he|[Aa]n?|[Tt]his)\s+(?:(?!(?:the|an?|this)\s)[\p{L}\d'’-]+\s+){0,3}?(?:containing|featuring|starring|hosting|holding|housing|playing|portraying|voicing|behind|(?:named|nicknamed|called|known) (?:after|for|as)|(?:directed|written|founded|owned|produced|created|designed|built|played|portrayed|performed|voiced|composed|sung|released|published|developed|invented|discovered|established|formed|led|managed|coached) by)\s+\p{L}/gu;
/** What comes before a described thing that is the thing asked for: "What was the team that …", "Name a text that …". */
const ASKED_THING = /^(?:(?:what|which|who|whom)\s+(?:is|was|are|were)|name|list|give|identify|describe)\s+(?:(?:the|a|an)\s+(?:name|title|term|word|type|kind)s?\s+of\s+)?$/iu;

/**
 * The phrase that makes a question multi-hop by its form, when it has one: it names its subject
 * only through another thing — a relation of a named thing ("Maren Holt's husband", "the
 * performer of Lanterns") or a thing described by a clause of its own that is not the thing asked
 * for ("in the venue that held the 2004 convention", "When did the person who ended the empire
 * die?"). Such a question needs a second hop to the described thing's own item however well the
 * first round's evidence covers its words; a lookup ("Who gave Lorne's eulogy?", "Name a tool
 * that a gardener might use") has no such phrase. Undefined when none is found.
 */
export function nestedReference(question: string): string | undefined {
  const q = question.replace(/\s+/g, ' ').trim();
  for (const re of [POSSESSIVE_RELATION, RELATION_OF, DESCRIBED, DESCRIBED_BY_PARTICIPLE]) {
    for (const m of q.matchAll(re)) {
      const before = q.slice(0, m.index + (m[0].length - m[0].trimStart().length));
      // "… to which enzyme?" asks; "… in which Maren held a position" describes.
      const rest = q.slice(m.index + m[0].length - 1);
      if (re !== POSSESSIVE_RELATION && re !== RELATION_OF && words(rest).length <= 2) continue;
      if (!ASKED_THING.test(before)) return m[0].trim();
    }
  }
  return undefined;
}
