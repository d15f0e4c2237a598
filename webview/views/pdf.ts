/**
 * The PDF tab: a page of an indexed PDF rendered with pdf.js inside the webview, with the kept
 * and dropped regions of the trace overlaid as boxes from their anchors (`page`, `bbox`, and
 * `rects` per line; PDF user space, y up). A box is a button: it selects its node in the
 * evidence tree. The host sends a PDF's bytes only on request and only for indexed files.
 */
import type { PDFDocumentProxy, PDFWorker } from 'pdfjs-dist';
import type { InspectorContext } from '../context';
import { button, ce, clip, el, emptyState } from '../dom';
import { type NodeRef, nodeText } from '../model';
import { base64Bytes, loadPdfjs } from '../pdf/loadPdfjs';
import { statusLabels } from './evidenceTree';

/** Loaded documents by file, for the life of the page. */
const documents = new Map<string, Promise<PDFDocumentProxy>>();

async function openDocument(ctx: InspectorContext, file: string): Promise<PDFDocumentProxy> {
  let doc = documents.get(file);
  if (!doc) {
    doc = (async () => {
      const [{ pdfjs, worker }, { data }] = await Promise.all([loadPdfjs(), ctx.request('pdf/get', { file })]);
      const params: Parameters<typeof pdfjs.getDocument>[0] & { worker?: PDFWorker } = {
        data: base64Bytes(data),
        isEvalSupported: false,
        useSystemFonts: true,
        ...(worker ? { worker } : {}),
      };
      return pdfjs.getDocument(params).promise;
    })();
    documents.set(file, doc);
    doc.catch(() => documents.delete(file));
  }
  return doc;
}

export class PdfView {
  readonly element: HTMLElement;
  private file: string | undefined;
  private page = 0;
  private selected: string | undefined;
  private readonly stage = el('div', { class: 'canopy-pdf-stage' });
  private readonly status = el('p', { class: 'canopy-pdf-status', role: 'status' });
  private readonly controls = el('div', { class: 'canopy-toolbar', role: 'toolbar', 'aria-label': 'PDF pages' });
  private renderSeq = 0;
  /** "Mark a box as gold": dragging on the page draws a box stored as gold evidence (design §10). */
  private marking = false;

  constructor(private readonly ctx: InspectorContext) {
    const files = ctx.model.pdfFiles();
    if (files.length === 0) {
      this.element = emptyState('No PDF regions in this trace.', 'When a question retrieves regions of an indexed PDF, its pages are rendered here with the kept and dropped regions outlined.');
      return;
    }
    this.element = el('div', { class: 'canopy-pdf-view' }, this.controls, this.status, el('div', { class: 'canopy-pdf-scroll' }, this.stage));
    this.file = files[0];
    this.page = ctx.model.pagesWithKept(files[0]!)[0] ?? 0;
  }

  /** Shows a page of a file (and outlines a node on it). */
  show(file: string, page: number, nodeId?: string): void {
    this.file = file;
    this.page = page;
    this.selected = nodeId;
    void this.render();
  }

  /** First paint when the tab is opened. */
  start(): void {
    if (this.file) void this.render();
  }

