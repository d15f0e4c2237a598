/**
 * One reading of a question for the judgments (the reader's and the critic's features): its
 * language, the part that asks (without instructions), its content terms read in that language,
 * and — for English — the answer type its wh-word asks for, its clauses, the words that name the
 * kind of answer ("What year …"), a comparison of named things. Another language's question gets
 * none of the English-only readings: one part, answer type `other`, its own stop words.
 */
import { analyzeQuestion, askedKindWords, asksProcedure, questionFocus, type AnswerType, type QuestionPart } from '../text/question';
import { detectLanguage, englishRules, languageName, termsIn, type DetectedLanguage } from '../text/language';
import { readingText, withIdentifierWords } from '../text/support';
import { entitySpans } from '../text/terms';
import type { TraceLanguage } from '../../contracts/trace';

export interface QuestionReading {
  /** The question as asked. */
  asked: string;
  /** The part that asks (text/question.ts questionFocus), for English; the question otherwise. */
  focus: string;
  language: DetectedLanguage;
  /** Whether the English-only readings ran. */
  english: boolean;
  /** Content terms of a text, as this question's language reads them. */
  terms: (text: string) => string[];
  /** The question's content terms, unique, less the words that name the kind of answer (when another term is left). */
  questionTerms: string[];
  /** The same, with those words: what a region that merely restates the question names. */
  allTerms: Set<string>;
  /** Its parts (clauses asking different things); one part for another language. */
  parts: QuestionPart[];
  answerType: AnswerType;
  /** It asks how to do something (text/question.ts asksProcedure; English only): code answers it. */
  procedure: boolean;
  /** Named things (capitalised runs, quotations, numbers). */
  entities: string[];
  /** Named things a comparison compares (empty when it is none). */
  compared: string[];
  /** Pairs of consecutive content terms ("nobel prize", "prize physics"), for phrase matches. */
  bigrams: Set<string>;
}

/** Reads a question once; `reading.terms` reads evidence the same way. */
export function readQuestion(asked: string): QuestionReading {
  const language = detectLanguage(asked);
  const english = englishRules(language.code);
  const focus = english ? questionFocus(asked) : asked.trim();
  const base = termsIn(language.code);
  // A code identifier reads as its words in any language (`readingText` does it for English with the English foldings).
  const terms = english ? (text: string) => base(readingText(text)) : (text: string) => base(withIdentifierWords(text));
  const all = unique(terms(focus));
  const kind = english ? new Set(terms(askedKindWords(focus).join(' '))) : new Set<string>();
  const without = all.filter((t) => !kind.has(t));
  const questionTerms = without.length > 0 ? without : all;
  let parts: QuestionPart[];
  let compared: string[] = [];
  let answerType: AnswerType = 'other';
  let entities: string[];
  if (english) {
    const analysis = analyzeQuestion(focus);
    parts = analysis.parts.map((p) => {
      const pt = unique(terms(p.text)).filter((t) => !kind.has(t));
      return { ...p, terms: pt.length > 0 ? pt : unique(terms(p.text)) };
    });
    compared = analysis.compared;
    answerType = analysis.parts[0]?.answerType ?? 'other';
    entities = analysis.entities;
  } else {
    entities = entitySpans(focus);
    parts = [{ text: focus, answerType: 'other', terms: questionTerms, entities }];
  }
  const bigrams = new Set<string>();
  for (let i = 0; i + 1 < all.length; i++) bigrams.add(`${all[i]} ${all[i + 1]}`);
  return { asked, focus, language, english, terms, questionTerms, allTerms: new Set(all), parts, answerType, procedure: english && asksProcedure(focus), entities, compared, bigrams };
}

/** What the trace records of the question's language (contracts/trace.ts `TraceLanguage`). */
export function languageRecord(reading: QuestionReading): TraceLanguage {
  if (reading.english) return { question: reading.language.code, englishRules: true };
  return {
    question: reading.language.code,
    englishRules: false,
    note: `The question reads as ${languageName(reading.language.code)}: the English-only rules (answer types from question words, clause splitting, pronoun cues, the filings profile's vocabulary) were switched off; the evidence was judged by the encoder's similarity and the question's own words.`,
  };
}

const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];
