/**
 * The inspector webview's HTML: a strict Content-Security-Policy with a per-load nonce, no
 * remote content, and only the bundled script and stylesheet (the script adds media/pdf.js and
 * its worker with the same nonce when a PDF is shown). Kept free of `vscode` imports so the
 * headless-Chromium tests load exactly this page.
 */

export interface InspectorHtmlParts {
  /** webview.cspSource: the origin the webview may load local resources from. */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    // pdf.js's worker, from the extension's own media folder (where the host allows workers).
    `worker-src ${cspSource}`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function renderInspectorHtml(parts: InspectorHtmlParts): string {
  const csp = contentSecurityPolicy(parts.cspSource, parts.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(parts.styleUri)}">
<title>Canopy Evidence Inspector</title>
</head>
<body>
<main id="app" aria-live="polite" data-state="connecting">
<p class="canopy-status">Connecting to Canopy…</p>
</main>
<script nonce="${escapeAttr(parts.nonce)}" src="${escapeAttr(parts.scriptUri)}"></script>
</body>
</html>`;
}

/** 32 random base64 characters from a CSPRNG. */
export function makeNonce(randomBytes: (n: number) => Uint8Array): string {
  return Buffer.from(randomBytes(24)).toString('base64');
}
