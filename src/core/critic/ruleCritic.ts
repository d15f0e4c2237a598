/**
 * The deterministic critic used when no LLM is configured (design §6). It asks, part by part
 * (text/question.ts), whether the kept evidence answers the question:
 *  - a part is answered when one kept sentence or row covers at least `minCoverage` of the part's
 *    content terms (weighted by rarity among the kept regions; the item's title counts half) and,
 *    when the part asks for a date, an amount or a name, carries one the question does not
 *    already name (text/support.ts);
 *    a sentence that does not name every named thing of the part (in its text or its item's
 *    title) counts half its coverage: it may share the words, but it is about something else;
 *  - every named thing in the question must be mentioned somewhere in the evidence (and, when the
 *    caller can look titles up, an item the index holds about it must have been retrieved), and a
 *    comparison of named things ("Were X and Y of the same nationality?") needs a kept sentence
 *    about each of them.
 * When every part is answered the evidence is sufficient and the rounds stop — this is a stopping
 * rule, not a guarantee. Otherwise the follow-up query is built from what is missing: for each
 * unanswered part, its uncovered words, and the *bridge* — a named thing that the part's
 * best-supporting sentences introduce (not in the question) and that no retrieved item is about
 * yet, which is where the second hop of a multi-hop question lies. When the caller can look titles
 * up (`CriticInput.ownItems`), a named thing with an item of its own is the likelier bridge: those
 * the kept sentences of the items the question names introduce come first, and of names a
 * sentence introduces as often, one with an item.
 * The verdict names what the follow-up looks for (`followUpNames`), whose own items the next
 * round takes first. A query already issued is never repeated; with nothing new to ask, the
 * verdict says so and names what is missing.
 *
 * When the parts are answered, the critic (with `lookAhead`) still searches for the named things
 * the answering sentences introduce that no retrieved item is about: an item the index holds about
 * one of them (its title names exactly that thing) is a bridge whose own item is missing
 * (`details.answerBridge`), and the next round fetches it with that same search.
 *
 * A question multi-hop by its form (`nestedReference`: "Maren Holt's husband", "the venue that
 * held …") is not answered by its first hop. Its bridge is read where the phrase points: in the
 * kept item about the thing the phrase names (the Maren Holt item), the sentences that best cover
 * the phrase's other words ("husband") introduce it ("Jonas Vik"); when no retrieved item is about
 * that bridge (an item is about what its title names, not its disambiguation: "Tamsin Township,
 * Brannock County, North Dakota" is not about Brannock County), it is missing (`details.hopGap`)
 * and the follow-up asks for it, also when the question's words are all covered. Without such an
 * item, the first hop is every part's best sentence when each lies in an item the question names.
 *
 * With `lookAhead` (the default), before it asks for another round, the critic looks at what the follow-up
 * query would bring (`CriticInput.probe`: the next round's retrieval, run ahead and reused by
 * that round). The round
 * is worth running only when a new item holds a sentence that covers an unanswered part clearly
 * better than the best kept one (`probeMargin`), is about a bridge (its title names it), or
 * mentions a named thing of the question the evidence lacks. Otherwise the rounds stop here with
 * the gap named — a search that returns only more of what is already there is not a real gap.
 * A nested question's follow-up runs without looking: its next hop's item seldom shows in a search
 * by the question's words (the MuSiQue sample lost 7 of 57 all-gold questions to the look-ahead).
 */
import { sentenceSpans } from '../ingest/sentences';
import { fits } from '../profiles/profiles';
import { analyzeQuestion, isPeriodOrCurrency, isPeriodSpan, nestedReference, questionFocus, type QuestionAnalysis, type QuestionPart } from '../text/question';
import { answerCue, foldPossessives, isDateWordSpan, partCoverage, termWeights } from '../text/support';
import { contentTerms, entitySpans, indexTerm, isNumberSpan, isStopword, words } from '../text/terms';
import { namedSubject, subjectOf, withoutDisambiguation } from '../text/titles';
import type { Critic, CriticInput, CriticVerdict, EvidenceView, ProbeItem } from './critic';
import type { CriticPartDetail } from '../../contracts/trace';

/** A sentence that does not name every named thing of a part counts this share of its coverage. */
const UNRELATED_SCALE = 0.5;

