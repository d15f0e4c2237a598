/**
 * Test harness for the webview tier: launches headless Chromium (test/helpers/chromium.ts) through playwright-core
 * and serves the real inspector page — the HTML of renderInspectorHtml() with its nonce CSP, plus
 * the built media/webview.js and media/webview.css — from a loopback HTTP server on 127.0.0.1.
 *
 * The only addition to the page is a stub `acquireVsCodeApi`, injected as one more
 * `<script nonce=…>` before the bundle so that the page's own CSP allows it (an inline script
 * without the nonce would be refused, as it would be in VS Code). The stub records what the
 * webview posts on `window.__posted`, keeps get/setState, and records CSP violations.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { makeNonce, renderInspectorHtml } from '../../src/extension/inspectorHtml';
import type { HostToWebviewMessage } from '../../src/protocol/messages';
import { HostEndpoint, type RequestHandlers } from '../../src/protocol/rpc';
import { launchChromium as launchAnyChromium } from '../helpers/chromium';
import { type ThemeKind, themeBodyClass, themeVariables } from './themes';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const resultsDir = join(repoRoot, 'test-results', 'webview');

/**
 * Starts headless Chromium: the headless shell `npm ci` brings where it runs (Linux x64), else the
 * system's (test/helpers/chromium.ts says where it looks and why the shell comes first here).
 * playwright's launch() gives every browser a fresh temporary user-data-dir and removes it on close.
 */
export function launchChromium(): Promise<Browser> {
  return launchAnyChromium({ prefer: 'headless-shell' });
}

/**
 * When webview files share a process (scripts/test.mjs runs them in batches, see
 * scripts/sharedTests.mjs), they share one browser too: the batch calls shareBrowser() before it
 * loads them and closeSharedBrowser() after the last one. Each file still opens its pages in fresh
 * browser contexts (browser.newPage()), so no cookie, storage or page outlives it.
 */
let shared: { browser?: Promise<Browser> } | undefined;

export function shareBrowser(): void {
  shared ??= {};
}

export async function closeSharedBrowser(): Promise<void> {
  const browser = shared?.browser;
  shared = undefined;
  // A launch that failed has already failed every file that asked for it.
  await (await browser?.catch(() => undefined))?.close();
}

/** The browser for one test file's tests: its own, or the process's shared one (see shareBrowser). */
export function openBrowser(): Promise<Browser> {
  if (!shared) return launchChromium();
  shared.browser ??= launchChromium();
  return shared.browser;
}

/** After a file's tests: closes its own browser, or, of the shared one, every context (and page) the file left open. */
export async function closeBrowser(browser: Browser | undefined): Promise<void> {
  if (!browser) return;
  if (shared?.browser && browser === (await shared.browser)) await Promise.all(browser.contexts().map((c) => c.close()));
  else await browser.close();
}

/** What the stub API saw, read back from the page. */
export interface StubRecord {
  posted: unknown[];
  stateWrites: unknown[];
  cspViolations: { directive: string; blocked: string }[];
}

export interface PageOptions {
  /** What getState() returns before the webview sets anything (VS Code's saved state). */
  initialState?: unknown;
  /** An inline script added WITHOUT the nonce, to prove the page's CSP refuses it. */
  scriptWithoutNonce?: string;
  /** The theme VS Code paints the webview in (its `--vscode-*` variables and body class); default dark. */
  theme?: ThemeKind;
}

/** The built files the page may load: the bundle, its stylesheet, and pdf.js with its worker. */
const servedMedia = new Set(['/media/webview.js', '/media/webview.css', '/media/pdf.js', '/media/pdf.worker.js']);

/** Serves the inspector page and the built bundles on 127.0.0.1; one per test file. */
export class InspectorServer {
  private nextPage = 0;

  private constructor(
    private readonly server: Server,
    private readonly pages: Map<string, string>,
    readonly origin: string,
  ) {}

