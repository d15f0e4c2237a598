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
  for (const s of wordSegmenter.segment(text)) if (s.isWordLike) out.push(s.segment.toLowerCase());
  return out;
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
  for (const m of text.matchAll(/["“]([^"”]{2,80})["”]/g)) found.push(m[1]!.trim());
  const tokens = [...wordSegmenter.segment(text)];
  let run: string[] = [];
  let pendingJoiners: string[] = [];
  const flush = () => {
    if (run.length > 0) found.push(run.join(' '));
    run = [];
    pendingJoiners = [];
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!t.isWordLike) {
      if (/^\s+$/.test(t.segment) || t.segment === '-' || t.segment === "'") continue;
      flush();
      continue;
    }
    const w = t.segment;
    const sentenceStart = i === 0 || /[.!?:]\s*$/.test(tokens.slice(Math.max(0, i - 2), i).map((x) => x.segment).join(''));
    if (/^\p{Lu}/u.test(w) && !(sentenceStart && stopwords.has(w.toLowerCase()))) {
      run.push(...pendingJoiners, w);
      pendingJoiners = [];
    } else if (/^\d[\d,.]*$/.test(w)) {
      flush();
      found.push(w);
    } else if (run.length > 0 && ['of', 'the', 'de', 'la', 'von', 'van', 'and', 'du', 'der'].includes(w)) {
      pendingJoiners.push(w);
    } else {
      flush();
    }
  }
  flush();
  return [...new Set(found)];
}
