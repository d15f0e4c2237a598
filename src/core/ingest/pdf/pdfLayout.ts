/**
 * Page layout analysis over glyph runs: runs → lines (by vertical overlap) → fragments (split at
 * gaps wider than about one em) → columns (a gutter that long prose fragments never cross) →
 * reading order (full-width lines in place; between them the left column, then the right) →
 * tables (runs of multi-fragment lines whose fragment edges line up) → text blocks (lines joined
 * while size, weight, spacing and indentation continue). Heading and list decisions need the
 * whole document's body size and are made by the caller (pdfParser.ts).
 *
 * Every piece of text keeps an approximate box per character (the run's width shared evenly
 * among its characters; pdfjs does not expose glyph advances without loading the font program),
 * so sentence boxes can be cut out of lines.
 */

import type { Box, GlyphRun } from './pdfRuns';
import { maxOf, minOf, pushAll } from '../../arrays';

/** Text with one approximate glyph box per character (null for spaces the layout inserted). */
export interface GeoText {
  text: string;
  boxes: Array<Box | null>;
  /** Index of the layout line each character belongs to (within its block), -1 for inserted spaces. */
  lines: number[];
}

export interface Fragment {
  runs: GlyphRun[];
  box: Box;
  size: number;
  text: GeoText;
}

export interface Line {
  frags: Fragment[];
  box: Box;
  baseline: number;
  /** Character-weighted font size. */
  size: number;
  /** Share of characters in a bold / italic font. */
  boldShare: number;
  italicShare: number;
  /** The font of at least 90% of the line's characters, or '' when the line mixes fonts. */
  font: string;
  /** 0: full width / single column, 1: left column, 2: right column. */
  col: number;
  upright: boolean;
}

export interface Block {
  kind: 'text' | 'table';
  lines: Line[];
  box: Box;
  size: number;
  boldShare: number;
  italicShare: number;
  col: number;
}

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\u00a0' || c === '\n' || c === '\r' || c === '\u2002' || c === '\u2003' || c === '\u2009';

export function unionBox(a: Box | undefined, b: Box): Box {
  if (!a) return [b[0], b[1], b[2], b[3]];
  return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
}

/** Builds GeoText, collapsing whitespace to single spaces. */
export class GeoBuilder {
  private chars: string[] = [];
  private boxes: Array<Box | null> = [];
  private lineIdx: number[] = [];

  get length(): number {
    return this.chars.length;
  }

  private lastIsSpace(): boolean {
    return this.chars.length === 0 || this.chars[this.chars.length - 1] === ' ';
  }

  space(): void {
    if (!this.lastIsSpace()) {
      this.chars.push(' ');
      this.boxes.push(null);
      this.lineIdx.push(-1);
    }
  }

  pushRun(run: GlyphRun, line: number): void {
    const n = run.str.length;
    const w = (run.x1 - run.x0) / Math.max(1, n);
    for (let k = 0; k < n; k++) {
      const c = run.str[k]!;
      if (isSpace(c)) {
        this.space();
        continue;
      }
      this.chars.push(c);
      this.boxes.push([run.x0 + k * w, run.y0, run.x0 + (k + 1) * w, run.y1]);
      this.lineIdx.push(line);
    }
  }

  pushGeo(g: GeoText, line?: number): void {
    for (let i = 0; i < g.text.length; i++) {
      const c = g.text[i]!;
      if (c === ' ') {
        this.space();
        continue;
      }
      this.chars.push(c);
      this.boxes.push(g.boxes[i] ?? null);
      this.lineIdx.push(line ?? g.lines[i] ?? -1);
    }
  }

  endsWith(re: RegExp): boolean {
    return re.test(this.chars.slice(-3).join(''));
  }

  build(): GeoText {
    let end = this.chars.length;
    while (end > 0 && this.chars[end - 1] === ' ') end--;
    return { text: this.chars.slice(0, end).join(''), boxes: this.boxes.slice(0, end), lines: this.lineIdx.slice(0, end) };
  }
}