export interface RuleCriticOptions {
  /** Share of a part's weighted terms one kept sentence must cover for the part to count as answered (default 0.6). */
  minCoverage?: number;
  /** Sentences per unanswered part whose named things are bridge candidates (default 2, from different items). */
  bridgeSources?: number;
  /** At most this many bridges go into one follow-up query (default 2). */
  maxBridges?: number;
  /**
   * Look at what the follow-up query would retrieve (`CriticInput.probe`) before asking for the
   * round (default true; a question multi-hop by its form runs its follow-up without looking).
   */
  lookAhead?: boolean;
  /**
   * A probed new item is worth a round when one of its sentences covers an unanswered part by at
   * least this much more than the best kept sentence does (default 0.15).
   */
  probeMargin?: number;
}

/** One kept sentence or row, with its item's title as context. */
interface Unit {
  itemId: string;
  title: string;
  rank: number;
  round: number;
  text: string;
  own: Set<string>;
  context: Set<string>;
}

export type PartVerdict = CriticPartDetail;

/**
 * The content terms of a question's identifiers: words that mix letters and digits ("h1", "es2015")
 * and words written as code — in backticks, with leading dashes, lower camelCase, snake_case or
 * dotted (`os.path`) —
 * which documentation names exactly. Not years, not ordinals ("3rd"), not a plain capitalised word.
 */
