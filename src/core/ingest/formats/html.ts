/**
 * HTML via parse5 (with source locations). h1–h6 open sections; p, li, dt/dd, blockquote, div
 * text and figcaptions become paragraphs of sentence leaves; ul/ol become lists of list items;
 * tables become row leaves (cells in `cells`, the th row as `header`); pre becomes code; img
 * becomes an image leaf (text: alt, else title, else the figure caption, else the file name).
 * script, style, noscript, template, svg, canvas and form controls are ignored.
 *
 * Text is what a browser shows: entities decoded and whitespace runs collapsed to one space.
 * Each character keeps the source range it came from (htmlText.ts), so a leaf's anchor spans the
 * exact source (tags and entities inside it included) whose rendered text is the leaf's text.
 */

import { parse } from 'parse5';
import type { DefaultTreeAdapterTypes } from 'parse5';
import { codeNode, headingNode, leafFromSpan, paragraphNode } from '../draftNodes';
import { alignDecoded } from '../htmlText';
import type { DraftDocument, DraftNode, ParseWarning } from '../parsedDocument';
import { nestSections } from '../sections';
import { MappedText, MappedTextBuilder, TextAnchorer } from '../textAnchors';
import { captionFromFileName } from './image';
import { titleFromPath } from './titles';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;
type TextNode = DefaultTreeAdapterTypes.TextNode;

const ignored = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'canvas', 'iframe', 'object', 'embed', 'select', 'textarea', 'button', 'input', 'head']);
const blockContainers = new Set([
  'html', 'body', 'p', 'div', 'section', 'article', 'main', 'header', 'footer', 'nav', 'aside', 'blockquote', 'figure',
  'figcaption', 'dl', 'dt', 'dd', 'address', 'details', 'summary', 'form', 'fieldset', 'center', 'caption', 'legend', 'hgroup',
]);
const headingLevels: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };

function isElement(n: Node): n is Element {
  return 'tagName' in n;
}
function isText(n: Node): n is TextNode {
  return n.nodeName === '#text';
}
function attr(el: Element, name: string): string | undefined {
  return el.attrs.find((a) => a.name === name)?.value;
}
function childrenOf(n: Node): Node[] {
  return 'childNodes' in n ? (n.childNodes as Node[]) : [];
}

/** Accumulates rendered text with whitespace collapsing, keeping the source map. */
class InlineRun {
  private b = new MappedTextBuilder();

  append(m: MappedText): void {
    for (let i = 0; i < m.length; i++) {
      const c = m.text[i]!;
      if (c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '\f') {
        if (this.b.length === 0 || this.b.lastChar() === ' ') continue;
        this.b.pushDecoded(' ', m.sourceStart(i), m.sourceEnd(i));
      } else this.b.pushDecoded(c, m.sourceStart(i), m.sourceEnd(i));
    }
  }

  /** A whitespace boundary (block edge inside a cell, <br>) mapped to `at`. */
  space(at: number): void {
    if (this.b.length > 0 && this.b.lastChar() !== ' ') this.b.pushDecoded(' ', at, at);
  }

  get empty(): boolean {
    return this.b.length === 0;
  }

  /** The text, trimmed of the trailing space; resets the run. */
  take(): MappedText {
    const m = this.b.build();
    this.b = new MappedTextBuilder();
    let end = m.length;
    while (end > 0 && m.text[end - 1] === ' ') end--;
    return m.slice(0, end);
  }
}

interface Context {
  blocks: DraftNode[];
  run: InlineRun;
  pendingImages: DraftNode[];
  figureCaption?: string;
  /** Set when an image took the figure caption as its text (the caption is then not repeated as a paragraph). */
  captionUsed?: boolean;
}

class HtmlWalker {
  readonly warnings: ParseWarning[] = [];
  title: string | undefined;
  private coarse = 0;

  constructor(
    private readonly file: string,
    private readonly source: string,
    private readonly anchorer: TextAnchorer,
  ) {}

  finish(): void {
    if (this.coarse > 0) {
      this.warnings.push({
        file: this.file,
        code: 'coarseAnchors',
        message: `${this.file}: ${this.coarse} text run(s) use character references that could not be mapped exactly; their anchors cover the whole run.`,
      });
    }
  }

  /** Decoded text of a text node with its source map. */
  private textNodeMapped(t: TextNode): MappedText | undefined {
    const loc = t.sourceCodeLocation;
    if (!loc) return undefined;
    const aligned = alignDecoded(this.source.slice(loc.startOffset, loc.endOffset), loc.startOffset, t.value);
    if (!aligned.exact && t.value.trim() !== '') this.coarse++;
    return aligned.mapped;
  }

