/**
 * Inspector benchmark (`npm run bench:inspector`): how long a big real trace takes to paint its
 * first view in headless Chromium. A generated corpus (markdown field reports) is indexed with
 * the built-in encoder and asked with a large k, giving a trace of ≥ 5,000 scored nodes; the
 * real inspector page then receives it the way the extension sends it, and the time from the
 * message to the next painted frame is measured, on a fresh page each run. Also timed: expand
 * to kept, a search, and opening the rounds tab. Prints a table and writes
 * test-results/webview/bench-inspector.json. A benchmark, not a test: it asserts nothing about
 * time.   Flags: --runs N (default 9), --files N (default 48), --k N (default 40), --trace FILE
 * (paint a trace written by an earlier run, test-results/webview/bench-trace.json, without re-indexing).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { AskTrace, TraceNode } from '../../src/contracts/trace';
import { PROTOCOL_VERSION } from '../../src/protocol/messages';
// The benchmark keeps the browser lookup of the published figures (system browser first), not the
// webview tier's preference for the lighter headless shell.
import { launchChromium } from '../helpers/chromium';
import { InspectorServer, openInspector, postFromHost, resultsDir } from './harness';
import { openWorkspace } from './realTraces';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const runs = arg('runs', 9);
const fileCount = arg('files', 48);
const k = arg('k', 40);

/** A small deterministic PRNG, so every run indexes the same corpus. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const nouns = ['plot', 'gauge', 'alder', 'willow', 'sensor', 'transect', 'canopy', 'river', 'terrace', 'floodplain', 'sample', 'quadrat', 'logger', 'mast', 'seedling', 'ash', 'oak', 'beech', 'soil', 'moisture'];
const verbs = ['recorded', 'measured', 'replaced', 'surveyed', 'flooded', 'recovered', 'lost', 'gained', 'logged', 'planted', 'calibrated', 'inspected'];
const adjectives = ['northern', 'southern', 'young', 'mature', 'wet', 'dry', 'dense', 'sparse', 'upper', 'lower', 'eastern', 'western'];

function corpus(dir: string): void {
  const rnd = prng(20261129);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const sentence = () =>
    `The ${pick(adjectives)} ${pick(nouns)} on plot P${1 + Math.floor(rnd() * 40)} was ${pick(verbs)} in ${pick(['April', 'May', 'June', 'July', 'August', 'September'])} near the ${pick(adjectives)} ${pick(nouns)} with ${Math.floor(rnd() * 90) + 5} readings.`;
  for (let f = 0; f < fileCount; f++) {
    const parts = [`# Field report ${f + 1}: ${pick(adjectives)} ${pick(nouns)}s`];
    for (let s = 0; s < 4; s++) {
      parts.push(`## Section ${s + 1}: the ${pick(nouns)}`);
      for (let p = 0; p < 3; p++) parts.push(Array.from({ length: 5 }, sentence).join(' '));
    }
    writeFileSync(join(dir, `report-${String(f + 1).padStart(3, '0')}.md`), `${parts.join('\n\n')}\n`);
  }
}

function countNodes(trace: AskTrace): number {
  let n = 0;
  const walk = (x: TraceNode) => {
    n++;
    x.children.forEach(walk);
  };
  for (const r of trace.rounds) for (const i of r.retrieved) if (i.tree && !i.repeated) walk(i.tree);
  return n;
}

/**
 * In-page timer: ms from posting a message (or running an action) to the next painted frame.
 * Kept as source text: the TypeScript loader would wrap named inner functions in a helper that
 * the page does not have.
 */
const inPageTimer = `({ action: what, message: m }) => new Promise((resolve) => {
  const t0 = performance.now();
  const done = () => requestAnimationFrame(() => setTimeout(() => {
    const end = performance.now();
    resolve({ total: end - t0, webview: what === 'show' ? end - window.__messageAt : end - t0 });
  }, 0));
  if (what === 'show') window.postMessage(m, '*');
  else if (what === 'expand') document.querySelector('vscode-button.canopy-expand-kept').click();
  else if (what === 'rounds') document.querySelector('vscode-tab-header[data-tab="rounds"]').click();
  else if (what === 'search') {
    const field = document.querySelector('vscode-textfield.canopy-search');
    field.value = 'willow';
    field.dispatchEvent(new Event('input', { bubbles: true }));
  }
  const ready = () => what === 'show' ? document.querySelector('#app[data-state="trace"] vscode-tree-item') !== null
    : what === 'rounds' ? document.querySelector('.canopy-round') !== null
    : what === 'search' ? document.querySelector('vscode-tree-item.canopy-match') !== null
    : true;
  // Once the DOM is there: the task after the next frame runs once that frame is painted.
  const poll = () => (ready() ? done() : setTimeout(poll, 0));
  poll();
})`;

