/**
 * Exact anchors for text formats. `MappedText` is text as a parser sees it (a Markdown cell
 * decoded from its JSON string, an HTML text run with entities decoded) together with, for each
 * character, the source range it came from; `TextAnchorer` turns a source range into an `Anchor`
 * with char offsets and 1-based line / 0-based column (UTF-16), counting CRLF as one line break.
 */

import type { Anchor } from '../../contracts/region';

/** Text plus a map from each of its characters back to a [start, end) range of the source. */
export class MappedText {
  private constructor(
    readonly text: string,
    /** Identity mapping: char i came from source offset base + i. */
    private readonly base: number,
    private readonly starts: number[] | undefined,
    private readonly ends: number[] | undefined,
  ) {}

  /** Text that is a verbatim slice of the source starting at `base`. */
  static identity(text: string, base = 0): MappedText {
    return new MappedText(text, base, undefined, undefined);
  }

  static fromArrays(text: string, starts: number[], ends: number[]): MappedText {
    if (starts.length !== text.length || ends.length !== text.length) throw new Error('MappedText: map length differs from text length');
    return new MappedText(text, 0, starts, ends);
  }

  get length(): number {
    return this.text.length;
  }

  /** Source offset where char i starts; i === length gives the end of the last char. */
  sourceStart(i: number): number {
    if (this.starts === undefined) return this.base + i;
    if (i >= this.text.length) return this.text.length === 0 ? 0 : this.ends![this.text.length - 1]!;
    return this.starts[i]!;
  }

  /** Source offset just after char i. */
  sourceEnd(i: number): number {
    if (this.ends === undefined) return this.base + i + 1;
    return this.ends[i]!;
  }

  /** The source range [start, end) that text[start, end) came from (end > start). */
  span(start: number, end: number): [number, number] {
    if (end <= start) {
      const s = this.sourceStart(start);
      return [s, s];
    }
    return [this.sourceStart(start), this.sourceEnd(end - 1)];
  }

  /** A view on text[start, end) keeping the map. */
  slice(start: number, end: number): MappedText {
    if (this.starts === undefined) return new MappedText(this.text.slice(start, end), this.base + start, undefined, undefined);
    return new MappedText(this.text.slice(start, end), 0, this.starts.slice(start, end), this.ends!.slice(start, end));
  }
}

/** Builds a MappedText one piece at a time (decoders push each decoded char with its source range). */
export class MappedTextBuilder {
  private parts: string[] = [];
  private starts: number[] = [];
  private ends: number[] = [];

  get length(): number {
    return this.starts.length;
  }

  /** The last character pushed, or '' when empty. */
  lastChar(): string {
    const p = this.parts[this.parts.length - 1];
    return p === undefined ? '' : p[p.length - 1]!;
  }

  /** Appends decoded text that stands for source [srcStart, srcEnd) as a whole (an entity, an escape). */
  pushDecoded(text: string, srcStart: number, srcEnd: number): void {
    for (let i = 0; i < text.length; i++) {
      this.starts.push(srcStart);
      this.ends.push(srcEnd);
    }
    this.parts.push(text);
  }

  /** Appends text copied verbatim from the source at srcStart. */
  pushVerbatim(text: string, srcStart: number): void {
    for (let i = 0; i < text.length; i++) {
      this.starts.push(srcStart + i);
      this.ends.push(srcStart + i + 1);
    }
    this.parts.push(text);
  }

  /** Appends another mapped text. */
  pushMapped(m: MappedText): void {
    for (let i = 0; i < m.length; i++) {
      this.starts.push(m.sourceStart(i));
      this.ends.push(m.sourceEnd(i));
    }
    this.parts.push(m.text);
  }

  build(): MappedText {
    return MappedText.fromArrays(this.parts.join(''), this.starts, this.ends);
  }
}

/** Offsets → 1-based lines and 0-based columns. A line break is CRLF, LF or a lone CR. */
export class LineIndex {
  private readonly lineStarts: number[] = [0];

  constructor(readonly source: string) {
    for (let i = 0; i < source.length; i++) {
      const c = source.charCodeAt(i);
      if (c === 10) this.lineStarts.push(i + 1);
      else if (c === 13) {
        if (source.charCodeAt(i + 1) === 10) i++;
        this.lineStarts.push(i + 1);
      }
    }
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  /** 0-based offset where 1-based `line` starts. */
  lineStart(line: number): number {
    return this.lineStarts[Math.max(0, Math.min(line - 1, this.lineStarts.length - 1))]!;
  }

  position(offset: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.lineStarts[lo]! };
  }
}

/** Makes anchors for one file's decoded text. */
export class TextAnchorer {
  readonly lines: LineIndex;

  constructor(
    readonly file: string,
    readonly source: string,
  ) {
    this.lines = new LineIndex(source);
  }

  anchor(charStart: number, charEnd: number): Anchor {
    const s = this.lines.position(charStart);
    const e = this.lines.position(charEnd);
    return {
      file: this.file,
      charStart,
      charEnd,
      startLine: s.line,
      startColumn: s.column,
      endLine: e.line,
      endColumn: e.column,
    };
  }

  /** Anchor of text[start, end) of a mapped text. */
  anchorMapped(m: MappedText, start: number, end: number): Anchor {
    const [a, b] = m.span(start, end);
    return this.anchor(a, b);
  }
}