  private async render(): Promise<void> {
    const file = this.file;
    if (!file) return;
    const seq = ++this.renderSeq;
    this.status.textContent = `Loading ${file}…`;
    let doc: PDFDocumentProxy;
    try {
      doc = await openDocument(this.ctx, file);
    } catch (err) {
      if (seq === this.renderSeq) this.status.textContent = `Could not show ${file}: ${(err as Error).message}`;
      return;
    }
    if (seq !== this.renderSeq) return;
    this.page = Math.min(Math.max(0, this.page), doc.numPages - 1);
    this.renderControls(file, doc.numPages);
    const page = await doc.getPage(this.page + 1);
    const base = page.getViewport({ scale: 1 });
    const avail = Math.max(320, (this.element.clientWidth || 760) - 24);
    const viewport = page.getViewport({ scale: Math.min(2, avail / base.width) });
    const canvas = el('canvas', { class: 'canopy-pdf-canvas', 'aria-hidden': 'true' });
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.floor(viewport.width * dpr);
    canvas.height = Math.floor(viewport.height * dpr);
    canvas.style.width = `${Math.floor(viewport.width)}px`;
    canvas.style.height = `${Math.floor(viewport.height)}px`;
    const context = canvas.getContext('2d');
    if (!context) throw new Error('no 2D canvas in this webview');
    await page.render({ canvas, canvasContext: context, viewport, transform: dpr !== 1 ? [dpr, 0, 0, dpr, 0, 0] : undefined }).promise;
    if (seq !== this.renderSeq) return;
    const overlay = el('div', { class: 'canopy-pdf-overlay', role: 'group', 'aria-label': `Regions on page ${this.page + 1}` });
    overlay.style.width = canvas.style.width;
    overlay.style.height = canvas.style.height;
    const boxes = this.ctx.model.pageRegions(file, this.page);
    const selected = this.selected ? this.ctx.model.nodesOnPage(file, this.page).find((r) => r.node.id === this.selected) : undefined;
    // Bigger regions first, so smaller ones stay clickable on top; the selected one last.
    boxes.sort((a, b) => area(b.ref) - area(a.ref));
    for (const { ref, shown } of boxes) {
      for (const r of rectsOf(ref)) overlay.append(this.box(ref, shown, viewport.convertToViewportRectangle(r) as number[]));
    }
    if (selected) for (const r of rectsOf(selected)) overlay.append(this.box(selected, undefined, viewport.convertToViewportRectangle(r) as number[]));
    const frame = el('div', { class: 'canopy-pdf-page' }, canvas, overlay);
    if (this.marking) frame.append(this.marker(file, this.page, viewport));
    frame.style.width = canvas.style.width;
    frame.style.height = canvas.style.height;
    this.stage.replaceChildren(frame);
    const kept = boxes.filter((b) => b.shown === 'kept').length;
    const dropped = boxes.filter((b) => b.shown === 'dropped').length;
    this.status.textContent = `${file} — page ${this.page + 1} of ${doc.numPages}: ${kept} kept, ${dropped} dropped region(s) outlined.`;
    this.element.dataset.renderedPage = String(this.page);
  }

  /** A box over one rectangle of a region: kept or dropped styling, or the selection outline. */
  private box(ref: NodeRef, shown: 'kept' | 'dropped' | undefined, r: number[]): HTMLElement {
    const [x0, y0, x1, y1] = r as [number, number, number, number];
    const label = shown ?? statusLabels[ref.status];
    const b = button('', () => this.ctx.selectNode(ref.node.id), {
      class: shown ? `canopy-box status-${shown}` : 'canopy-box canopy-box-selected selected',
      'data-node-id': ref.node.id,
      'data-shown': shown ?? 'selected',
      'aria-label': `${label} ${ref.node.kind}: ${clip(nodeText(ref.node), 80)}`,
      title: `${label} ${ref.node.kind} — score ${ref.node.score?.toFixed(3) ?? '—'}\n${clip(nodeText(ref.node), 200)}`,
    });
    b.style.left = `${Math.min(x0, x1).toFixed(1)}px`;
    b.style.top = `${Math.min(y0, y1).toFixed(1)}px`;
    b.style.width = `${Math.abs(x1 - x0).toFixed(1)}px`;
    b.style.height = `${Math.abs(y1 - y0).toFixed(1)}px`;
    return b;
  }

  private renderControls(file: string, pages: number): void {
    const files = this.ctx.model.pdfFiles();
    const withKept = new Set(this.ctx.model.pagesWithKept(file));
    const parts: HTMLElement[] = [];
    if (files.length > 1) {
      const pick = ce('vscode-single-select', { 'aria-label': 'PDF file', label: 'PDF file' }) as HTMLElement & { value: string };
      for (const f of files) pick.append(ce('vscode-option', { value: f, selected: f === file }, f));
      pick.addEventListener('change', () => this.show(pick.value, this.ctx.model.pagesWithKept(pick.value)[0] ?? 0));
      parts.push(pick);
    }
    const prev = button('‹ Previous', () => this.show(file, this.page - 1), { class: 'canopy-link', 'aria-label': 'Previous page' });
    prev.disabled = this.page === 0;
    const next = button('Next ›', () => this.show(file, this.page + 1), { class: 'canopy-link', 'aria-label': 'Next page' });
    next.disabled = this.page >= pages - 1;
    const pick = ce('vscode-single-select', { 'aria-label': 'Page', label: 'Page', class: 'canopy-page-picker' }) as HTMLElement & { value: string };
    for (let p = 0; p < pages; p++) pick.append(ce('vscode-option', { value: String(p), selected: p === this.page }, `Page ${p + 1}${withKept.has(p) ? ' • kept' : ''}`));
    pick.addEventListener('change', () => this.show(file, Number(pick.value) || 0));
    parts.push(prev, pick, next);
    const mark = button(this.marking ? 'Stop marking' : 'Mark a box as gold', () => {
      this.marking = !this.marking;
      void this.render();
    }, { class: 'canopy-link canopy-mark-box', 'aria-pressed': String(this.marking), title: `Drag a box on the page: it becomes gold evidence for “${this.ctx.model.trace.question}”` });
    parts.push(mark);
    this.controls.replaceChildren(...parts);
  }

