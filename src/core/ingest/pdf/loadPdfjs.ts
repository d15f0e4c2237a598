/**
 * Loads pdf.js on first use rather than when Canopy starts: it is large, and most questions
 * never touch a PDF.
 *
 * pdf.js's Node set-up assigns `globalThis.navigator` when the current one has no `language`.
 * VS Code's extension host exposes `navigator` as a getter without a setter, so that assignment
 * throws and the import fails. While pdf.js initialises we put a plain, configurable navigator in
 * place, then restore the host's own property, so other extensions never see ours.
 */
type Pdfjs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let loading: Promise<Pdfjs> | undefined;

export function loadPdfjs(): Promise<Pdfjs> {
  loading ??= importWithNavigator().catch((err: unknown) => {
    loading = undefined; // let a later call try again
    throw err;
  });
  return loading;
}

async function importWithNavigator(): Promise<Pdfjs> {
  const original = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  let current: unknown;
  try {
    current = (globalThis as { navigator?: unknown }).navigator;
  } catch {
    current = undefined;
  }
  const hasLanguage = typeof (current as { language?: unknown } | undefined)?.language === 'string';
  const needsShim = !hasLanguage && original !== undefined && original.set === undefined && !('value' in original && original.writable);
  if (needsShim && original.configurable) {
    Object.defineProperty(globalThis, 'navigator', {
      value: { language: 'en-US', platform: '', userAgent: '' },
      configurable: true,
      writable: true,
    });
  }
  try {
    return await import('pdfjs-dist/legacy/build/pdf.mjs');
  } finally {
    if (needsShim && original.configurable) Object.defineProperty(globalThis, 'navigator', original);
  }
}
