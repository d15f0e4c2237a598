/**
 * Sentence spans with Node's built-in `Intl.Segmenter` (no dependency). Line breaks inside a
 * paragraph are hard wraps, not sentence ends, so they are hidden from the segmenter by swapping
 * them for spaces (same length, so offsets are unchanged). ICU also breaks after common
 * abbreviations ("Dr. Smith", "e.g. this") and after any abbreviation inside brackets ("(lit.
 * This is love)"), which is repaired here.
 */

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** Abbreviations after which a break is never a sentence end. Lower-case, without the final dot. */
const alwaysJoin = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'vs', 'cf', 'fig', 'figs', 'no', 'nos', 'vol', 'pp', 'p',
  'e.g', 'i.e', 'approx', 'ca', 'eq', 'eqs', 'ref', 'sec', 'ch', 'art', 'op', 'al', 'gen', 'col', 'lt', 'capt', 'sgt',
]);
/** Abbreviations that can also end a sentence: join only when the next piece starts in lower case or a digit. */
const joinIfLowerNext = new Set(['inc', 'ltd', 'co', 'corp', 'etc', 'u.s', 'u.k', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec']);

function lastToken(piece: string): string {
  const m = /([A-Za-z][A-Za-z.]*)\.\s*$/.exec(piece);
  return m ? m[1]!.toLowerCase() : '';
}

const windowChars = 4096;

/**
 * ICU's segments of `flat`, computed over windows: V8's sentence iterator slows down
 * sharply on long strings (14 s for 220 kB in one piece, 0.1 s in pieces). Each window's last
 * segment is dropped and re-read at the start of the next window, so a window edge never
 * invents a break; only a "sentence" longer than a window is cut (at its last space).
 */
function rawSegments(flat: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let pos = 0;
  while (pos < flat.length) {
    let end = Math.min(flat.length, pos + windowChars);
    const segs = [...segmenter.segment(flat.slice(pos, end))];
    if (end < flat.length && segs.length > 1) {
      for (const seg of segs.slice(0, -1)) out.push([pos + seg.index, pos + seg.index + seg.segment.length]);
      pos += segs[segs.length - 1]!.index;
      continue;
    }
    if (end < flat.length) {
      const space = flat.lastIndexOf(' ', end - 1);
      if (space > pos) end = space + 1;
    }
    if (segs.length > 1 || end === flat.length) {
      for (const seg of segmenter.segment(flat.slice(pos, end))) out.push([pos + seg.index, pos + seg.index + seg.segment.length]);
    } else out.push([pos, end]);
    pos = end;
  }
  return out;
}

/**
 * A sentence end, then the code span that opens the next sentence: "… no adapter. `createApp` is
 * …". ICU breaks before a capital, a quote or a bracket, never before a backtick, yet Markdown
 * often opens a sentence with a name in code.
 */
const CODE_OPENS = /[.!?]["')\]*_]*\s+(?=`[^`\s][^`]*`)/g;

/** `span` cut before each code span that opens a sentence (not after an abbreviation: "e.g. `x`"). */
function splitAtCodeOpenings(flat: string, [start, end]: [number, number]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let from = start;
  for (const m of flat.slice(start, end).matchAll(CODE_OPENS)) {
    const dot = start + m.index;
    const tok = lastToken(flat.slice(from, dot + 1));
    if (alwaysJoin.has(tok) || joinIfLowerNext.has(tok)) continue;
    const cut = dot + m[0].length;
    out.push([from, cut]);
    from = cut;
  }
  out.push([from, end]);
  return out;
}

/**
 * Round and square brackets of `text`: how many are opened and not yet closed (a stray closing one
 * counts nothing), and whether it closes one opened before it (a closing bracket before its own
 * opening ones are matched).
 */
function bracketDepth(text: string): { depth: number; closedBelowStart: boolean } {
  let depth = 0;
  let level = 0;
  let closedBelowStart = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91) {
      depth++;
      level++;
    } else if (c === 41 || c === 93) {
      if (depth > 0) depth--;
      if (--level < 0) closedBelowStart = true;
    }
  }
  return { depth, closedBelowStart };
}

/** [start, end) spans of the sentences of `text`, whitespace trimmed, in order, never empty. */
export function sentenceSpans(text: string): Array<[number, number]> {
  const flat = text.replace(/[\r\n\u2028\u2029]/g, ' ');
  const raw = rawSegments(flat);
  // Join pieces split after an abbreviation or an initial ("J. Smith").
  const joined: Array<[number, number]> = [];
  for (const span of raw) {
    const prev = joined[joined.length - 1];
    if (prev) {
      const prevText = flat.slice(prev[0], prev[1]);
      const next = flat.slice(span[0], span[1]).trimStart();
      const tok = lastToken(prevText);
      const nextLower = /^[a-z0-9(]/.test(next);
      // "John F. Kennedy", "J. R. Tolkien": an initial after a name or another initial.
      // Two initials in a row are a name whatever precedes them ("the biologist E. O. Wilson",
      // "calculator A. A. Michelson"); one initial after a lower-case word stays a sentence end
      // ("rich in vitamin A. The …").
      const initial =
        /(^|\s)([A-Z][a-z]+|[A-Z]\.)\s+[A-Z]\.\s*$/.test(prevText) ||
        /^\s*[A-Z]\.\s*$/.test(prevText) ||
        (/(^|\s)[A-Z]\.\s*$/.test(prevText) && /^[A-Z]\.(\s|$)/.test(next));
      // ICU also breaks after "!" or "?" glued to the next character ("![alt](…)" in Markdown); a
      // Latin-script sentence end is always followed by a space (line breaks became spaces above).
      const glued = /[\x21-\x7e]$/.test(prevText) && /^[\x21-\x7e]/.test(flat.slice(span[0], span[1]));
      // A sentence does not end inside brackets: "Ye Hai Mohabbatein (lit. This is love) is …",
      // "(January 23, 1737 [O.S. January 12, 1736] – …)" — a break where a bracket is still open
      // and the next piece closes it is an abbreviation's, whatever the abbreviation.
      const open = bracketDepth(prevText).depth;
      const closes = open > 0 && bracketDepth(next).closedBelowStart;
      if (glued || closes || alwaysJoin.has(tok) || (joinIfLowerNext.has(tok) && nextLower) || (initial && next.length > 0)) {
        prev[1] = span[1];
        continue;
      }
    }
    joined.push([span[0], span[1]]);
  }
  const out: Array<[number, number]> = [];
  for (const [s0, e0] of joined.flatMap((span) => (flat.includes('`', span[0]) ? splitAtCodeOpenings(flat, span) : [span]))) {
    let s = s0;
    let e = e0;
    while (s < e && /\s/.test(text[s]!)) s++;
    while (e > s && /\s/.test(text[e - 1]!)) e--;
    if (e > s) out.push([s, e]);
  }
  return out;
}

/** Whitespace-separated word count (what item and table budgets count). */
export function wordCount(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const ws = text.charCodeAt(i) <= 32;
    if (!ws && !inWord) n++;
    inWord = !ws;
  }
  return n;
}

/**
 * A text's size for cutting items: its words, or one per 12 characters when that is more — text
 * with few spaces (a JSON record, a CSV row of figures, a minified line) counts by its length, so a
 * file of such lines is cut into items (1,000 units ≈ 12,000 characters, at most a few thousand
 * tokens) instead of passing the reader's cap as one. Prose averages 5–6 characters a word: on the
 * real-document corpus (21 SEC filings, 30 articles) not one region of 50 words or more reaches
 * 12 characters a word, so prose is cut exactly as by words (at 8 a word, 117 regions did, and one
 * article's items moved).
 */
export function sizeUnits(text: string): number {
  return Math.max(wordCount(text), Math.ceil(text.length / 12));
}