/** Splits a run whose string holds 3+ spaces in a row (cells inside one text item) into sub-runs. */
function splitWideSpaces(run: GlyphRun): GlyphRun[] {
  if (!/\S\s{3,}\S/.test(run.str)) return [run];
  const out: GlyphRun[] = [];
  const w = (run.x1 - run.x0) / Math.max(1, run.str.length);
  const re = /\S+(?:\s{1,2}\S+)*/g;
  for (let m = re.exec(run.str); m; m = re.exec(run.str)) {
    out.push({ ...run, str: m[0], x0: run.x0 + m.index * w, x1: run.x0 + (m.index + m[0].length) * w });
  }
  return out;
}

function verticalOverlap(a0: number, a1: number, b0: number, b1: number): number {
  const o = Math.min(a1, b1) - Math.max(a0, b0);
  const h = Math.min(a1 - a0, b1 - b0);
  return h <= 0 ? 0 : o / h;
}

interface RawLine {
  runs: GlyphRun[];
  baseline: number;
  y0: number;
  y1: number;
  size: number;
}

function groupLines(runs: GlyphRun[]): RawLine[] {
  const sorted = [...runs].sort((a, b) => b.baseline - a.baseline || a.x0 - b.x0);
  const lines: RawLine[] = [];
  for (const r of sorted) {
    let best: RawLine | undefined;
    let bestOverlap = 0.5;
    for (let k = lines.length - 1; k >= Math.max(0, lines.length - 6); k--) {
      const l = lines[k]!;
      if (Math.abs(l.baseline - r.baseline) > 0.6 * Math.max(l.size, r.size)) continue;
      const o = verticalOverlap(l.y0, l.y1, r.y0, r.y1);
      if (o >= bestOverlap) {
        best = l;
        bestOverlap = o;
      }
    }
    if (best) {
      best.runs.push(r);
      // The line's baseline follows its largest text (superscripts do not move it).
      if (r.size > best.size) {
        best.size = r.size;
        best.baseline = r.baseline;
      }
      best.y0 = Math.min(best.y0, r.y0);
      best.y1 = Math.max(best.y1, r.y1);
    } else lines.push({ runs: [r], baseline: r.baseline, y0: r.y0, y1: r.y1, size: r.size });
  }
  for (const l of lines) l.runs.sort((a, b) => a.x0 - b.x0);
  return lines;
}

function fragmentText(runs: GlyphRun[]): GeoText {
  const b = new GeoBuilder();
  let prev: GlyphRun | undefined;
  for (const r of runs) {
    if (prev) {
      const gap = r.x0 - prev.x1;
      if (gap > 0.18 * Math.max(prev.size, r.size)) b.space();
    }
    b.pushRun(r, 0);
    prev = r;
  }
  return b.build();
}

function makeFragment(runs: GlyphRun[]): Fragment {
  let box: Box | undefined;
  let size = 0;
  for (const r of runs) {
    box = unionBox(box, [r.x0, r.y0, r.x1, r.y1]);
    size = Math.max(size, r.size);
  }
  return { runs, box: box!, size, text: fragmentText(runs) };
}

const bulletOnly = /^([•●○◦▪■□➢►▸‣∙·\-–—*]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\([ivxIVX]{1,4}\))$/;
const currencyOnly = /^[$€£¥]$/;
const trailerOnly = /^(%|\)|\)%|%\))$/;

function mergeFragments(a: Fragment, b: Fragment): Fragment {
  return makeFragment([...a.runs, ...b.runs]);
}

/**
 * Splits a line's runs into fragments at horizontal gaps wider than `gapEm` ems: about one em
 * separates columns and cells from word spaces in prose; inside a detected table a tighter half
 * em finds cells set close together.
 */