  /** Rendered, collapsed text of everything under `el` (headings, cells, captions). */
  textOf(el: Node): MappedText {
    const run = new InlineRun();
    const visit = (n: Node): void => {
      if (isText(n)) {
        const m = this.textNodeMapped(n);
        if (m) run.append(m);
        return;
      }
      if (!isElement(n)) return;
      if (ignored.has(n.tagName)) return;
      const block = blockContainers.has(n.tagName) || n.tagName === 'br' || n.tagName === 'li' || n.tagName === 'tr' || n.tagName === 'td' || n.tagName === 'th';
      if (block) run.space(n.sourceCodeLocation?.startOffset ?? 0);
      for (const c of childrenOf(n)) visit(c);
      if (block) run.space(n.sourceCodeLocation?.endOffset ?? 0);
    };
    for (const c of childrenOf(el)) visit(c);
    return run.take();
  }

  /** Raw (not collapsed) decoded text under `el`, for <pre>. */
  private preText(el: Node): MappedText {
    const b = new MappedTextBuilder();
    const visit = (n: Node): void => {
      if (isText(n)) {
        const m = this.textNodeMapped(n);
        if (m) b.pushMapped(m);
      } else if (isElement(n) && !ignored.has(n.tagName)) {
        if (n.tagName === 'br') b.pushDecoded('\n', n.sourceCodeLocation?.startOffset ?? 0, n.sourceCodeLocation?.endOffset ?? 0);
        for (const c of childrenOf(n)) visit(c);
      }
    };
    for (const c of childrenOf(el)) visit(c);
    const m = b.build();
    // HTML drops one newline right after <pre>.
    return m.text.startsWith('\n') ? m.slice(1, m.length) : m;
  }

  /**
   * Ends the current run of inline content. Images in a run that holds no text become image
   * leaves; images set inside prose are left out as nodes (a sibling image node would overlap the
   * sentence it sits in, and its alt text is not part of the rendered prose).
   */
  private flush(ctx: Context): void {
    let prose = false;
    if (!ctx.run.empty) {
      const m = ctx.run.take();
      const p = paragraphNode(this.anchorer, m);
      if (p) {
        ctx.blocks.push(p);
        prose = true;
      }
    }
    if (ctx.pendingImages.length > 0) {
      if (!prose) ctx.blocks.push(...ctx.pendingImages);
      ctx.pendingImages = [];
    }
  }

  private image(el: Element, ctx: Context): DraftNode | undefined {
    const loc = el.sourceCodeLocation;
    if (!loc) return undefined;
    const src = attr(el, 'src') ?? '';
    let text = (attr(el, 'alt') ?? '').trim() || (attr(el, 'title') ?? '').trim();
    if (!text && ctx.figureCaption) {
      text = ctx.figureCaption;
      ctx.captionUsed = true;
    }
    text ||= captionFromFileName(src || 'image');
    return { kind: 'image', modality: 'image', text, anchor: this.anchorer.anchor(loc.startOffset, loc.endOffset), ref: src, children: [] };
  }

  private table(el: Element, ctx: Context): void {
    const rows: Element[] = [];
    let caption: Element | undefined;
    const collect = (n: Node): void => {
      if (!isElement(n)) return;
      if (n.tagName === 'tr') rows.push(n);
      else if (n.tagName === 'caption') caption = n;
      else if (n.tagName === 'thead' || n.tagName === 'tbody' || n.tagName === 'tfoot') childrenOf(n).forEach(collect);
    };
    childrenOf(el).forEach(collect);
    if (caption) {
      const p = paragraphNode(this.anchorer, this.textOf(caption));
      if (p) ctx.blocks.push(p);
    }
    const cellsOf = (tr: Element): Array<{ el: Element; text: MappedText }> =>
      childrenOf(tr)
        .filter((c): c is Element => isElement(c) && (c.tagName === 'td' || c.tagName === 'th'))
        .map((c) => ({ el: c, text: this.textOf(c) }));
    let headerCells: string[] | undefined;
    const first = rows[0];
    if (first) {
      const cells = cellsOf(first);
      const inThead = first.parentNode !== null && 'tagName' in first.parentNode && first.parentNode.tagName === 'thead';
      if (cells.length > 0 && (inThead || cells.every((c) => c.el.tagName === 'th'))) {
        headerCells = cells.map((c, i) => c.text.text || `column ${i + 1}`);
        rows.shift();
      }
    }
    const leaves: DraftNode[] = [];
    const parsed = rows.map(cellsOf).filter((cells) => cells.some((c) => c.text.length > 0));
    const width = Math.max(0, ...parsed.map((c) => c.length));
    headerCells ??= Array.from({ length: width }, (_, i) => `column ${i + 1}`);
    const header = headerCells.join(' | ');
    for (const cells of parsed) {
      const b = new MappedTextBuilder();
      for (const c of cells) {
        if (c.text.length === 0) continue;
        if (b.length > 0) b.pushDecoded(' ', c.text.sourceStart(0), c.text.sourceStart(0));
        b.pushMapped(c.text);
      }
      const m = b.build();
      const leaf = leafFromSpan(this.anchorer, m, 0, m.length, 'row', 'table');
      leaf.cells = cells.map((c) => c.text.text);
      leaf.header = header;
      leaf.anchor.row = leaves.length;
      leaves.push(leaf);
    }
    if (leaves.length === 0) return;
    const table: DraftNode = { kind: 'table', modality: 'table', text: '', anchor: { file: this.file }, header, children: leaves };
    if (caption) table.title = table.caption = this.textOf(caption).text;
    ctx.blocks.push(table);
  }