  /**
   * A layer over the page that turns a drag into a box in PDF points (y up) and sends it as
   * `gold/mark` with a node of this trace on this page (the host checks both).
   */
  private marker(file: string, page: number, viewport: { convertToPdfPoint(x: number, y: number): number[] }): HTMLElement {
    const layer = el('div', { class: 'canopy-pdf-marker', 'aria-label': 'Drag to mark a box as gold evidence' });
    let start: [number, number] | undefined;
    let drawn: HTMLElement | undefined;
    const at = (ev: PointerEvent): [number, number] => {
      const r = layer.getBoundingClientRect();
      return [Math.min(Math.max(0, ev.clientX - r.left), r.width), Math.min(Math.max(0, ev.clientY - r.top), r.height)];
    };
    const place = (a: [number, number], b: [number, number]) => {
      if (!drawn) return;
      drawn.style.left = `${Math.min(a[0], b[0]).toFixed(1)}px`;
      drawn.style.top = `${Math.min(a[1], b[1]).toFixed(1)}px`;
      drawn.style.width = `${Math.abs(b[0] - a[0]).toFixed(1)}px`;
      drawn.style.height = `${Math.abs(b[1] - a[1]).toFixed(1)}px`;
    };
    layer.addEventListener('pointerdown', (ev) => {
      start = at(ev);
      drawn?.remove();
      drawn = el('div', { class: 'canopy-pdf-mark' });
      layer.append(drawn);
      place(start, start);
      layer.setPointerCapture(ev.pointerId);
    });
    layer.addEventListener('pointermove', (ev) => {
      if (start) place(start, at(ev));
    });
    layer.addEventListener('pointerup', (ev) => {
      if (!start) return;
      const end = at(ev);
      const from = start;
      start = undefined;
      if (Math.abs(end[0] - from[0]) < 4 || Math.abs(end[1] - from[1]) < 4) {
        drawn?.remove();
        return;
      }
      const [ax, ay] = viewport.convertToPdfPoint(from[0], from[1]) as [number, number];
      const [bx, by] = viewport.convertToPdfPoint(end[0], end[1]) as [number, number];
      const bbox: [number, number, number, number] = [Math.min(ax, bx), Math.min(ay, by), Math.max(ax, bx), Math.max(ay, by)];
      const node = this.ctx.model.nodesOnPage(file, page)[0];
      if (!node) {
        this.ctx.error(`No region of this answer lies on page ${page + 1}: boxes can be marked on pages the answer retrieved.`);
        drawn?.remove();
        return;
      }
      this.ctx
        .request('gold/mark', { traceId: this.ctx.model.trace.id, nodeId: node.node.id, bbox })
        .then((r) => {
          this.status.textContent = r.added ? `Marked a box on page ${page + 1} as gold evidence for “${r.question}”.` : 'That box was already gold evidence for this question.';
        })
        .catch((err: Error) => {
          drawn?.remove();
          this.ctx.error(`Could not mark the box as gold evidence: ${err.message}`);
        });
    });
    return layer;
  }
}

function rectsOf(ref: NodeRef): Array<[number, number, number, number]> {
  const a = ref.node.anchor;
  return a.rects && a.rects.length > 0 ? a.rects : a.bbox ? [a.bbox] : [];
}

function area(r: NodeRef): number {
  const b = r.node.anchor.bbox!;
  return Math.abs((b[2] - b[0]) * (b[3] - b[1]));
}
