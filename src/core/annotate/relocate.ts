/**
 * Re-location of gold spans after their file was edited. Parse-time anchors are exact, but a
 * user keeps editing; an annotation stores its text and a context fingerprint so the span can be
 * found again, in this order:
 *   1. unchanged — the stored offsets still hold the stored text;
 *   2. moved     — the exact text occurs elsewhere; among several occurrences the one whose
 *                  surroundings best match the fingerprint wins, then the one nearest the old offset;
 *   3. context   — the text itself changed, but the before/after fingerprint still brackets a
 *                  region of similar length and content;
 *   4. fuzzy     — the most similar window (character-trigram Dice ≥ threshold) anywhere;
 *   5. lost      — none of the above. Lost annotations are reported, never dropped.
 * Only char-offset anchors can be re-located from text; PDF page/bbox and time anchors are
 * returned as 'unchecked'.
 */
import type { Anchor } from '../../contracts/region';
import { LineIndex } from '../ingest/textAnchors';
import type { Annotation } from './store';

export type RelocationStatus = 'unchanged' | 'moved' | 'context' | 'fuzzy' | 'lost' | 'unchecked';

export interface Relocation {
  annotation: Annotation;
  status: RelocationStatus;
  /** The new anchor (absent when lost); the annotation's own when unchanged / unchecked. */
  anchor?: Anchor;
  /** The text now at the anchor. */
  text?: string;
  /** Similarity of the found text to the stored text (1 for exact matches). */
  similarity: number;
}

export interface RelocateOptions {
  /** Least trigram Dice similarity for a 'context' or 'fuzzy' match (default 0.7). */
  fuzzyThreshold?: number;
}

function trigrams(s: string): Map<string, number> {
  const t = ` ${s.toLowerCase().replace(/\s+/g, ' ')} `;
  const m = new Map<string, number>();
  for (let i = 0; i + 3 <= t.length; i++) {
    const g = t.slice(i, i + 3);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Character-trigram Dice coefficient in [0, 1]. */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const ta = trigrams(a);
  const tb = trigrams(b);
  let both = 0;
  let na = 0;
  let nb = 0;
  for (const n of ta.values()) na += n;
  for (const [g, n] of tb) {
    nb += n;
    both += Math.min(n, ta.get(g) ?? 0);
  }
  return na + nb === 0 ? 0 : (2 * both) / (na + nb);
}

/** Length of the common suffix of a and b. */
function commonSuffix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function allOccurrences(haystack: string, needle: string): number[] {
  const out: number[] = [];
  if (!needle) return out;
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) out.push(i);
  return out;
}

/** A text anchor for [start, end) in `source`, keeping the file and any row index. */
export function textAnchor(file: string, source: string, start: number, end: number, lines = new LineIndex(source)): Anchor {
  const s = lines.position(start);
  const e = lines.position(end);
  return { file, charStart: start, charEnd: end, startLine: s.line, startColumn: s.column, endLine: e.line, endColumn: e.column };
}

/** Trims whitespace off both ends of [start, end). */
function trimSpan(source: string, start: number, end: number): [number, number] {
  while (start < end && /\s/.test(source[start]!)) start++;
  while (end > start && /\s/.test(source[end - 1]!)) end--;
  return [start, end];
}

