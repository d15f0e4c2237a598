/**
 * Loads media/pdf.js (pdf.js) on first use, with the page's own nonce so its CSP allows it, and
 * starts its worker: a dedicated Worker when the bundle is same-origin with the page (headless
 * tests), else — a VS Code webview may not start workers from its resource origin — the worker
 * code on the main thread (media/pdf.worker.js as a nonce'd script). Nothing is fetched from
 * anywhere else; the PDF bytes come from the host through the protocol.
 */
import type * as PdfjsModule from 'pdfjs-dist';

export type Pdfjs = typeof PdfjsModule;

// The inspector bundle's own <script>: its URL locates the sibling bundles, its nonce admits them.
const self = document.currentScript as HTMLScriptElement | null;
const bundleUrl = self?.src ?? '';
const nonce = self?.nonce ?? '';

let loading: Promise<{ pdfjs: Pdfjs; worker: PdfjsModule.PDFWorker | undefined }> | undefined;

function addScript(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.nonce = nonce;
    s.src = new URL(name, bundleUrl).href;
    s.addEventListener('load', () => resolve());
    s.addEventListener('error', () => reject(new Error(`could not load ${name}`)));
    document.head.append(s);
  });
}

export function loadPdfjs(): Promise<{ pdfjs: Pdfjs; worker: PdfjsModule.PDFWorker | undefined }> {
  loading ??= (async () => {
    if (!bundleUrl) throw new Error('the inspector script has no URL to load pdf.js beside');
    await addScript('pdf.js');
    const pdfjs = (globalThis as unknown as { canopyPdfjs?: Pdfjs }).canopyPdfjs;
    if (!pdfjs) throw new Error('pdf.js did not load');
    const workerUrl = new URL('pdf.worker.js', bundleUrl);
    let worker: PdfjsModule.PDFWorker | undefined;
    if (workerUrl.origin === location.origin) {
      try {
        worker = new pdfjs.PDFWorker({ port: new Worker(workerUrl.href) as unknown as null });
      } catch {
        worker = undefined;
      }
    }
    if (!worker) {
      await addScript('pdf.worker.js');
      pdfjs.GlobalWorkerOptions.workerSrc = workerUrl.href;
    }
    return { pdfjs, worker };
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/** Base64 (from the host) to bytes. */
export function base64Bytes(data: string): Uint8Array {
  const bin = atob(data);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