/** `webview`: from the message event reaching the page (or the action) to the painted frame; `total`: from posting it. */
async function timeToPaint(page: Page, action: string, message?: unknown): Promise<{ total: number; webview: number }> {
  return page.evaluate(`(${inPageTimer})(${JSON.stringify({ action, message: message ?? null })})`) as Promise<{ total: number; webview: number }>;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Generates the corpus, indexes it and asks: the trace the benchmark paints. */
async function makeTrace(): Promise<AskTrace> {
  const dir = mkdtempSync(join(tmpdir(), 'canopy-bench-'));
  try {
    corpus(dir);
    console.log(`corpus: ${fileCount} markdown files in ${dir}; indexing with the built-in encoder…`);
    const t0 = Date.now();
    const { ws, close } = await openWorkspace(dir);
    try {
      console.log(`indexed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      const t1 = Date.now();
      const trace = (await ws.ask.ask('Which northern alder plot was flooded in June and replanted with willow seedlings?', ws.settings, { topK: k })).trace;
      console.log(`asked in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
      return trace;
    } finally {
      await close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  // --trace FILE paints a trace made earlier (the run writes its trace beside the results).
  const given = process.argv.indexOf('--trace');
  const trace = given >= 0 ? (JSON.parse(readFileSync(process.argv[given + 1]!, 'utf8')) as AskTrace) : await makeTrace();
  mkdirSync(resultsDir, { recursive: true });
  if (given < 0) writeFileSync(join(resultsDir, 'bench-trace.json'), JSON.stringify(trace));
  const nodes = countNodes(trace);
  const bytes = JSON.stringify(trace).length;
  console.log(`trace: ${nodes} scored nodes in ${trace.rounds.flatMap((r) => r.retrieved.filter((i) => i.tree)).length} items, ${trace.rounds.length} round(s), ${(bytes / 1024 / 1024).toFixed(2)} MB of JSON`);
  if (nodes < 5000) throw new Error(`the trace has ${nodes} nodes; raise --files or --k to reach 5,000`);

  const server = await InspectorServer.start();
  const browser = await launchChromium();
  const results: Record<string, number[]> = { first: [], firstPosted: [], expand: [], search: [], rounds: [] };
  try {
    for (let i = 0; i < runs; i++) {
      const page = await openInspector(browser, server.inspectorPage());
      await page.setViewportSize({ width: 1100, height: 900 });
      await postFromHost(page, { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy', message: '' } } });
      const first = await timeToPaint(page, 'show', { kind: 'notify', method: 'inspector/showTrace', params: { trace } });
      results.first!.push(first.webview);
      results.firstPosted!.push(first.total);
      results.expand!.push((await timeToPaint(page, 'expand')).webview);
      results.search!.push((await timeToPaint(page, 'search')).webview);
      results.rounds!.push((await timeToPaint(page, 'rounds')).webview);
      const rows = await page.$$eval('vscode-tree-item', (e) => e.length);
      if (i === 0) console.log(`tree items created after expand-to-kept and search: ${rows}`);
      await page.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
  const rowsOut = Object.entries(results).map(([name, xs]) => ({ name, median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }));
  const labels: Record<string, string> = {
    first: 'first view (message received → painted)',
    firstPosted: 'first view incl. the page posting the 3 MB message to itself',
    expand: 'expand to kept (all items)',
    search: 'search "willow" (150 ms debounce + filtered tree)',
    rounds: 'open the rounds tab',
  };
  console.log(`first view, every run (ms): ${results.first!.map((x) => x.toFixed(0)).join(', ')}`);
  console.log(`\n| step | median ms | min ms | max ms |\n|---|---:|---:|---:|`);
  for (const r of rowsOut) console.log(`| ${labels[r.name]} | ${r.median.toFixed(0)} | ${r.min.toFixed(0)} | ${r.max.toFixed(0)} |`);
  const out = join(resultsDir, 'bench-inspector.json');
  writeFileSync(out, JSON.stringify({ nodes, traceBytes: bytes, runs, cpus: cpus().length, node: process.version, results: rowsOut }, null, 2));
  console.log(`\n${runs} runs on fresh pages; written to ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