function splitFragments(runs: GlyphRun[], lineSize: number, gapEm = 1.0): Fragment[] {
  const frags: Fragment[] = [];
  let cur: GlyphRun[] = [];
  for (const r of runs) {
    const prev = cur[cur.length - 1];
    if (prev && r.x0 - prev.x1 > gapEm * Math.max(prev.size, r.size, lineSize * 0.8)) {
      frags.push(makeFragment(cur));
      cur = [];
    }
    cur.push(r);
  }
  if (cur.length > 0) frags.push(makeFragment(cur));
  // A bullet or list number set apart by a tab belongs to its text; "$" to its number; "%" to its number.
  const out: Fragment[] = [];
  for (let i = 0; i < frags.length; i++) {
    const f = frags[i]!;
    const next = frags[i + 1];
    if (next && (currencyOnly.test(f.text.text) || (i === 0 && bulletOnly.test(f.text.text)))) {
      frags[i + 1] = mergeFragments(f, next);
      continue;
    }
    const prev = out[out.length - 1];
    if (prev && trailerOnly.test(f.text.text)) {
      out[out.length - 1] = mergeFragments(prev, f);
      continue;
    }
    out.push(f);
  }
  return out;
}

function lineFrom(frags: Fragment[], col: number, upright = true): Line {
  let box: Box | undefined;
  let chars = 0;
  let boldChars = 0;
  let italicChars = 0;
  let baseline = -Infinity;
  let maxSize = 0;
  const byFont = new Map<string, number>();
  for (const f of frags) {
    box = unionBox(box, f.box);
    for (const r of f.runs) {
      const n = r.str.replace(/\s/g, '').length;
      chars += n;
      if (r.bold) boldChars += n;
      if (r.italic) italicChars += n;
      byFont.set(r.font, (byFont.get(r.font) ?? 0) + n);
      // The line's size and baseline are its largest text's: superscripts and fractions do not move them.
      if (r.size > maxSize || (r.size === maxSize && r.baseline > baseline)) {
        maxSize = r.size;
        baseline = r.baseline;
      }
    }
  }
  let font = '';
  for (const [name, n] of byFont) if (n >= 0.9 * chars) font = name;
  return {
    frags,
    box: box!,
    baseline,
    size: maxSize,
    boldShare: chars > 0 ? boldChars / chars : 0,
    italicShare: chars > 0 ? italicChars / chars : 0,
    font,
    col,
    upright,
  };
}

const wordsIn = (s: string): number => s.split(/\s+/).filter((w) => /[A-Za-z]{2,}/.test(w)).length;

/**
 * The x of a column gutter, if the page's prose is set in two columns, and the vertical zone the
 * columns occupy (the extent of the prose on either side): lines above or below it — a title, a
 * full-width table, a footer — are not split at the gutter.
 */
function findGutter(frags: Fragment[]): { x: number; zone: [number, number] } | undefined {
  if (frags.length === 0) return undefined;
  const minX = minOf(frags, (f) => f.box[0]);
  const maxX = maxOf(frags, (f) => f.box[2]);
  const width = maxX - minX;
  if (width <= 0) return undefined;
  const prose = frags.filter((f) => wordsIn(f.text.text) >= 5 && f.box[2] - f.box[0] >= 0.2 * width);
  if (prose.length < 6) return undefined;
  let best: { s: number; score: number } | undefined;
  const candidates = [...new Set(prose.map((f) => Math.round(f.box[0])))];
  for (const s of candidates) {
    if (s - minX < 0.25 * width || maxX - s < 0.2 * width) continue;
    let left = 0;
    let right = 0;
    let cross = 0;
    for (const f of prose) {
      if (f.box[2] <= s + 1) left++;
      else if (f.box[0] >= s - 2) right++;
      else cross++;
    }
    if (left < 3 || right < 3 || cross > 0.1 * (left + right)) continue;
    const score = Math.min(left, right) - 2 * cross;
    if (!best || score > best.score) best = { s: s - 1, score };
  }
  if (!best) return undefined;
  const sided = prose.filter((f) => f.box[2] <= best!.s + 2 || f.box[0] >= best!.s - 1);
  const slack = 0.5 * maxOf(sided, (f) => f.size);
  return { x: best.s, zone: [minOf(sided, (f) => f.box[1]) - slack, maxOf(sided, (f) => f.box[3]) + slack] };
}

