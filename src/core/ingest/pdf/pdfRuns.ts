/**
 * pdfjs-dist → glyph runs with boxes in PDF user space, one list per page. A run is one text
 * item of `page.getTextContent()`: its string, its box (from the item's transform, width and the
 * font's ascent/descent), its font size and whether its font is bold or italic. Bold/italic come
 * from the font's PostScript name, which pdfjs only hands over once a page's operator list has
 * loaded the font, so the operator list is fetched only for pages that use a font not seen yet
 * (a handful per document).
 *
 * Encrypted and corrupt files become CanopyErrors naming the file.
 *
 * Time limit: the deadline is checked between pages and also bounds the work on each page (one
 * hostile page — e.g. a small compressed content stream holding millions of text operators — can
 * otherwise keep pdf.js busy for minutes). When it fires mid-page, the document is destroyed
 * (pdf.js stops its tasks); the pages read so far are kept with a warning, or, when not one page
 * was read, the file fails with E_TIME_LIMIT naming the file, the page and the limit.
 */

import { loadPdfjs } from './loadPdfjs';
import { CancelledError, CanopyError, ErrorCodes } from '../../errors';

export type Box = [number, number, number, number];

export interface GlyphRun {
  str: string;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  /** Baseline y (upright runs). */
  baseline: number;
  size: number;
  font: string;
  bold: boolean;
  italic: boolean;
  /** False for rotated or vertical text; such runs keep their box but are laid out alone. */
  upright: boolean;
}

export interface PdfPageRuns {
  index: number;
  box: Box;
  rotate: number;
  runs: GlyphRun[];
}

export interface PdfReadOptions {
  /** Epoch ms after which no further page is read (and work on the current page is abandoned). */
  deadline?: number;
  /** The per-file limit the deadline came from, for the message (ms). */
  timeLimitMs?: number;
  signal?: AbortSignal | undefined;
  standardFontDataUrl?: string | undefined;
  /** After each page read (or failed): pages done of the document's pages. */
  onPage?: ((done: number, total: number) => void) | undefined;
}

export interface PdfReadResult {
  pages: PdfPageRuns[];
  numPages: number;
  /** Set when the deadline stopped reading early. */
  truncatedAt?: number;
  /** Pages whose text could not be read (index → reason). */
  failedPages: Array<{ index: number; reason: string }>;
  title?: string;
}

interface TextItemLike {
  str: string;
  transform: number[];
  width: number;
  height: number;
  fontName: string;
}

const boldName = /bold|black|heavy|semibold|demibold|extrabold|ultrabold|,b\b/i;
const italicName = /italic|oblique|,i\b|-it\b/i;

function isTextItem(x: unknown): x is TextItemLike {
  return typeof x === 'object' && x !== null && 'str' in x && 'transform' in x;
}

function describePdfError(file: string, err: unknown): CanopyError {
  const name = err instanceof Error ? err.name : '';
  const message = err instanceof Error ? err.message : String(err);
  if (name === 'PasswordException') {
    return new CanopyError(ErrorCodes.encrypted, `${file}: the PDF is password-protected (encrypted); it cannot be indexed without its password.`, { file, cause: err });
  }
  if (name === 'InvalidPDFException' || name === 'MissingPDFException' || name === 'FormatError' || name === 'UnknownErrorException') {
    return new CanopyError(ErrorCodes.parseFailed, `${file}: not a readable PDF (${message}).`, { file, cause: err });
  }
  return new CanopyError(ErrorCodes.parseFailed, `${file}: the PDF could not be read (${message}).`, { file, cause: err });
}

/** Text items above which a page's operator list (for font weights) is not fetched. */
const MAX_ITEMS_FOR_OPERATOR_LIST = 20_000;

/** Raised inside readPdfRuns when the deadline passes while a page is being read. */
class PageTimeout extends Error {}

/** Settles with `work`, or rejects with PageTimeout at the deadline / CancelledError on abort. */
function bounded<T>(work: Promise<T>, options: PdfReadOptions): Promise<T> {
  if (options.deadline === undefined && !options.signal) return work;
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => finish(() => reject(new CancelledError()));
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      settle();
    };
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.deadline !== undefined) timer = setTimeout(() => finish(() => reject(new PageTimeout())), Math.max(0, options.deadline - Date.now()));
    work.then(
      (v) => finish(() => resolve(v)),
      (e: unknown) => finish(() => reject(e)),
    );
  });
}

interface TextContentLike {
  items: unknown[];
  styles: Record<string, unknown>;
}

interface StreamingPage {
  streamTextContent(): ReadableStream<TextContentLike>;
}

