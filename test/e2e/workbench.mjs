// What both end-to-end runs (run.mjs, untrusted.mjs) read from the VS Code workbench and the
// temp folder, written once: files under a folder, a free port, the inspector's frame, the active
// editor tab and the status bar's selection, and one polling loop for "read until it shows".
import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Every file under `dir` (recursively) whose name `match` accepts; none when `dir` is missing. */
export function findFiles(dir, match) {
  const hits = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return hits;
  }
  for (const name of entries) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) hits.push(...findFiles(p, match));
    else if (match(name)) hits.push(p);
  }
  return hits;
}

/** A loopback port nothing listens on right now. */
export function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/** The Canopy log channel's files under a user-data-dir. */
export const canopyLogFiles = (userData) => findFiles(join(userData, 'logs'), (n) => n === 'Canopy.log' || /^\d+-Canopy\.log$/.test(n));

/** The frame that holds the inspector (#app) — the webview's inner frame — or undefined. */
export async function findInspectorFrame(page) {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame()) continue;
    try {
      if (await frame.$('main#app')) return frame;
    } catch {
      /* detached or navigating */
    }
  }
  return undefined;
}

/**
 * The aria-label of the active tab of the active editor group ('' when there is none). Every group
 * has a `.tab.active`, so the first one in the page is the left group's, whichever group has focus:
 * with the inspector in the left group, a source opened beside it was read as "the inspector is
 * active" (CI's failing run). The workbench marks the active group's container `.active`.
 */
export const activeTab = (page) =>
  page
    .$$eval('.editor-group-container', (groups) => {
      const label = (g) => g?.querySelector('.tabs-container .tab.active')?.getAttribute('aria-label') ?? '';
      return label(groups.find((g) => g.classList.contains('active'))) || label(groups[0]);
    })
    .catch(() => '');

/** The aria-labels of every editor group's active tab. */
export const activeTabs = (page) => page.$$eval('.tabs-container .tab.active', (ts) => ts.map((t) => t.getAttribute('aria-label') ?? '')).catch(() => []);

/** The status bar's cursor/selection item, e.g. "Ln 12, Col 1" ('' while it is not shown). */
export const editorSelection = (page) => page.$eval('[id="status.editor.selection"]', (e) => e.textContent ?? '').catch(() => '');

/**
 * Calls `read()` every `everyMs` until `done(value)` holds or `timeoutMs` has passed, and returns
 * the last value read either way: the caller decides what a value that never got there means and
 * says so with what it saw.
 */
export async function pollUntil(read, done, timeoutMs, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await sleep(everyMs);
  }
}