/** Lines of a page in reading order, split by column where the page has two. */
function orderLines(raw: RawLine[]): Line[] {
  const fragLines = raw.map((l) => ({ raw: l, frags: splitFragments(l.runs, l.size) }));
  const found = findGutter(fragLines.flatMap((l) => l.frags));
  if (found === undefined) return fragLines.map((l) => lineFrom(l.frags, 0));
  const gutter = found.x;
  let [zoneBottom, zoneTop] = found.zone;
  // Grow the zone over short lines just outside it that sit wholly on one side ("valley." ending a column).
  const oneSided = (frags: Fragment[]): boolean => frags.every((f) => f.box[2] <= gutter + 2) || frags.every((f) => f.box[0] >= gutter - 1);
  for (const l of fragLines) {
    if (l.raw.baseline < zoneBottom && zoneBottom - l.raw.baseline <= 2 * l.raw.size && oneSided(l.frags)) zoneBottom = l.raw.y0;
  }
  for (let k = fragLines.length - 1; k >= 0; k--) {
    const l = fragLines[k]!;
    if (l.raw.baseline > zoneTop && l.raw.baseline - zoneTop <= 2 * l.raw.size && oneSided(l.frags)) zoneTop = l.raw.y1;
  }
  const out: Line[] = [];
  let left: Line[] = [];
  let right: Line[] = [];
  const flushBand = (): void => {
    pushAll(pushAll(out, left), right);
    left = [];
    right = [];
  };
  for (const l of fragLines) {
    const spanning = l.frags.some((f) => f.box[0] < gutter - 2 && f.box[2] > gutter + 2);
    const inZone = l.raw.baseline >= zoneBottom && l.raw.baseline <= zoneTop;
    if (spanning || !inZone) {
      flushBand();
      out.push(lineFrom(l.frags, 0));
      continue;
    }
    const lf = l.frags.filter((f) => f.box[2] <= gutter + 2);
    const rf = l.frags.filter((f) => f.box[2] > gutter + 2);
    if (lf.length > 0) left.push(lineFrom(lf, 1));
    if (rf.length > 0) right.push(lineFrom(rf, 2));
  }
  flushBand();
  return out;
}

/** Does another multi-fragment line have a non-first fragment in the same column (overlapping in x, or sharing an edge)? */
function aligned(line: Line, others: Line[]): boolean {
  for (const f of line.frags.slice(1)) {
    for (const o of others) {
      if (o === line) continue;
      for (const g of o.frags.slice(1)) {
        const overlap = Math.min(f.box[2], g.box[2]) - Math.max(f.box[0], g.box[0]);
        if (overlap > 0 || Math.abs(f.box[2] - g.box[2]) <= 3 || Math.abs(f.box[0] - g.box[0]) <= 3) return true;
      }
    }
  }
  return false;
}

function gapBetween(upper: Line, lower: Line): number {
  return upper.box[1] - lower.box[3];
}

/** Marks table lines: index → table id. */
function findTables(lines: Line[]): Map<number, number> {
  const tableOf = new Map<number, number>();
  let tableId = 0;
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.frags.length < 2) {
      i++;
      continue;
    }
    // Extend while lines stay in the column, close together, and multi-fragment lines keep coming.
    let j = i;
    let lastMulti = i;
    while (j + 1 < lines.length) {
      const next = lines[j + 1]!;
      const cur = lines[j]!;
      if (next.col !== cur.col || gapBetween(cur, next) > 1.8 * Math.max(cur.size, next.size) || gapBetween(cur, next) < -0.5 * cur.size) break;
      if (next.frags.length >= 2) lastMulti = j + 1;
      // Up to two single-fragment lines (a row label wrapped over two lines, a sub-heading) stay inside.
      else if (j + 1 - lastMulti >= 3) break;
      j++;
    }
    const region = lines.slice(i, lastMulti + 1);
    const multi = region.filter((l) => l.frags.length >= 2);
    const alignedCount = multi.filter((l) => aligned(l, multi)).length;
    if (multi.length >= 2 && alignedCount >= Math.max(2, Math.ceil(multi.length * 0.5))) {
      for (let k = i; k <= lastMulti; k++) tableOf.set(k, tableId);
      tableId++;
      i = lastMulti + 1;
    } else i++;
  }
  return tableOf;
}

