/**
 * Entry of media/pdf.js: pdf.js's browser build, bundled apart from the inspector so it is
 * loaded only when a PDF is shown. It hands the library to the inspector through one global.
 */
import * as pdfjs from 'pdfjs-dist';

(globalThis as unknown as { canopyPdfjs: typeof pdfjs }).canopyPdfjs = pdfjs;