/**
 * A page's text content, read chunk by chunk. pdf.js runs its parser in this thread ("fake
 * worker") as one long chain of microtasks, which a timer never interrupts; reading the stream
 * ourselves, with a macrotask between chunks, makes the parser wait for each pull, so the deadline
 * timer and cancellation get their turn and the page can be abandoned part-way.
 */
async function readTextContent(page: StreamingPage, options: PdfReadOptions): Promise<TextContentLike> {
  const reader = page.streamTextContent().getReader();
  const out: TextContentLike = { items: [], styles: {} };
  try {
    for (;;) {
      const { value, done } = await bounded(reader.read(), options);
      if (done) return out;
      for (const item of value.items) out.items.push(item);
      Object.assign(out.styles, value.styles);
      await new Promise((r) => setImmediate(r));
      if (options.deadline !== undefined && Date.now() > options.deadline) throw new PageTimeout();
    }
  } catch (err) {
    // pdf.js needs a reason; the cancellation ends the page's task in its parser, so destroying
    // the document afterwards does not wait for the page to finish.
    await reader.cancel(err instanceof Error ? err : new Error(String(err))).catch(() => undefined);
    throw err;
  }
}

/**
 * Whether a PDF's metadata Title is not a title a person would recognise: an office application's
 * default ("<application> Word - …", "untitled"), a file name, or an identifier with hardly any letters (SEC
 * accession numbers such as "0000078003-22-000027", job numbers, dates). The document is then
 * titled by its first top-level heading, else its file name.
 */
export function isJunkPdfTitle(title: string): boolean {
  const t = title.trim();
  // An office application's default: its name, or "<application> - <document>" ("Word - draft", "Writer - Untitled 1").
  if (/^(?:(?:\S+ )?(?:word|powerpoint|excel|writer|impress|calc)(?: - |$)|untitled)|\.(docx?|pdf|xlsx?|pptx?|html?|indd|tex|odt|rtf)$/i.test(t)) return true;
  const letters = (t.match(/\p{L}/gu) ?? []).length;
  return letters < 3;
}