  static async start(): Promise<InspectorServer> {
    const script = join(repoRoot, 'media', 'webview.js');
    const style = join(repoRoot, 'media', 'webview.css');
    for (const f of [script, style]) {
      if (!existsSync(f)) throw new Error(`${f} is missing: build the bundles first (npm run build, or node scripts/test.mjs webview)`);
    }
    const pages = new Map<string, string>();
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const page = pages.get(url.pathname);
      if (page !== undefined) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(page);
      } else if (servedMedia.has(url.pathname)) {
        const file = join(repoRoot, url.pathname);
        const type = url.pathname.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
        res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(readFileSync(file));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
    });
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(0, '127.0.0.1', () => ok());
    });
    const { port } = server.address() as AddressInfo;
    return new InspectorServer(server, pages, `http://127.0.0.1:${port}`);
  }

  /** Registers one inspector page (fresh nonce) and returns its URL. */
  inspectorPage(options: PageOptions = {}): string {
    const nonce = makeNonce((n) => randomBytes(n));
    const html = renderInspectorHtml({
      cspSource: this.origin,
      nonce,
      scriptUri: `${this.origin}/media/webview.js`,
      styleUri: `${this.origin}/media/webview.css`,
    });
    const bundleTag = `<script nonce="${nonce}" src=`;
    if (!html.includes(bundleTag)) throw new Error('renderInspectorHtml() no longer emits the bundle script tag the harness expects');
    let stub = `<script nonce="${nonce}">${stubSource(options.initialState, options.theme ?? 'dark')}</script>\n`;
    if (options.scriptWithoutNonce !== undefined) stub += `<script>${options.scriptWithoutNonce}</script>\n`;
    const path = `/inspector-${this.nextPage++}.html`;
    this.pages.set(path, html.replace(bundleTag, stub + bundleTag));
    return this.origin + path;
  }

  close(): Promise<void> {
    return new Promise((ok) => this.server.close(() => ok()));
  }
}

/** Source of the stub acquireVsCodeApi; like VS Code's, it may be acquired only once. */
function stubSource(initialState: unknown, theme: ThemeKind): string {
  // Escape '<' so no state can close the script element early.
  const state = JSON.stringify(initialState ?? null).replace(/</g, '\\u003c');
  return `(() => {
  const posted = [];
  const stateWrites = [];
  const cspViolations = [];
  let state = ${state};
  let acquired = false;
  window.__posted = posted;
  window.__stateWrites = stateWrites;
  window.__cspViolations = cspViolations;
  // When the last host message reached the page (this listener runs before the bundle's): benchmarks
  // time the webview's own work from here.
  window.addEventListener('message', () => { window.__messageAt = performance.now(); });
  document.addEventListener('securitypolicyviolation', (e) => {
    cspViolations.push({ directive: e.violatedDirective, blocked: String(e.blockedURI) });
  });
  // The theme variables VS Code sets on <html>, and its theme class on <body> (test/webview/themes.ts).
  const theme = ${JSON.stringify(themeVariables(theme))};
  for (const [k, v] of Object.entries(theme)) document.documentElement.style.setProperty(k, v);
  const themed = () => { document.body.classList.add(${JSON.stringify(themeBodyClass[theme])}); document.body.dataset.vscodeThemeKind = ${JSON.stringify(themeBodyClass[theme])}; };
  if (document.body) themed(); else document.addEventListener('DOMContentLoaded', themed);
  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error('An instance of the VS Code API has already been acquired');
    acquired = true;
    return Object.freeze({
      postMessage: (message) => {
        const copy = JSON.parse(JSON.stringify(message));
        posted.push(copy);
        // A test host (serveHost) answers requests: its replies arrive as host messages.
        if (typeof window.__canopyHost === 'function') {
          window.__canopyHost(copy).then((replies) => { for (const r of replies) window.postMessage(r, '*'); });
        }
      },
      getState: () => state,
      setState: (next) => { state = next; stateWrites.push(JSON.parse(JSON.stringify(next))); return next; },
    });
  };
})();`;
}

