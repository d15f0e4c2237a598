/**
 * Page images and element crops for a multimodal reader (design §7: "page/crop images when the
 * reader is multimodal"). The reader input's evidence subgraph names them (`<image ref>` on a
 * <page>, `<crop ref>` on a <node>, see evidenceXml.ts); this module renders them from the PDF's
 * bytes with pdf.js, on the canvas pdf.js itself uses in Node (@napi-rs/canvas, pdf.js's
 * optional dependency), as PNG:
 *   page   the whole page, scaled so its longer side is `pageMaxPixels` (default 1024 px);
 *   crop   the element's bbox (PDF user space, origin bottom-left) plus a small margin, rendered
 *          at `cropScale` (default 2, i.e. 144 dpi) and scaled down to at most `cropMaxPixels`.
 * Each page is rendered once for all its requests. Pixels are bounded (no canvas larger than
 * 4,096 px a side), so a page with an absurd MediaBox cannot exhaust memory. Time is bounded per
 * call (`timeLimitMs`, default 30 s): no page starts after the deadline, and a render still
 * running at it is cancelled when pdf.js yields; the call then fails with E_TIME_LIMIT and the
 * reader gets the text only. pdf.js renders a page in this thread as one chain of microtasks, so
 * a single heavy page (a 150,000-operator page: 5.5 s here) runs to its end before the limit can
 * act; only pages whose text parse fitted the index's per-file limits are ever rendered.
 */