/** Reads every page's glyph runs. */
export async function readPdfRuns(file: string, bytes: Uint8Array, options: PdfReadOptions = {}): Promise<PdfReadResult> {
  // pdfjs takes ownership of (and may detach) the buffer it is given: hand it a copy.
  const data = new Uint8Array(bytes);
  const params: Record<string, unknown> = {
    data,
    disableFontFace: true,
    isEvalSupported: false,
    useSystemFonts: false,
    verbosity: 0,
    stopAtErrors: false,
  };
  if (options.standardFontDataUrl) params.standardFontDataUrl = options.standardFontDataUrl;
  const { getDocument } = await loadPdfjs();
  const task = getDocument(params as Parameters<typeof getDocument>[0]);
  let doc;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    throw describePdfError(file, err);
  }
  const result: PdfReadResult = { pages: [], numPages: doc.numPages, failedPages: [] };
  try {
    try {
      const meta = await doc.getMetadata();
      const info = meta.info as { Title?: unknown } | undefined;
      const title = info && typeof info.Title === 'string' ? info.Title.trim() : '';
      if (title && !isJunkPdfTitle(title)) result.title = title;
    } catch {
      // Metadata is optional.
    }
    const fontStyle = new Map<string, { bold: boolean; italic: boolean }>();
    for (let p = 1; p <= doc.numPages; p++) {
      if (options.signal?.aborted) break;
      // `>=`: a spent budget stops before the page, deterministically (a limit of 0 used to race
      // the page's own timer within the same millisecond, and end as an error half the time).
      if (options.deadline !== undefined && Date.now() >= options.deadline) {
        result.truncatedAt = p - 1;
        break;
      }
      try {
        const page = await bounded(doc.getPage(p), options);
        const [vx0, vy0, vx1, vy1] = page.view as number[];
        const box: Box = [Math.min(vx0!, vx1!), Math.min(vy0!, vy1!), Math.max(vx0!, vx1!), Math.max(vy0!, vy1!)];
        const content = await readTextContent(page as unknown as StreamingPage, options);
        const items: TextItemLike[] = [];
        for (const x of content.items as unknown[]) if (isTextItem(x)) items.push(x);
        const missing = [...new Set(items.map((i) => i.fontName))].filter((f) => f && !fontStyle.has(f));
        if (missing.length > 0) {
          // pdf.js builds the operator list in one uninterruptible pass over the page, so it is
          // skipped on huge pages (bold/italic then come from the font names alone).
          if (missing.some((f) => !page.commonObjs.has(f)) && items.length <= MAX_ITEMS_FOR_OPERATOR_LIST) {
            await bounded(
              page.getOperatorList().catch(() => undefined),
              options,
            );
          }
          for (const f of missing) {
            let name = '';
            let bold = false;
            let italic = false;
            if (page.commonObjs.has(f)) {
              const font = page.commonObjs.get(f) as { name?: string; bold?: boolean; italic?: boolean; black?: boolean } | undefined;
              name = font?.name ?? '';
              bold = Boolean(font?.bold || font?.black);
              italic = Boolean(font?.italic);
            }
            fontStyle.set(f, { bold: bold || boldName.test(name), italic: italic || italicName.test(name) });
          }
        }
        const runs: GlyphRun[] = [];
        for (const it of items) {
          if (it.str.trim().length === 0) continue;
          const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = it.transform;
          const style = content.styles[it.fontName] as { ascent?: number; descent?: number } | undefined;
          const ascent = style?.ascent && style.ascent > 0 ? style.ascent : 0.8;
          const descent = style?.descent && style.descent < 0 ? style.descent : -0.2;
          const size = Math.hypot(c, d) || it.height || 1;
          const upright = Math.abs(b) < 1e-3 * Math.abs(a) && Math.abs(c) < 1e-3 * Math.abs(d) && a > 0 && d > 0;
          let x0: number;
          let x1: number;
          let y0: number;
          let y1: number;
          if (upright) {
            x0 = e;
            x1 = e + Math.max(it.width, 0);
            y0 = f + descent * size;
            y1 = f + ascent * size;
          } else {
            // Corners of the run's rectangle along its own axes.
            const ux = a / (Math.hypot(a, b) || 1);
            const uy = b / (Math.hypot(a, b) || 1);
            const vx = c / (Math.hypot(c, d) || 1);
            const vy = d / (Math.hypot(c, d) || 1);
            const pts: Array<[number, number]> = [];
            for (const s of [0, it.width]) for (const t of [descent * size, ascent * size]) pts.push([e + ux * s + vx * t, f + uy * s + vy * t]);
            x0 = Math.min(...pts.map((q) => q[0]));
            x1 = Math.max(...pts.map((q) => q[0]));
            y0 = Math.min(...pts.map((q) => q[1]));
            y1 = Math.max(...pts.map((q) => q[1]));
          }
          // Text entirely outside the page box is not visible: drop it. Clip the rest to the box.
          if (x1 < box[0] || x0 > box[2] || y1 < box[1] || y0 > box[3]) continue;
          const st = fontStyle.get(it.fontName) ?? { bold: false, italic: false };
          runs.push({
            str: it.str,
            x0: Math.max(box[0], x0),
            y0: Math.max(box[1], y0),
            x1: Math.min(box[2], x1),
            y1: Math.min(box[3], y1),
            baseline: f,
            size,
            font: it.fontName,
            bold: st.bold,
            italic: st.italic,
            upright,
          });
        }
        result.pages.push({ index: p - 1, box, rotate: page.rotate, runs: dedupeOverprint(runs) });
        page.cleanup();
      } catch (err) {
        if (err instanceof CancelledError) break; // the caller sees its own signal and stops
        if (err instanceof PageTimeout) {
          if (result.pages.length === 0) {
            const limit = options.timeLimitMs === undefined ? '' : ` of ${(options.timeLimitMs / 1000).toFixed(options.timeLimitMs < 10_000 ? 1 : 0)} s`;
            throw new CanopyError(
              ErrorCodes.timeLimit,
              `${file}: reading page ${p} of ${doc.numPages} ran past the per-file time limit${limit}; not indexed (the file may be hostile or pathological).`,
              { file },
            );
          }
          result.truncatedAt = p - 1;
          break;
        }
        result.failedPages.push({ index: p - 1, reason: err instanceof Error ? err.message : String(err) });
      }
      options.onPage?.(p, doc.numPages);
    }
  } finally {
    await doc.destroy().catch(() => undefined);
  }
  return result;
}

/** Drops runs drawn twice at (almost) the same place — "fake bold" by overprinting. */
function dedupeOverprint(runs: GlyphRun[]): GlyphRun[] {
  const out: GlyphRun[] = [];
  const seen = new Map<string, GlyphRun[]>();
  for (const r of runs) {
    const list = seen.get(r.str);
    if (list && list.some((o) => Math.abs(o.x0 - r.x0) < 1.5 && Math.abs(o.baseline - r.baseline) < 1.5)) {
      const twin = list.find((o) => Math.abs(o.x0 - r.x0) < 1.5 && Math.abs(o.baseline - r.baseline) < 1.5)!;
      twin.bold = true;
      continue;
    }
    if (list) list.push(r);
    else seen.set(r.str, [r]);
    out.push(r);
  }
  return out;
}
