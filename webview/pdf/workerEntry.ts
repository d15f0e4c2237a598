/**
 * Entry of media/pdf.worker.js: pdf.js's worker. Run as a dedicated Worker it serves the
 * inspector from its own thread (pdf.js starts it from `self`); loaded as a plain script on the
 * main thread — where a webview cannot start a worker from its resource origin — it sets
 * `globalThis.pdfjsWorker`, which pdf.js then uses in-thread.
 */
import 'pdfjs-dist/build/pdf.worker.mjs';