import { CancelledError, CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { loadPdfjs } from '../ingest/pdf/loadPdfjs';

export interface ImageRequest {
  /** The label the XML uses (`img1`, …) and the reader puts before the image. */
  ref: string;
  file: string;
  /** 0-based page. */
  page: number;
  /** An element crop: the box in PDF user space (absent: the whole page). */
  bbox?: [number, number, number, number];
}

export interface ReaderImage extends ImageRequest {
  mime: 'image/png';
  data: Uint8Array;
  width: number;
  height: number;
}

export interface PageImageOptions {
  /** Longer side of a page image in pixels (default 1024). */
  pageMaxPixels?: number;
  /** Render scale of crops (default 2: 144 dpi). */
  cropScale?: number;
  /** Longer side of a crop in pixels (default 1024). */
  cropMaxPixels?: number;
  /** Margin around a crop's box, in PDF points (default 6). */
  cropMarginPt?: number;
  /** pdf.js standard fonts (needed for the 14 standard fonts when not embedded). */
  standardFontDataUrl?: string;
  /** Time for the whole call, rendering included (default 30 s). */
  timeLimitMs?: number;
  signal?: AbortSignal;
}

/** Waits for a pdf.js render, cancelling it when the deadline passes or the signal fires. */
async function renderWithin(task: { promise: Promise<void>; cancel(): void }, deadline: number, onLate: () => Error, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    const end = (err: Error) => {
      task.cancel();
      reject(err);
    };
    timer = setTimeout(() => end(onLate()), Math.max(0, deadline - Date.now()));
    onAbort = () => end(new CancelledError());
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([task.promise, stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    task.promise.catch(() => undefined); // a cancelled render rejects; nobody waits for it then
  }
}

const maxCanvasSide = 4096;

interface Canvas {
  width: number;
  height: number;
  toBuffer(mime: 'image/png'): Buffer;
}
interface CanvasAndContext {
  canvas: Canvas;
  context: { drawImage(img: unknown, sx: number, sy: number, sw: number, sh: number, dx: number, dy: number, dw: number, dh: number): void };
}
interface CanvasFactory {
  create(width: number, height: number): CanvasAndContext;
  destroy(c: CanvasAndContext): void;
}

/** Renders the requested page images and crops of one PDF, in request order. */
export async function renderPageImages(file: string, bytes: Uint8Array, requests: ImageRequest[], options: PageImageOptions = {}): Promise<ReaderImage[]> {
  if (requests.length === 0) return [];
  const pageMax = options.pageMaxPixels ?? 1024;
  const cropScale = options.cropScale ?? 2;
  const cropMax = options.cropMaxPixels ?? 1024;
  const margin = options.cropMarginPt ?? 6;
  const timeLimitMs = options.timeLimitMs ?? 30_000;
  const deadline = Date.now() + timeLimitMs;
  const { getDocument } = await loadPdfjs();
  const params: Record<string, unknown> = { data: new Uint8Array(bytes), disableFontFace: true, isEvalSupported: false, verbosity: 0 };
  if (options.standardFontDataUrl) params.standardFontDataUrl = options.standardFontDataUrl;
  const task = getDocument(params as Parameters<typeof getDocument>[0]);
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    throw new CanopyError(ErrorCodes.parseFailed, `${file}: cannot open the PDF to render page images: ${(err as Error).message}`, { file, cause: err });
  }
  try {
    const factory = (doc as unknown as { canvasFactory?: CanvasFactory }).canvasFactory;
    const byPage = new Map<number, ImageRequest[]>();
    for (const r of requests) byPage.set(r.page, [...(byPage.get(r.page) ?? []), r]);
    const out = new Map<ImageRequest, ReaderImage>();
    for (const [pageIndex, reqs] of byPage) {
      throwIfCancelled(options.signal);
      if (pageIndex < 0 || pageIndex >= doc.numPages) throw new CanopyError(ErrorCodes.badInput, `${file}: no page ${pageIndex + 1} to render (the PDF has ${doc.numPages})`, { file });
      const late = () =>
        new CanopyError(
          ErrorCodes.timeLimit,
          `${file}: rendering page ${pageIndex + 1} for the reader ran past the time limit of ${(timeLimitMs / 1000).toFixed(timeLimitMs < 10_000 ? 1 : 0)} s`,
          { file },
        );
      if (Date.now() >= deadline) throw late();
      const page = await doc.getPage(pageIndex + 1);
      const base = page.getViewport({ scale: 1 });
      // One render per page, at the scale the sharpest request needs, within the canvas bound.
      const pageScale = Math.min(pageMax / Math.max(base.width, base.height), maxCanvasSide / Math.max(base.width, base.height));
      const wantsCrop = reqs.some((r) => r.bbox);
      const scale = Math.min(Math.max(pageScale, wantsCrop ? cropScale : 0), maxCanvasSide / Math.max(base.width, base.height));
      const viewport = page.getViewport({ scale });
      let rendered: CanvasAndContext;
      try {
        if (!factory) throw new Error('pdf.js has no canvas factory here');
        rendered = factory.create(Math.ceil(viewport.width), Math.ceil(viewport.height));
      } catch (err) {
        throw new CanopyError(
          ErrorCodes.internal,
          `${file}: page images need a canvas for pdf.js (the optional @napi-rs/canvas module), which this installation lacks: ${(err as Error).message}`,
          { file, cause: err },
        );
      }
      try {
        const task = page.render({ canvasContext: rendered.context, viewport, canvas: rendered.canvas } as unknown as Parameters<typeof page.render>[0]);
        await renderWithin(task, deadline, late, options.signal);
        for (const r of reqs) {
          // The region to copy, in rendered pixels, and the size it gets.
          let sx = 0;
          let sy = 0;
          let sw = rendered.canvas.width;
          let sh = rendered.canvas.height;
          if (r.bbox) {
            const [x0, y0, x1, y1] = viewport.convertToViewportRectangle([r.bbox[0] - margin, r.bbox[1] - margin, r.bbox[2] + margin, r.bbox[3] + margin]) as number[];
            sx = Math.max(0, Math.floor(Math.min(x0!, x1!)));
            sy = Math.max(0, Math.floor(Math.min(y0!, y1!)));
            sw = Math.min(rendered.canvas.width, Math.ceil(Math.max(x0!, x1!))) - sx;
            sh = Math.min(rendered.canvas.height, Math.ceil(Math.max(y0!, y1!))) - sy;
            if (sw < 1 || sh < 1) throw new CanopyError(ErrorCodes.badInput, `${file}: the box ${r.bbox.join(' ')} lies outside page ${pageIndex + 1}`, { file });
          }
          const limit = r.bbox ? cropMax : pageMax;
          const shrink = Math.min(1, limit / Math.max(sw, sh), r.bbox ? 1 : pageScale / scale);
          const w = Math.max(1, Math.round(sw * shrink));
          const h = Math.max(1, Math.round(sh * shrink));
          const target = factory!.create(w, h);
          try {
            target.context.drawImage(rendered.canvas, sx, sy, sw, sh, 0, 0, w, h);
            out.set(r, { ...r, mime: 'image/png', data: new Uint8Array(target.canvas.toBuffer('image/png')), width: w, height: h });
          } finally {
            factory!.destroy(target);
          }
        }
      } finally {
        factory!.destroy(rendered);
        page.cleanup();
      }
    }
    return requests.map((r) => out.get(r)!);
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}