export function identifierTerms(question: string): string[] {
  const out = new Set<string>();
  const code = [...question.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  const tokens = question.split(/[\s,;:!?()"“”]+/).filter(Boolean);
  for (const raw of [...code, ...tokens]) {
    const w = raw.replace(/^['’]+|['’.]+$/g, '');
    const coded = code.includes(raw) || /^--?\p{L}/u.test(w) || /^\p{Ll}+\p{Lu}/u.test(w) || /\p{L}_\p{L}/u.test(w) || /\p{Ll}{2,}\.\p{Ll}{2,}/u.test(w);
    for (const t of contentTerms(w)) {
      // A term of letters and digits together ("h1", "es2015"), not an ordinal or a decade.
      const mixed = /\p{L}/u.test(t) && /\d/.test(t) && !/^\d+(?:st|nd|rd|th|s)$/i.test(t);
      if (mixed || coded) out.add(t);
    }
  }
  return [...out];
}

/** A year or decade as a term ("2017", "1990s"). */
const isYearTerm = (t: string): boolean => /^(?:1[5-9]|20)\d{2}s?$/.test(t);

/** The analysis without reporting periods and currencies among its terms and named things (text/question.ts). */
function withoutPeriods(a: QuestionAnalysis): QuestionAnalysis {
  const terms = (ts: string[]) => ts.filter((t) => !isPeriodOrCurrency(t));
  const entities = (es: string[]) => es.filter((e) => !isPeriodSpan(e));
  const parts = a.parts.map((p) => ({ ...p, terms: terms(p.terms), entities: entities(p.entities) })).filter((p) => p.terms.length > 0 || p.entities.length > 0);
  const named = entities(a.entities);
  const compared = entities(a.compared);
  return { ...a, parts: parts.length > 0 ? parts : a.parts, terms: terms(a.terms), entities: named, comparison: compared.length >= 2, compared: compared.length >= 2 ? compared : [] };
}

/**
 * Whether a sentence names a compared thing by its whole name, not by a word of it: the name's
 * words in order (any case, any punctuation between them) in the sentence or its item's title, and
 * not going on as a longer name ("The Storm" is named in "Northlight's The Storm (2006)" and by
 * "Keeper: Lost at Sea" for "Keeper", not in "Chasing Storm with Ada Lund", "storm drains" or "the
 * Storm Watch desk").
 */
function namesWhole(name: string): (u: Unit) => boolean {
  const ws = words(name);
  if (ws.length === 0) return () => true;
  const escape = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // Case-insensitive, so "a capitalised word follows" is checked on the text after each match.
  const re = new RegExp(`(?<![\\p{L}\\p{N}])${ws.map(escape).join('[^\\p{L}\\p{N}]+')}(?![\\p{L}\\p{N}])`, 'giu');
  const named = (text: string) => [...text.matchAll(re)].some((m) => !/^\s+\p{Lu}/u.test(text.slice(m.index + m[0].length)));
  return (u) => named(u.text) || named(namedSubject(u.title));
}

function unitsOf(evidence: readonly EvidenceView[]): Unit[] {
  const units: Unit[] = [];
  for (const e of evidence) {
    const context = new Set(contentTerms(e.title));
    const texts = e.keptLeaves ?? e.keptTexts.flatMap((t) => sentenceSpans(t).map(([a, b]) => t.slice(a, b)));
    for (const text of texts) {
      const own = new Set(contentTerms(text));
      if (own.size > 0) units.push({ itemId: e.itemId, title: e.title, rank: e.rank, round: e.round, text, own, context });
    }
  }
  return units;
}

/**
 * The named things a critic's bridge sources introduce, counted and ranked: each sentence's named
 * things that the question does not name, no retrieved item is about and no earlier query searched
 * for, weighted by how often (a name of several words counts more). A set of sources is read once
 * (the title lookup and the bridges read the same). With `own` (the names the index holds an item
 * of their own for, no round retrieved), of two names introduced as often the one with an item
 * ranks first.
 */
class BridgeRanking {
  own: ReadonlySet<string> = new Set();
  private readonly counted = new WeakMap<readonly Unit[], Map<string, number>>();

  constructor(
    private readonly ctx: {
      questionTerms: ReadonlySet<string>;
      aboutSeenItem: (entity: string) => boolean;
      asked: ReadonlySet<string>;
      maxBridges: number;
    },
  ) {}

  candidatesIn(sources: readonly Unit[]): Map<string, number> {
    const known = this.counted.get(sources);
    if (known) return known;
    const counts = new Map<string, number>();
    for (const u of sources) {
      for (const entity of entitySpans(u.text)) {
        const terms = contentTerms(entity);
        if (terms.length === 0 || isNumberSpan(entity) || isDateWordSpan(entity)) continue; // a number or a month is no next hop
        if (terms.every((t) => this.ctx.questionTerms.has(t))) continue; // the question already names it
        if (this.ctx.aboutSeenItem(entity)) continue; // an item about it was retrieved
        if (terms.every((t) => this.ctx.asked.has(t))) continue; // already searched for
        counts.set(entity, (counts.get(entity) ?? 0) + 1 + (terms.length > 1 ? 1 : 0));
      }
    }
    this.counted.set(sources, counts);
    return counts;
  }

  /** The counted names that have an item of their own, most often first (then the longer). */
  ownFirst(counts: ReadonlyMap<string, number>): string[] {
    return [...counts.entries()]
      .filter(([e]) => this.own.has(e))
      .sort((a, b) => b[1] - a[1] || b[0].length - a[0].length)
      .map(([e]) => e);
  }

  /** The sources' best `maxBridges` names: most often first, then (with `preferOwn`) those with an item of their own, then the longer. */
  bridgesIn(sources: readonly Unit[], preferOwn = true): string[] {
    return [...this.candidatesIn(sources).entries()]
      .sort((a, b) => b[1] - a[1] || (preferOwn ? Number(this.own.has(b[0])) - Number(this.own.has(a[0])) : 0) || b[0].length - a[0].length)
      .slice(0, this.ctx.maxBridges)
      .map(([e]) => e);
  }
}

export class RuleCritic implements Critic {
  readonly kind = 'rule' as const;
  private readonly minCoverage: number;
  private readonly bridgeSources: number;
  private readonly maxBridges: number;
  private readonly probeMargin: number;
  private readonly lookAhead: boolean;

  constructor(options: RuleCriticOptions = {}) {
    this.minCoverage = options.minCoverage ?? 0.6;
    this.bridgeSources = options.bridgeSources ?? 2;
    this.maxBridges = options.maxBridges ?? 2;
    this.probeMargin = options.probeMargin ?? 0.15;
    this.lookAhead = options.lookAhead ?? true;
  }

  /**
   * The bridges of a nested phrase: the kept sentences of the item about the thing the phrase
   * names (its subject's words all in the phrase), ranked by how well they cover the phrase's
   * other words, and the named things the best of them introduce. Undefined when no kept item is
   * about a thing the phrase names.
   */
  private nestedBridges(
    phraseText: string,
    units: readonly Unit[],
    weight: (term: string) => number,
    bridgesIn: (sources: readonly Unit[]) => string[],
  ): { anchor: string; bridges: string[]; said: Unit[] } | undefined {
    // The phrase as the question goes on from it ("the county where T…" → "… where Tamsin Township is located"), possessives folded.
    const phrase = new Set(contentTerms(foldPossessives(phraseText)));
    let anchor: { title: string; subject: Set<string> } | undefined;
    for (const u of units) {
      const subject = new Set(contentTerms(namedSubject(u.title)));
      if (subject.size === 0 || ![...subject].every((t) => phrase.has(t))) continue;
      if (!anchor || subject.size > anchor.subject.size) anchor = { title: u.title, subject };
    }
    if (!anchor) return undefined;
    const relation = { terms: [...phrase].filter((t) => !anchor.subject.has(t)) };
    const sources = units
      .filter((u) => u.title === anchor.title)
      .map((u, i) => ({ u, i, c: relation.terms.length > 0 ? partCoverage(relation, u.own, new Set(), weight).coverage : 0 }))
      .sort((a, b) => b.c - a.c || a.i - b.i)
      .slice(0, this.bridgeSources)
      .map((x) => x.u);
    return { anchor: anchor.title, bridges: bridgesIn(sources), said: sources };
  }

  /**
   * The answer's own bridge: of the named things the answering sentences introduce (outside a
   * comparison, the named items' own-item names first), the first a search finds an item about —
   * its title names exactly that thing. Undefined when none.
   */
  private async answerBridge(
    judged: ReadonlyArray<{ ranked: Unit[] }>,
    comparison: boolean,
    namedOwn: readonly string[],
    bridgesIn: (sources: readonly Unit[], preferOwn?: boolean) => string[],
    input: CriticInput,
    signal?: AbortSignal,
  ): Promise<{ entity: string; item: string; query: string } | undefined> {
    const firstHop = judged.map((j) => j.ranked[0]).filter((u): u is Unit => u !== undefined);
    // The named things with an item of their own that the items the question names introduce
    // first ("What county is Piet Oldane from?" → Alder Hills), except in a comparison,
    // whose compared things are all named.
    const said = firstHop.length === judged.length ? bridgesIn(firstHop, false) : [];
    const candidates = comparison ? said : [...new Set([...namedOwn, ...said])].slice(0, this.maxBridges);
    const previous = new Set(input.previousQueries.map((q) => q.trim().toLowerCase()));
    const query = candidates.join(' ');
    if (candidates.length > 0 && !previous.has(query.toLowerCase())) {
      const probed = await input.probe!(query, signal, candidates);
      for (const entity of candidates) {
        const terms = new Set(contentTerms(entity));
        const item = probed?.find((p) => {
          const subject = contentTerms(namedSubject(p.title));
          return subject.length === terms.size && subject.every((t) => terms.has(t));
        });
        if (item) return { entity, item: item.title, query };
      }
    }
    return undefined;
  }

  async judge(input: CriticInput, signal?: AbortSignal): Promise<CriticVerdict> {
    // Possessives folded, as the evidence reads them: "Blue Harbor's new CEO" asks about Blue Harbor
    // ("harbor's" was never covered, so such a question's part was never answered).
    // Only what the question asks: instructions around it ("If … is not disclosed, then
    // say so and explain why.") are no part to answer, and a reporting period or currency as
    // the question writes it ("FY2023", "Q2 of FY2024", "USD") never occurs in a filing's words.
    const question = foldPossessives(questionFocus(input.question));
    // A filing's reporting periods and currencies as a question writes them ("FY2023", "Q2 of
    // FY2024", "USD") never occur in its words: left out of the terms — for filings only (the
    // filings profile), since "Q4" or "TTM" elsewhere are the words of what is asked.
    const filings = input.evidence.some((e) => e.regions?.some((r) => fits(r.document, 'filing')));
    const analysis = filings ? withoutPeriods(analyzeQuestion(question)) : analyzeQuestion(question);
    const questionTerms = new Set(analysis.terms);
    const units = unitsOf(input.evidence);
    const weight = termWeights(units.map((u) => u.own));
    const evidenceTerms = new Set(units.flatMap((u) => [...u.own, ...u.context]));
    // Identifiers the question names, as terms: words with letters and digits ("h1", "es2015", "b52")
    // or written as code ("--watch", "useState", "max_tokens", "`init`").
    const identifiers = identifierTerms(input.question);
    // The terms each item's kept text and title hold: an identifier the question names must be among
    // those of the item that answers it. (A year is read where the row's header names it — "2017 |
    // 2016" travels with every row — and a follow-up never searches for a year alone, below. Counting a
    // year anywhere in the item as covered cost a HotpotQA pool question its second hop: 285 → 284.)
    const itemTerms = new Map<string, Set<string>>();
    for (const u of units) {
      let t = itemTerms.get(u.itemId);
      if (!t) itemTerms.set(u.itemId, (t = new Set(u.context)));
      for (const x of u.own) t.add(x);
    }

    // A part that is one compared thing (a comparison's part per named thing, below).
    const isComparedPart = (part: QuestionPart) => analysis.comparison && part.entities.length === 1 && part.text === part.entities[0];
    const judgePart = (part: QuestionPart): { verdict: PartVerdict; ranked: Unit[] } => {
      // A sentence answers a part about named things only when it is about them: it, or its item's
      // title, names every one ("Ada Brenn (born …), host of a talk radio show" covers the
      // words of "When was the host of … Morning Ledger born?" but says nothing of it).
      const named = part.entities.map((e) => contentTerms(e)).filter((t) => t.length > 0);
      const wholeName = isComparedPart(part) ? namesWhole(part.text) : undefined;
      const about = (u: Unit) => named.every((terms) => terms.every((t) => u.own.has(t) || u.context.has(t))) && (wholeName === undefined || wholeName(u));
      const scored = units
        .map((u) => {
          const own = partCoverage(part, u.own, u.context, weight);
          const c = about(u) ? own : { ...own, coverage: own.coverage * UNRELATED_SCALE };
          const cue = answerCue(part.answerType, u.text, questionTerms);
          return { u, c, cue };
        })
        .sort((a, b) => b.c.coverage + (b.cue ? 0.05 : 0) - (a.c.coverage + (a.cue ? 0.05 : 0)) || a.u.round - b.u.round || a.u.rank - b.u.rank);
      const typed = part.answerType !== 'other' && part.answerType !== 'yesno';
      const top = scored[0];
      // An identifier the part names ("h1", "--watch", "useState") is exact: the answer's item must name it.
      const identifiersMissing = top ? identifiers.filter((t) => part.terms.includes(t) && !itemTerms.get(top.u.itemId)!.has(t)) : [];
      const answered = top !== undefined && top.c.coverage >= this.minCoverage && (!typed || top.cue !== undefined) && identifiersMissing.length === 0;
      return {
        verdict: {
          part: part.text,
          answerType: part.answerType,
          coverage: top?.c.coverage ?? 0,
          ...(top?.cue ? { cue: top.cue } : {}),
          answered,
          ...(top ? { best: top.u.text.slice(0, 160) } : {}),
          missingTerms: top ? [...new Set([...top.c.missing, ...identifiersMissing])] : [...part.terms],
        },
        ranked: scored.map((s) => s.u),
      };
    };

    // A comparison asks the same of each named thing: each needs evidence about it.
    const parts: QuestionPart[] =
      analysis.comparison && analysis.parts.length === 1
        ? analysis.compared.map((e) => ({ text: e, answerType: 'other' as const, terms: [...new Set(contentTerms(e))], entities: [e] }))
        : analysis.parts;
    const judged = parts.map(judgePart);
    // A named thing is in the evidence when its words are, as words and not as stems: the film
    // "Survival" is not in "Holt survived the winter" (a plural or possessive still counts).
    const evidenceWords = new Set(analysis.entities.length > 0 ? units.flatMap((u) => [...words(u.text), ...words(u.title)]) : []);
    const hasWord = (w: string) => evidenceWords.has(w) || evidenceWords.has(`${w}s`) || evidenceWords.has(`${w}'s`) || evidenceWords.has(`${w}’s`) || (w.endsWith('s') && evidenceWords.has(w.slice(0, -1)));
    const missingEntities = analysis.entities.filter((e) => !words(e).every((w) => isStopword(w) || hasWord(w)));
    let covered = judged.every((j) => j.verdict.answered) && missingEntities.length === 0;

    // Report and query with the question's own words, not their stems.
    const surface = new Map<string, string>();
    for (const w of words(input.question)) {
      const t = indexTerm(w);
      if (t && !surface.has(t)) surface.set(t, w);
    }
    // An item is about the thing its title names ("Tamsin Township, Brannock County, North
    // Dakota" is about Tamsin Township, not Brannock County): a bridge is retrieved when a
    // seen title names it, whatever the title's disambiguation mentions.
    const seenTitleTerms = input.seenTitles.map((t) => new Set(contentTerms(namedSubject(t))));
    const asked = new Set(input.previousQueries.flatMap((q) => contentTerms(q)));
    const aboutSeenItem = (entity: string) => {
      const terms = contentTerms(entity);
      return seenTitleTerms.some((title) => terms.every((t) => title.has(t)));
    };

    // Each part's bridge sources: its best sentences, one per item, `bridgeSources` of them.
    const partSources = judged.map(({ ranked }) => {
      const sources: Unit[] = [];
      for (const u of ranked) {
        if (sources.length >= this.bridgeSources) break;
        if (!sources.some((s) => s.itemId === u.itemId)) sources.push(u);
      }
      return sources;
    });
    const ranking = new BridgeRanking({ questionTerms, aboutSeenItem, asked, maxBridges: this.maxBridges });
    const namedByQuestion = (title: string) => {
      const terms = contentTerms(withoutDisambiguation(subjectOf(title)));
      return terms.length > 0 && terms.every((t) => questionTerms.has(t));
    };
    // What the items the question names introduce (their kept sentences).
    const namedCounts = ranking.candidatesIn(units.filter((u) => namedByQuestion(u.title)));
    // Which candidate bridges have an item of their own the evidence lacks (its title names exactly
    // that thing): of the sentences any bridge may come from (each part's best ones, the items the
    // question names), one title lookup. Of two names a sentence introduces as often, the one with
    // an item is the likelier next hop ("Ines Carrow (in her film debut) as a bellhop" among the
    // cast of "Last Train to Fenwick"); the answer's own bridge is ranked without it (it
    // sent answered comparisons on a round to fetch a name's item) but, outside a comparison,
    // takes the named items' own-item names first.
    let own: ReadonlySet<string> = new Set();
    if (input.ownItems) {
      const names = new Set(namedCounts.keys());
      for (const sources of partSources) for (const name of ranking.candidatesIn(sources).keys()) names.add(name);
      for (const e of analysis.entities) names.add(e);
      if (names.size > 0) own = await input.ownItems([...names]);
    }
    // A named thing of the question that the index holds an item about, never retrieved, is
    // missing however well its words are covered ("Dana Ferrell" in the Silver Reel Awards pre-show's
    // paragraph, not the newscaster's own; "Corvalia" in a family's list of genera).
    const namedAbsent = analysis.entities.filter((e) => own.has(e) && !missingEntities.includes(e));
    if (namedAbsent.length > 0) covered = false;
    // The named things the items the question names introduce (in their kept sentences) that have
    // an item of their own: the likeliest next hop of an unanswered part ("The character Jack from
    // Ferry to Nowhere" → "… Jonas Vik as Jack …"; "Which American film actor starred in
    // … Glass Orchard?" → "The movie stars Edwin Marlow …"), though its best sentences name others.
    ranking.own = own;
    const namedOwn = ranking.ownFirst(namedCounts);
    const bridgesIn = (sources: readonly Unit[], preferOwn = true): string[] => ranking.bridgesIn(sources, preferOwn);

    // A question multi-hop by its form is answered beyond the thing it names: when every part's
    // best sentence lies in an item about a thing the question names (the first hop) and that
    // sentence introduces a named thing no retrieved item is about (the bridge), the second hop
    // is still missing however well the words are covered.
    const nested = nestedReference(input.question);
    // The nested phrase's own first hop: the item about the thing it names ("Maren Holt's
    // husband" → the Maren Holt item), and in it the sentences that say the relation ("husband",
    // "actress who played Clara Dunmore", "the county where … is located"); the named things they
    // introduce are the bridge. Sentences chosen by the whole question's words come from wherever
    // those words are common and bring unrelated names.
    const anchored = nested ? this.nestedBridges(input.question.slice(Math.max(0, input.question.indexOf(nested))), units, weight, bridgesIn) : undefined;
    // `said`: the first hop's sentences the bridges come from; what they say is answered.
    let hopGap: { firstHop: string; bridges: string[]; said: Unit[] } | undefined;
    if (covered && anchored && anchored.bridges.length > 0) hopGap = { firstHop: anchored.anchor, bridges: anchored.bridges, said: anchored.said };
    else if (covered && nested && judged.every((j) => j.ranked[0] !== undefined && namedByQuestion(j.ranked[0].title))) {
      const firstHop = judged.map((j) => j.ranked[0]!);
      const found = bridgesIn(firstHop);
      if (found.length > 0) hopGap = { firstHop: firstHop[0]!.title, bridges: found, said: firstHop };
    }
    let sufficient = covered && hopGap === undefined;
    // The answer's own bridge: the sentences that answer the parts introduce a named thing the
    // question does not name and no retrieved item is about — often the first hop of a question
    // that asks about the second ("the flying component of the 719th Wing … stationed in" → Halvard
    // Air Force Base). When a search for it finds an item about it (its title names exactly that
    // thing), that item is the gap: a bridge entity whose own item is missing. Only an item the
    // index really holds makes a round, and that round reuses the search.
    const answerBridge = sufficient && this.lookAhead && input.probe ? await this.answerBridge(judged, analysis.comparison, namedOwn, bridgesIn, input, signal) : undefined;
    if (answerBridge) sufficient = false;

    const missing: string[] = [...missingEntities];
    const bridges: string[] = [];
    /** Compared things no sentence names yet: searched for by name. */
    const comparedMissing: string[] = [];
    const queries: string[] = [];
    if (answerBridge) {
      missing.push(answerBridge.entity);
      bridges.push(answerBridge.entity);
      queries.push(answerBridge.query);
    }
    if (hopGap) {
      missing.push(...hopGap.bridges);
      bridges.push(...hopGap.bridges);
      // The bridge, with what the question asks that the first hop's sentences do not say: "the
      // university at which Tomas Rell served as head football coach" is said ("he served as head
      // football coach at Harwick University"), so the search is for Harwick University itself.
      const firstHopTerms = new Set([...contentTerms(hopGap.firstHop), ...hopGap.said.flatMap((u) => [...u.own])]);
      const rest = analysis.terms.filter((t) => !firstHopTerms.has(t)).map((t) => surface.get(t) ?? t);
      queries.push([...hopGap.bridges, ...rest].join(' '));
    }
    for (const [i, { verdict }] of judged.entries()) {
      if (verdict.answered) continue;
      let words = verdict.missingTerms.map((t) => surface.get(t) ?? t).filter((w) => !missing.includes(w));
      missing.push(...words);
      // A year is no query of its own: with nothing else missing, the part is searched for whole, its year with it.
      if (words.length > 0 && verdict.missingTerms.every(isYearTerm)) words = [];
      // Bridges: named things the part's best sentences (from different items) introduce.
      const sources = partSources[i]!;
      // A compared thing is searched for by its name: what a sentence about something else names is no bridge to it.
      const comparedPart = isComparedPart(parts[i]!);
      if (comparedPart) comparedMissing.push(verdict.part);
      const found = anchored && anchored.bridges.length > 0 ? anchored.bridges : bridgesIn(sources);
      const partBridges = comparedPart ? [] : [...new Set([...namedOwn, ...found])].slice(0, this.maxBridges).filter((e) => !bridges.includes(e));
      bridges.push(...partBridges);
      const query = [...partBridges, ...(words.length > 0 ? words : [verdict.part])].join(' ').replace(/\s+/g, ' ').trim();
      if (query) queries.push(query);
    }
    if (missingEntities.length > 0) queries.push(missingEntities.join(' '));
    if (namedAbsent.length > 0) {
      missing.push(...namedAbsent);
      bridges.push(...namedAbsent.filter((e) => !bridges.includes(e)));
      queries.push(namedAbsent.join(' '));
    }

    const details: Record<string, unknown> = {
      parts: judged.map((j) => j.verdict),
      missingEntities,
      bridges,
      minCoverage: this.minCoverage,
      ...(hopGap ? { hopGap: { nestedReference: nested, firstHop: hopGap.firstHop, bridges: hopGap.bridges } } : {}),
      ...(answerBridge ? { answerBridge } : {}),
      ...(own.size > 0 ? { ownItems: [...own] } : {}),
      ...(namedAbsent.length > 0 ? { namedAbsent } : {}),
    };
    const verdict: CriticVerdict = { sufficient, missing: sufficient ? [] : missing, source: 'rule', details };
    if (!sufficient) {
      const previous = new Set(input.previousQueries.map((q) => q.trim().toLowerCase()));
      const query = [...new Set(queries)].join(' ').replace(/\s+/g, ' ').trim();
      if (query && !previous.has(query.toLowerCase())) {
        verdict.followUpQuery = query;
        // What the follow-up looks for by name: the next round takes those things' own items first.
        const names = [...new Set([...bridges, ...missingEntities, ...comparedMissing])];
        if (names.length > 0) verdict.followUpNames = names;
      } else details.noNewQuery = query ? 'the query for what is missing was already issued' : 'nothing to search for';
    }
    // A question that names its subject only through another thing ("Maren Holt's husband",
    // "the venue that held …") needs the described thing's own item, which a search by the
    // question's words rarely shows ahead: its follow-up round runs without the look-ahead.
    const hop = verdict.followUpQuery ? nested : undefined;
    if (hop) details.nestedReference = hop;
    // The answer's bridge was found by its own search, which the next round reuses.
    if (verdict.followUpQuery && input.probe && this.lookAhead && !hop && !answerBridge) {
      const unanswered = judged.flatMap((j, i) => (j.verdict.answered ? [] : [{ part: parts[i]!, best: j.verdict.coverage }]));
      const context: HopContext = { mentioned: new Set(units.flatMap((u) => [...u.own])), questionSequence: ` ${contentTerms(question).join(' ')} `, seenSubjects: new Set(input.seenTitles.map(subjectOf)) };
      await this.lookAheadAt(verdict, details, input, { unanswered, bridges, missingEntities, evidenceTerms, weight, hop: context }, signal);
    }
    return verdict;
  }

  /**
   * The look-ahead: what the follow-up query would retrieve (the next round's own request, which it
   * then reuses) is judged by `probeGain`; when nothing there fills a gap the follow-up is dropped
   * and the trace says why.
   */
  private async lookAheadAt(
    verdict: CriticVerdict,
    details: Record<string, unknown>,
    input: CriticInput,
    gap: { unanswered: ReadonlyArray<{ part: QuestionPart; best: number }>; bridges: readonly string[]; missingEntities: readonly string[]; evidenceTerms: ReadonlySet<string>; weight: (term: string) => number; hop: HopContext },
    signal?: AbortSignal,
  ): Promise<void> {
    const probed = await input.probe!(verdict.followUpQuery!, signal, verdict.followUpNames);
    if (!probed) return;
    const gain = probeGain(probed, gap.unanswered, gap.bridges, gap.missingEntities, gap.evidenceTerms, gap.weight, this.probeMargin, gap.hop);
    details.probe = { query: verdict.followUpQuery, items: probed.length, worth: gain.worth, reason: gain.reason };
    if (!gain.worth) {
      details.noNewQuery = `a search for “${verdict.followUpQuery}” finds nothing that answers better: ${gain.reason}`;
      delete verdict.followUpQuery;
      delete verdict.followUpNames;
    }
  }
}

/** What tells a new item that is the next hop: the terms the kept sentences mention, the question's, the subjects already held. */
export interface HopContext {
  mentioned: ReadonlySet<string>;
  /** The question's terms in order, space-separated, with a space at each end. */
  questionSequence: string;
  seenSubjects: ReadonlySet<string>;
}

/**
 * Whether the items a follow-up query would bring can fill a gap: one is about a bridge (its
 * title holds every term of the bridge), or is the next hop — about a new subject that the kept
 * sentences mention and the question does not name; one mentions a named thing or a term of an
 * unanswered part that the evidence lacks altogether; or one of their sentences covers an
 * unanswered part by `margin` more than the best kept one.
 */
export function probeGain(
  probed: readonly ProbeItem[],
  unanswered: ReadonlyArray<{ part: QuestionPart; best: number }>,
  bridges: readonly string[],
  missingEntities: readonly string[],
  evidenceTerms: ReadonlySet<string>,
  weight: (term: string) => number,
  margin: number,
  hop?: HopContext,
): { worth: boolean; reason: string } {
  if (probed.length === 0) return { worth: false, reason: 'no new item' };
  if (hop) {
    for (const item of probed) {
      const subject = subjectOf(item.title);
      // A part of a document ("PART I (p. 94–95)", "Early years (lines 12–30)") is about its
      // document, not about the heading its title repeats from page to page: only an item of its
      // own (an article, a file) is the next hop's.
      if (subject !== item.title.trim()) continue;
      if (hop.seenSubjects.has(subject)) continue;
      // A disambiguation ("Lanterns (band)", "Marrow Township, Kessel County, Indiana") is the
      // title's; the evidence names the thing itself.
      // The question names it only where it has the subject as a phrase: "the County serviced by
      // The Ferris Area Transit system" has both words of "Ferris County" but not the county.
      const terms = contentTerms(namedSubject(item.title));
      if (terms.length > 0 && terms.every((t) => hop.mentioned.has(t)) && !hop.questionSequence.includes(` ${terms.join(' ')} `)) {
        return { worth: true, reason: `“${item.title}” is about ${subject}, which the evidence mentions` };
      }
    }
  }
  const absent = [...new Set(unanswered.flatMap((u) => u.part.terms))].filter((t) => !evidenceTerms.has(t));
  for (const item of probed) {
    const title = new Set(contentTerms(item.title));
    const bridge = bridges.find((b) => {
      const terms = contentTerms(b);
      return terms.length > 0 && terms.every((t) => title.has(t));
    });
    if (bridge) return { worth: true, reason: `“${item.title}” is about the bridge ${bridge}` };
  }
  let bestGain = Number.NEGATIVE_INFINITY;
  for (const item of probed) {
    const context = new Set(contentTerms(item.title));
    for (const leaf of item.leaves) {
      const own = new Set(contentTerms(leaf));
      if (own.size === 0) continue;
      for (const e of missingEntities) {
        const terms = contentTerms(e);
        if (terms.length > 0 && terms.every((t) => own.has(t))) return { worth: true, reason: `“${item.title}” mentions ${e}` };
      }
      const fresh = absent.find((t) => own.has(t));
      if (fresh !== undefined) return { worth: true, reason: `“${item.title}” mentions “${fresh}”, which the evidence lacks` };
      for (const u of unanswered) {
        const gain = partCoverage(u.part, own, context, weight).coverage - u.best;
        if (gain >= margin) return { worth: true, reason: `“${item.title}” covers “${u.part.text}” better (+${gain.toFixed(2)})` };
        bestGain = Math.max(bestGain, gain);
      }
    }
  }
  const how = Number.isFinite(bestGain) ? `at most ${bestGain >= 0 ? '+' : ''}${bestGain.toFixed(2)} coverage over the kept evidence` : 'no sentence with the question’s words';
  return { worth: false, reason: `${probed.length} new item(s), ${how}` };
}