  private list(el: Element, ctx: Context): void {
    const items: DraftNode[] = [];
    for (const c of childrenOf(el)) {
      if (!isElement(c) || c.tagName !== 'li') continue;
      const inner: Context = { blocks: [], run: new InlineRun(), pendingImages: [] };
      for (const n of childrenOf(c)) this.walk(n, inner);
      this.flush(inner);
      if (inner.blocks.length === 0) continue;
      const only = inner.blocks[0]!;
      if (inner.blocks.length === 1 && only.kind === 'paragraph') items.push({ ...only, kind: 'listItem' });
      else items.push({ kind: 'listItem', modality: 'text', text: '', anchor: { file: this.file }, children: inner.blocks });
    }
    if (items.length > 0) ctx.blocks.push({ kind: 'list', modality: 'text', text: '', anchor: { file: this.file }, children: items });
  }

  walk(n: Node, ctx: Context): void {
    if (isText(n)) {
      const m = this.textNodeMapped(n);
      if (m) ctx.run.append(m);
      return;
    }
    if (!isElement(n)) return;
    const tag = n.tagName;
    if (tag === 'head') {
      const title = childrenOf(n).find((c) => isElement(c) && c.tagName === 'title');
      if (title) this.title = this.textOf(title).text || undefined;
      return;
    }
    if (ignored.has(tag)) return;
    const level = headingLevels[tag];
    if (level !== undefined) {
      this.flush(ctx);
      const h = headingNode(this.anchorer, this.textOf(n), level);
      if (h) ctx.blocks.push(h);
      return;
    }
    switch (tag) {
      case 'br':
        ctx.run.space(n.sourceCodeLocation?.startOffset ?? 0);
        return;
      case 'hr':
        this.flush(ctx);
        return;
      case 'img': {
        const img = this.image(n, ctx);
        if (img) ctx.pendingImages.push(img);
        return;
      }
      case 'pre': {
        this.flush(ctx);
        const code = codeNode(this.anchorer, this.preText(n));
        if (code) ctx.blocks.push(code);
        return;
      }
      case 'table':
        this.flush(ctx);
        this.table(n, ctx);
        return;
      case 'ul':
      case 'ol':
        this.flush(ctx);
        this.list(n, ctx);
        return;
      case 'figure': {
        this.flush(ctx);
        const cap = childrenOf(n).find((c) => isElement(c) && c.tagName === 'figcaption');
        const saved = ctx.figureCaption;
        ctx.figureCaption = cap ? this.textOf(cap).text || undefined : undefined;
        ctx.captionUsed = false;
        for (const c of childrenOf(n)) if (c !== cap) this.walk(c, ctx);
        this.flush(ctx);
        if (cap && !ctx.captionUsed) this.walk(cap, ctx);
        ctx.figureCaption = saved;
        ctx.captionUsed = false;
        return;
      }
    }
    const block = blockContainers.has(tag) || tag === 'li';
    if (block) this.flush(ctx);
    for (const c of childrenOf(n)) this.walk(c, ctx);
    if (block) this.flush(ctx);
  }
}

export function parseHtml(file: string, text: string): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  const doc = parse(text, { sourceCodeLocationInfo: true });
  const walker = new HtmlWalker(file, text, anchorer);
  const ctx: Context = { blocks: [], run: new InlineRun(), pendingImages: [] };
  for (const c of doc.childNodes as Node[]) walker.walk(c, ctx);
  // Flush what is left (text directly under <body>).
  const rest = ctx.run.take();
  const p = paragraphNode(anchorer, rest);
  if (p) ctx.blocks.push(p);
  ctx.blocks.push(...ctx.pendingImages);
  walker.finish();
  const firstH1 = ctx.blocks.find((b) => b.kind === 'heading' && b.level === 1);
  return {
    file,
    format: 'html',
    title: walker.title ?? firstH1?.text ?? titleFromPath(file),
    root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children: nestSections(ctx.blocks) },
    warnings: walker.warnings,
  };
}