/** Opens the page and waits until the bundle has run (it posts webview/ready first thing). */
export async function openInspector(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 720, height: 480 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  const response = await page.goto(url);
  if (!response?.ok()) throw new Error(`loading ${url} answered ${response?.status()}`);
  try {
    await page.waitForFunction(() => (window as unknown as { __posted: unknown[] }).__posted.length > 0, undefined, { timeout: 10_000 });
  } catch (err) {
    throw new Error(`the inspector bundle posted nothing (page errors: ${pageErrors.join('; ') || 'none'})`, { cause: err });
  }
  return page;
}

/**
 * Delivers a message the way the extension does: a `message` event on the window whose data is
 * the message. Resolves once the webview's own listener (registered earlier, so called earlier)
 * has handled it, so the DOM can be asserted on at once.
 */
export async function postFromHost(page: Page, message: HostToWebviewMessage | unknown): Promise<void> {
  await page.evaluate(
    (m) =>
      new Promise<void>((done) => {
        window.addEventListener('message', () => done(), { once: true });
        window.postMessage(m, '*');
      }),
    message,
  );
}

export async function stubRecord(page: Page): Promise<StubRecord> {
  return page.evaluate(() => {
    const w = window as unknown as { __posted: unknown[]; __stateWrites: unknown[]; __cspViolations: StubRecord['cspViolations'] };
    return { posted: w.__posted, stateWrites: w.__stateWrites, cspViolations: w.__cspViolations };
  });
}

/** Saves a screenshot under test-results/webview/ (git-ignored) and returns its path. */
export async function keepScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Makes the page's stub host answer requests with these handlers, through the real
 * HostEndpoint (so every request is validated as the extension validates it). Returns the log
 * of requests handled, as `method file-or-name`.
 */
export async function serveHost(page: Page, handlers: Partial<RequestHandlers>): Promise<string[]> {
  const log: string[] = [];
  await page.exposeFunction('__canopyHost', async (raw: unknown) => {
    const replies: HostToWebviewMessage[] = [];
    const m = raw as { kind?: string; method?: string; params?: { file?: string; name?: string; traceId?: string } };
    if (m.kind === 'request') log.push(`${m.method} ${m.params?.file ?? m.params?.name ?? m.params?.traceId ?? ''}`.trim());
    const endpoint = new HostEndpoint((reply) => replies.push(reply), handlers, () => undefined);
    await endpoint.receive(raw);
    return replies;
  });
  return log;
}

/**
 * Repaints an open page in another theme, as VS Code does when the user switches: every
 * `--vscode-*` variable replaced on <html>, the body's theme class swapped.
 */
export async function applyTheme(page: Page, kind: ThemeKind): Promise<void> {
  await page.evaluate(
    ({ vars, cls, all }) => {
      for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
      document.body.classList.remove(...all);
      document.body.classList.add(cls);
      document.body.dataset.vscodeThemeKind = cls;
    },
    { vars: themeVariables(kind), cls: themeBodyClass[kind], all: Object.values(themeBodyClass) },
  );
}

/** An accessibility violation axe-core found, with where (selectors) and why (its first node's summary). */
export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
  summary: string;
}

let axeSource: string | undefined;

/**
 * Runs axe-core (the WCAG 2.x A and AA rules, colour contrast among them) over the page, shadow
 * roots included, and returns the violations of `impacts` (default: serious and critical). axe is
 * evaluated through the devtools protocol, so the page's CSP does not stand in its way and nothing
 * of it stays in the page's own scripts.
 */
export async function axeViolations(page: Page, impacts: readonly string[] = ['serious', 'critical']): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(join(repoRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[]; failureSummary?: string }> }> }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? 'unknown',
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)),
      summary: v.nodes[0]?.failureSummary ?? '',
    }));
  });
  return violations.filter((v) => impacts.includes(v.impact));
}