const listStart = /^([•●○◦▪■□➢►▸‣∙·*]|[-–—](?=\s)|\(?\d{1,3}[.)](?=\s)|\(?[a-z][.)](?=\s)|\([ivx]{1,4}\)(?=\s))/;

export function lineText(line: Line): string {
  return line.frags.map((f) => f.text.text).join(' ');
}

export function startsListItem(line: Line): boolean {
  return listStart.test(lineText(line));
}

function blockFrom(kind: Block['kind'], lines: Line[]): Block {
  let box: Box | undefined;
  let chars = 0;
  let sizeSum = 0;
  let bold = 0;
  let italic = 0;
  for (const l of lines) {
    box = unionBox(box, l.box);
    const n = lineText(l).length;
    chars += n;
    sizeSum += n * l.size;
    bold += n * l.boldShare;
    italic += n * l.italicShare;
  }
  return {
    kind,
    lines,
    box: box!,
    size: chars > 0 ? sizeSum / chars : lines[0]!.size,
    boldShare: chars > 0 ? bold / chars : 0,
    italicShare: chars > 0 ? italic / chars : 0,
    col: lines[0]!.col,
  };
}

/** Whether `line` starts a new text block after `prev` (the last line of `block`). */
function breaksBlock(blockLines: Line[], prev: Line, line: Line): boolean {
  if (line.col !== prev.col || !line.upright || !prev.upright) return true;
  const size = Math.max(prev.size, line.size);
  if (Math.abs(line.size - prev.size) > 0.15 * Math.min(line.size, prev.size)) return true;
  if ((prev.boldShare > 0.9) !== (line.boldShare > 0.9)) return true;
  // A line wholly in one font followed by a line wholly in another: a run-in heading, a caption.
  if (prev.font !== '' && line.font !== '' && prev.font !== line.font) return true;
  const pitch = prev.baseline - line.baseline;
  if (pitch <= 0) return true;
  if (blockLines.length >= 2) {
    const first = blockLines[0]!.baseline - blockLines[1]!.baseline;
    if (pitch > first * 1.3 + 0.5) return true;
  } else if (pitch > 1.75 * size) return true;
  if (line.box[0] > prev.box[2] || line.box[2] < prev.box[0]) return true;
  if (startsListItem(line)) return true;
  // A short last line ending a sentence closes the paragraph even without extra spacing.
  const right = Math.max(maxOf(blockLines, (l) => l.box[2]), line.box[2]);
  const left = Math.min(minOf(blockLines, (l) => l.box[0]), line.box[0]);
  if (/[.!?:]["')\]]?$/.test(lineText(prev)) && prev.box[2] < right - 0.15 * (right - left)) return true;
  return false;
}

/** A page's blocks in reading order. */
export function layoutPage(runs: GlyphRun[]): Block[] {
  const upright = runs.filter((r) => r.upright).flatMap(splitWideSpaces);
  const lines = orderLines(groupLines(upright));
  const tables = findTables(lines);
  for (const i of tables.keys()) {
    const line = lines[i]!;
    const runs = line.frags.flatMap((f) => f.runs).sort((a, b) => a.x0 - b.x0);
    lines[i] = lineFrom(splitFragments(runs, line.size, 0.5), line.col, line.upright);
  }
  const blocks: Block[] = [];
  let cur: Line[] = [];
  let curTable: number | undefined;
  const close = (): void => {
    if (cur.length > 0) blocks.push(blockFrom(curTable === undefined ? 'text' : 'table', cur));
    cur = [];
    curTable = undefined;
  };
  lines.forEach((line, i) => {
    const t = tables.get(i);
    if (t !== undefined) {
      if (curTable !== t) close();
      curTable = t;
      cur.push(line);
      return;
    }
    if (curTable !== undefined) close();
    const prev = cur[cur.length - 1];
    if (prev && breaksBlock(cur, prev, line)) close();
    cur.push(line);
  });
  close();
  // Rotated / vertical text: each run is a block of its own, after the page's upright text.
  for (const r of runs.filter((x) => !x.upright)) {
    const frag = makeFragment([r]);
    blocks.push(blockFrom('text', [lineFrom([frag], 0, false)]));
  }
  return blocks;
}
