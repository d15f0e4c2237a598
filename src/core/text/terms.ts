/**
 * Term processing shared by BM25, the no-LLM critic and the extractive reader, so that "the
 * evidence covers this question term" means the same thing everywhere: Unicode word
 * segmentation (Intl.Segmenter), lower-casing, English stop-word removal (`stopword`) and
 * Porter stemming (`stemmer`).
 */
import { eng } from 'stopword';
import { stemmer } from 'stemmer';

// Question words are stop words here: "when" or "which" never needs to appear in evidence.
const questionWords = ['what', 'when', 'where', 'which', 'who', 'whom', 'whose', 'why', 'how', 'did', 'does', 'do'];
const stopwords = new Set<string>([...eng, ...questionWords]);
const wordSegmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** Word tokens in order, lower-cased, punctuation dropped. */
export function words(text: string): string[] {
  const out: string[] = [];
  if (isAscii(text)) {
    asciiWords(text, out);
    return out;
  }
  // Whitespace always ends a word, so each whitespace-delimited chunk segments on its own: ASCII
  // chunks by the scanner, the others (accents, curly quotes, CJK) by ICU.
  for (const m of text.matchAll(/[^ \t\n\r\f\v]+/g)) {
    const chunk = m[0];
    if (isAscii(chunk)) asciiWords(chunk, out);
    else for (const s of wordSegmenter.segment(chunk)) if (s.isWordLike) out.push(s.segment.toLowerCase());
  }
  return out;
}

const isAscii = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return false;
  return true;
};

/** 1 letter, 2 digit, 3 underscore, 0 anything else (ASCII). */
function wordClass(c: number): number {
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) return 1;
  if (c >= 48 && c <= 57) return 2;
  return c === 95 ? 3 : 0;
}

/**
 * ICU's word segmentation (UAX #29, what `Intl.Segmenter` gives) of ASCII text, its word-like
 * segments only — about 7× faster, and tokenising was the largest single cost of a warm ask (the
 * rank gate, the critic, the reader and BM25 all read words). Letters, digits and "_" form words;
 * ":", "." and "'" join two letters ("e.g", "don't"), ",", ";", "." and "'" join two digits
 * ("1,000.5"); a run of underscores alone is a word from two on. Checked equal to Intl.Segmenter
 * on random ASCII strings (test/unit/text/terms.test.ts).
 */
function asciiWords(text: string, out: string[]): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let last = wordClass(text.charCodeAt(i));
    if (last === 0) {
      i++;
      continue;
    }
    const start = i;
    let alnum = last !== 3;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      const k = wordClass(c);
      if (k !== 0) {
        last = k;
        if (k !== 3) alnum = true;
        i++;
        continue;
      }
      const next = i + 1 < n ? wordClass(text.charCodeAt(i + 1)) : 0;
      if (last === 1 && next === 1 && (c === 58 || c === 46 || c === 39)) i += 2;
      else if (last === 2 && next === 2 && (c === 44 || c === 59 || c === 46 || c === 39)) i += 2;
      else break;
    }
    if (alnum || i - start >= 2) out.push(text.slice(start, i).toLowerCase());
  }
}

export function isStopword(word: string): boolean {
  return stopwords.has(word);
}

/** One word → its index term, or undefined for stop words. */
export function indexTerm(word: string): string | undefined {
  const w = word.toLowerCase();
  if (stopwords.has(w)) return undefined;
  return /^\p{L}+$/u.test(w) ? stemmer(w) : w;
}

/** Content terms of a text: stemmed, stop words removed, in order (duplicates kept). */
export function contentTerms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    const t = indexTerm(w);
    if (t) out.push(t);
  }
  return out;
}

/**
 * Named-entity-like spans: runs of capitalised words (allowing short lower-case joiners such as
 * "of", "the", "de" inside a run), numbers and quoted phrases. A rule, not a model: it is what
 * the no-LLM critic can afford, and the trace shows exactly what it found.
 */
export function entitySpans(text: string): string[] {
  const found: string[] = [];
  // A quotation opens on a word and closes after one: the closing quote of one title and the
  // opening quote of the next do not quote what lies between them.
  for (const m of text.matchAll(/["“](?=[^\s"”])([^"”\n]{2,80})(?<=[^\s"“])["”]/g)) found.push(m[1]!.trim());
  // A line break ends a run: a heading and the sentence below it are not one name.
  for (const line of text.split(/\n+/)) found.push(...lineEntities(line));
  return [...new Set(found)];
}

const joiners = new Set(['of', 'the', 'de', 'la', 'von', 'van', 'and', 'du', 'der']);

function lineEntities(line: string): string[] {
  const found: string[] = [];
  const tokens = [...wordSegmenter.segment(line)];
  let run: string[] = [];
  let pendingJoiners: string[] = [];
  let runAtSentenceStart = false;
  let atSentenceStart = true;
  const flush = () => {
    // A capitalised word opening a sentence is usually just capitalised ("Findings", "Replant"),
    // not a name: a sentence-initial word followed by "the" is a verb or a heading ("Replant the
    // P5 gap"), while "Bank of England" stays one name.
    if (runAtSentenceStart && run.length > 1 && run[1] === 'the') {
      let i = 1;
      while (i < run.length && joiners.has(run[i]!)) i++;
      run = run.slice(i);
      runAtSentenceStart = false;
    }
    if (run.length > 1 || (run.length === 1 && !runAtSentenceStart)) found.push(run.join(' '));
    run = [];
    pendingJoiners = [];
  };
  for (const t of tokens) {
    if (!t.isWordLike) {
      if (/^\s+$/.test(t.segment) || t.segment === '-' || t.segment === "'") continue;
      flush();
      if (/[.!?:;]/.test(t.segment)) atSentenceStart = true;
      continue;
    }
    const w = t.segment;
    if (/^\p{Lu}/u.test(w) && !(atSentenceStart && stopwords.has(w.toLowerCase()))) {
      if (run.length === 0) runAtSentenceStart = atSentenceStart;
      run.push(...pendingJoiners, w);
      pendingJoiners = [];
    } else if (/^\d[\d,.]*$/.test(w)) {
      flush();
      found.push(w);
    } else if (/^\d+(?:st|nd|rd|th|d)$/.test(w)) {
      // An ordinal opens the name it precedes: "the 14th Lancer Division", "3rd Baron Westmere".
      flush();
      pendingJoiners = [w];
    } else if (run.length > 0 && joiners.has(w)) {
      pendingJoiners.push(w);
    } else {
      flush();
    }
    atSentenceStart = false;
  }
  flush();
  return found;
}

/** A span that is a number or date ("1950", "16 February 1988"), not a name an ordinal opens ("14th Lancer Division"). */
export function isNumberSpan(span: string): boolean {
  return /^\d/.test(span) && !/^\d+(?:st|nd|rd|th|d) /.test(span);
}
