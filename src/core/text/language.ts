/**
 * The language of a question or a document, and the terms a text is read with in it.
 *
 * Detection is `tinyld` (its light profile: 24 languages, character n-grams, no dependencies)
 * confirmed by stop words (`stopword`'s lists): short questions fool an n-gram detector (1 in 55
 * of Natural Questions' lower-case English queries was called something else), while a real
 * question in German or French uses that language's function words ("die", "und", "est", "la")
 * more than English ones. So a text is another language only when the detector says so and its
 * words agree; text without letters, or too short to tell, is `und`.
 *
 * What depends on the language:
 *  - terms: English text is stemmed (Porter) and loses English stop words (text/terms.ts); any
 *    other language loses its own stop words, when `stopword` has them, and is not stemmed — a
 *    German question no longer counts "die" and "und" as content words;
 *  - English-only rules (the wh-word answer types, the pronoun and reference cues, the question's
 *    clause splitting, the filings profile's vocabulary) run only when the question is English or
 *    undetermined; the trace says what was switched off (`TraceLanguage`).
 */
import { detectAll, toISO3 } from 'tinyld/light';
import * as stopwords from 'stopword';
import { contentTerms, words } from './terms';

/** ISO 639-3 code, or `und` when the text does not say. */
export type LanguageCode = string;

export const ENGLISH = 'eng';
export const UNDETERMINED = 'und';

export interface DetectedLanguage {
  code: LanguageCode;
  /** The detector's own score for it (0–1); 0 for `und`. */
  score: number;
}

type StopwordLists = Record<string, unknown>;
const lists = stopwords as unknown as StopwordLists;
const stopSets = new Map<string, ReadonlySet<string>>();

/** The stop-word set of a language (ISO 639-3), when `stopword` has one. */
export function stopwordsOf(code: LanguageCode): ReadonlySet<string> | undefined {
  let set = stopSets.get(code);
  if (set === undefined) {
    const list = lists[code];
    if (!Array.isArray(list)) return undefined;
    set = new Set((list as string[]).map((w) => w.toLowerCase()));
    stopSets.set(code, set);
  }
  return set;
}

const letters = /\p{L}/u;

/** The language of a text: the detector's choice when the text's stop words agree, else English or `und`. */
export function detectLanguage(text: string): DetectedLanguage {
  const sample = text.length > 4000 ? text.slice(0, 4000) : text;
  const ws = words(sample).filter((w) => letters.test(w));
  if (ws.length < 2) return { code: UNDETERMINED, score: 0 };
  const ranked = detectAll(sample);
  const top = ranked[0];
  if (!top || !top.lang) return { code: ws.length >= 3 ? ENGLISH : UNDETERMINED, score: 0 };
  const code = toISO3(top.lang) || UNDETERMINED;
  if (code === ENGLISH) return { code, score: top.accuracy };
  const english = stopwordsOf(ENGLISH)!;
  const own = stopwordsOf(code);
  const englishHits = ws.filter((w) => english.has(w)).length;
  if (own) {
    const ownHits = ws.filter((w) => own.has(w)).length;
    return ownHits > englishHits ? { code, score: top.accuracy } : { code: ENGLISH, score: 0 };
  }
  // A language without a stop-word list: trust the detector for another script, not for Latin text
  // that uses English function words.
  return englishHits > 0 && /^[\p{Script=Latin}\p{N}\p{P}\p{Z}\p{S}]*$/u.test(sample) ? { code: ENGLISH, score: 0 } : { code, score: top.accuracy };
}

/** Whether the English-only rules apply to text of this language. */
export const englishRules = (code: LanguageCode): boolean => code === ENGLISH || code === UNDETERMINED;

/**
 * Content terms of a text read in a language: English (or undetermined) as text/terms.ts reads
 * it; another language lower-cased, without its stop words, unstemmed.
 */
export function termsIn(code: LanguageCode): (text: string) => string[] {
  if (englishRules(code)) return contentTerms;
  const stop = stopwordsOf(code) ?? new Set<string>();
  return (text) => words(text).filter((w) => !stop.has(w));
}

/** The human name of a language code, for notes ("German"); the code itself when unknown. */
export function languageName(code: LanguageCode): string {
  try {
    const two = ISO3_TO_2[code];
    const name = two ? new Intl.DisplayNames(['en'], { type: 'language' }).of(two) : undefined;
    return name ?? code;
  } catch {
    return code;
  }
}

/** The light profile's languages, ISO 639-3 → 639-1, for display names. */
const ISO3_TO_2: Record<string, string> = {
  eng: 'en', deu: 'de', fra: 'fr', spa: 'es', ita: 'it', por: 'pt', nld: 'nl', rus: 'ru', jpn: 'ja', cmn: 'zh', zho: 'zh', kor: 'ko',
  tur: 'tr', pol: 'pl', swe: 'sv', fin: 'fi', dan: 'da', nob: 'nb', ces: 'cs', hun: 'hu', ron: 'ro', ell: 'el', heb: 'he', ara: 'ar',
  hin: 'hi', ukr: 'uk', bul: 'bg', vie: 'vi', ind: 'id', tha: 'th', fas: 'fa', lat: 'la', epo: 'eo', srp: 'sr', slk: 'sk', isl: 'is',
  gle: 'ga', afr: 'af', tuk: 'tk', ber: 'ber',
};