/** Finds the annotation's span in the file's current text. */
export function relocate(annotation: Annotation, source: string, options: RelocateOptions = {}): Relocation {
  const threshold = options.fuzzyThreshold ?? 0.7;
  const a = annotation.anchor;
  if (a.charStart === undefined || a.charEnd === undefined) return { annotation, status: 'unchecked', anchor: a, similarity: 1 };
  const want = annotation.text;
  const lines = new LineIndex(source);
  const make = (status: RelocationStatus, start: number, end: number, sim: number): Relocation => {
    const anchor = { ...a, ...textAnchor(a.file, source, start, end, lines) };
    return { annotation, status, anchor, text: source.slice(start, end), similarity: sim };
  };

  // 1. unchanged
  if (source.slice(a.charStart, a.charEnd) === want) return { annotation, status: 'unchanged', anchor: a, text: want, similarity: 1 };

  // 2. exact text elsewhere: best context agreement, then nearest to the old offset.
  const { before, after } = annotation.context;
  const exact = allOccurrences(source, want);
  if (exact.length > 0) {
    const ranked = exact
      .map((pos) => ({
        pos,
        ctx: commonSuffix(source.slice(Math.max(0, pos - before.length), pos), before) + commonPrefix(source.slice(pos + want.length, pos + want.length + after.length), after),
        dist: Math.abs(pos - a.charStart!),
      }))
      .sort((x, y) => y.ctx - x.ctx || x.dist - y.dist);
    const best = ranked[0]!;
    return make('moved', best.pos, best.pos + want.length, 1);
  }

  // 3. by context: the fingerprint still brackets a similar region.
  const anchorLen = 16; // enough characters to be distinctive, few enough to survive edits nearby
  const beforeKey = before.slice(-anchorLen);
  const afterKey = after.slice(0, anchorLen);
  if (beforeKey.length >= 4 && afterKey.length >= 4) {
    let best: { start: number; end: number; sim: number } | undefined;
    for (const b of allOccurrences(source, beforeKey)) {
      const start = b + beforeKey.length;
      const searchEnd = Math.min(source.length, start + Math.max(want.length * 2, want.length + 64));
      const e = source.indexOf(afterKey, start);
      if (e < 0 || e > searchEnd) continue;
      const [s0, e0] = trimSpan(source, start, e);
      const sim = similarity(source.slice(s0, e0), want);
      if (!best || sim > best.sim) best = { start: s0, end: e0, sim };
    }
    if (best && best.sim >= threshold) return make('context', best.start, best.end, best.sim);
  }

  // 4. fuzzy: windows seeded by distinctive words of the stored text.
  const fuzzy = fuzzyFind(source, want);
  if (fuzzy && fuzzy.sim >= threshold) return make('fuzzy', fuzzy.start, fuzzy.end, fuzzy.sim);

  return { annotation, status: 'lost', similarity: fuzzy?.sim ?? 0 };
}

/**
 * The window of `source` most similar to `want`. Candidate starts come from where the stored
 * text's longer words occur now (shifted by their offset in the stored text), so the cost grows
 * with the number of matches, not with file length × span length.
 */
function fuzzyFind(source: string, want: string): { start: number; end: number; sim: number } | undefined {
  const words = [...want.matchAll(/[\p{L}\p{N}]{4,}/gu)].map((m) => ({ word: m[0], at: m.index })).slice(0, 24);
  const starts = new Set<number>();
  for (const { word, at } of words) {
    const occ = allOccurrences(source, word);
    if (occ.length > 200) continue; // too common to place the span
    for (const o of occ) starts.add(Math.max(0, o - at));
  }
  let best: { start: number; end: number; sim: number } | undefined;
  for (const s of starts) {
    for (const scale of [0.8, 0.9, 1, 1.1, 1.25]) {
      const [s0, e0] = trimSpan(source, s, Math.min(source.length, s + Math.round(want.length * scale)));
      if (e0 <= s0) continue;
      const sim = similarity(source.slice(s0, e0), want);
      if (!best || sim > best.sim) best = { start: s0, end: e0, sim };
    }
  }
  return best;
}

/** Re-locates every annotation; `readText` returns the file's current text, or undefined when it is gone. */
export async function relocateAll(annotations: readonly Annotation[], readText: (file: string) => Promise<string | undefined>, options: RelocateOptions = {}): Promise<Relocation[]> {
  const texts = new Map<string, string | undefined>();
  const out: Relocation[] = [];
  for (const a of annotations) {
    if (!texts.has(a.file)) texts.set(a.file, await readText(a.file));
    const text = texts.get(a.file);
    if (text === undefined) out.push({ annotation: a, status: a.anchor.charStart === undefined ? 'unchecked' : 'lost', similarity: 0 });
    else out.push(relocate(a, text, options));
  }
  return out;
}
