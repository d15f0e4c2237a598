/**
 * XSS corpus: documents carrying script tags, event-handler attributes, `javascript:` URLs, SVG
 * and CSS payloads (and a hostile file name and question) go through the real index → ask →
 * inspector path, and the test clicks through every view that shows their text. It proves that
 * nothing executes (no payload sets its flag), no element or attribute is created from document
 * text, the text is shown as text, the page's CSP reports nothing, and no request leaves the
 * page: every request the page makes goes to its own origin.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestServices } from '../helpers/services';
import type { AskTrace, TraceNode } from '../../src/contracts/trace';
import { inspectorRequestHandlers } from '../../src/extension/views/inspectorRequests';
import { PROTOCOL_VERSION } from '../../src/protocol/messages';
import { InspectorServer, keepScreenshot, closeBrowser, openBrowser, openInspector, postFromHost, serveHost, stubRecord } from './harness';
import { demoFolder, openWorkspace } from './realTraces';

/** A host outside the machine (TEST-NET-3): any request to it would mean a payload loaded something. */
const evil = 'http://203.0.113.9';

const flag = (name: string) => `window.__pwned=(window.__pwned||[]).concat('${name}')`;

const payloads = [
  `<script>${flag('script')}</script>`,
  `<img src=x onerror="${flag('img-onerror')}">`,
  `<a href="javascript:${flag('js-url')}">the gauge link</a>`,
  `<svg onload="${flag('svg-onload')}"><script>${flag('svg-script')}</script></svg>`,
  `<style>body{background:url(${evil}/css.png)} #app{display:none}</style>`,
  `<iframe src="${evil}/frame" srcdoc="<script>parent.${flag('srcdoc')}</script>"></iframe>`,
  `<link rel="stylesheet" href="${evil}/x.css"><object data="${evil}/o"></object>`,
  `"><img src=${evil}/beacon.png onload="${flag('quote-break')}">`,
  `</textarea><input autofocus onfocus="${flag('autofocus')}">`,
  `<math><mtext><table><mglyph><style><img src=x onerror="${flag('mxss')}">`,
  `{{constructor.constructor('${flag('template')}')()}} \${${flag('template-literal')}}`,
  `<div style="background-image:url(javascript:${flag('css-js')})">x</div>`,
];

const hostileFile = `"><img src=x onerror=${flag('filename').replace(/'/g, '')}>.txt`;

/** Files whose text, titles and names carry the payloads, around a few plain sentences about the gauge. */
function hostileCorpus(): Record<string, string> {
  const lines = payloads.map((p, i) => `The flood gauge note ${i} says ${p} and the gauge reading was logged.`);
  return {
    'hostile/notes.txt': `Flood gauge notes.\n\n${lines.join('\n\n')}\n`,
    'hostile/report.md': `# <img src=x onerror="${flag('md-title')}"> Flood gauge report\n\n${lines.slice(0, 6).join('\n\n')}\n\n[gauge](javascript:${flag('md-link')})\n`,
    'hostile/page.html': `<!DOCTYPE html><html><head><title>&lt;script&gt;${flag('html-title')}&lt;/script&gt; Gauge page</title></head><body><h1>Gauge &lt;svg onload=${flag('html-h1')}&gt;</h1><p>The flood gauge page says &lt;img src=x onerror="${flag('html-escaped')}"&gt; about the gauge reading.</p><script>${flag('html-script')}</script></body></html>`,
    'hostile/table.csv': `station,note\ngauge-1,"<img src=x onerror=""${flag('csv')}""> flood gauge reading"\ngauge-2,=HYPERLINK("javascript:${flag('csv-formula')}";"flood gauge")\n`,
    'hostile/records.jsonl': `${JSON.stringify({ text: `The flood gauge record says <svg><animate onbegin="${flag('svg-animate')}" attributeName=x dur=1s>` })}\n${JSON.stringify({ text: `Gauge reading <iframe src=javascript:${flag('json-iframe')}>` })}\n`,
    'hostile/talk.vtt': `WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nThe flood gauge <b onmouseover="${flag('vtt')}">peaked</b> early.\n`,
    [`hostile/${hostileFile}`]: `The flood gauge file with a hostile name says ${payloads[1]} about the gauge reading.\n`,
  };
}

function leavesOf(n: TraceNode, out: TraceNode[] = []): TraceNode[] {
  if (n.children.length === 0) out.push(n);
  else for (const c of n.children) leavesOf(c, out);
  return out;
}

const question = `What do the flood gauge notes say? <img src=x onerror="${flag('question')}">`;

describe('XSS corpus through index → ask → inspector', () => {
  let browser: Browser;
  let server: InspectorServer;
  let ws: TestServices;
  let closeWs: () => Promise<void>;
  let folder: string;
  let trace: AskTrace;
  let second: AskTrace;

  before(async () => {
    folder = demoFolder(hostileCorpus());
    ({ ws, close: closeWs } = await openWorkspace(folder));
    trace = (await ws.ask.ask(question, ws.settings, { topK: 8 })).trace;
    second = (await ws.ask.ask('Which gauge reading was logged in the hostile notes?', ws.settings, { topK: 8 })).trace;
    await ws.traces.save(trace);
    await ws.traces.save(second);
    server = await InspectorServer.start();
    browser = await openBrowser();
  });

  after(async () => {
    await closeBrowser(browser);
    await server?.close();
    await closeWs?.();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  /** Everything in the page (shadow roots included) that document text must never create. */
  const audit = (page: Page) =>
    page.evaluate(() => {
      // Iterative (no named helper: the test's transpiler would wrap it in a helper the page lacks).
      const all: Element[] = [];
      const roots: Array<Document | ShadowRoot> = [document];
      while (roots.length > 0) {
        for (const e of roots.pop()!.querySelectorAll('*')) {
          all.push(e);
          if (e.shadowRoot) roots.push(e.shadowRoot);
        }
      }
      const handlerAttrs = all.flatMap((e) => Array.from(e.attributes).filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => `${e.tagName}[${a.name}]`));
      const urls = all.flatMap((e) =>
        ['href', 'src', 'xlink:href', 'action', 'formaction', 'data', 'srcdoc', 'style']
          .map((n) => e.getAttribute(n))
          .filter((v): v is string => v !== null && /javascript:|203\.0\.113|onerror|<script/i.test(v)),
      );
      const app = document.getElementById('app')!;
      return {
        pwned: (window as unknown as { __pwned?: unknown }).__pwned,
        handlerAttrs,
        urls,
        scripts: document.querySelectorAll('script').length,
        forbidden: app.querySelectorAll('script, iframe, img, object, embed, link, style, math, input, textarea, a[href], foreignObject').length - app.querySelectorAll('input.canopy-scrub').length,
        appText: app.textContent ?? '',
      };
    });

  test('nothing executes, nothing is created from document text, and no request leaves the page', async () => {
    const texts = JSON.stringify(trace);
    for (const marker of ['<script>', 'onerror=', 'javascript:', '<svg', '<style>', 'srcdoc']) assert.ok(texts.includes(marker), `the trace carries ${marker} (the corpus reached the answer)`);
    const page = await openInspector(browser, server.inspectorPage());
    const network: string[] = [];
    page.on('request', (r) => network.push(r.url()));
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.setViewportSize({ width: 1100, height: 900 });
    const indexed = new Set(Object.keys((await ws.index.corpus(ws.settings)).manifest.files));
    const opened: string[] = [];
    await serveHost(
      page,
      inspectorRequestHandlers({
        currentView: () => ({ title: 'Canopy', message: '' }),
        isIndexedFile: (rel) => indexed.has(rel),
        openSource: async (rel) => void opened.push(rel),
        readFile: async (rel) => new Uint8Array(readFileSync(join(folder, rel))),
        listTraces: () => ws.traces.list(),
        readTrace: (name) => ws.traces.read(name),
        findTrace: async (id) => [trace, second].find((t) => t.id === id),
        replay: (t, s) => ws.ask.replay(t, s, ws.settings),
      }),
    );
    try {
      const scriptsBefore = (await audit(page)).scripts;
      await postFromHost(page, { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy', message: '' } } });
      await postFromHost(page, { kind: 'notify', method: 'inspector/showTrace', params: { trace } });
      assert.equal(await page.textContent('#app h1'), question, 'the hostile question is shown as text');

      // Click through: citations, every item root and its kept regions with their details.
      for (const chip of await page.$$('.canopy-citation')) await chip.click();
      await page.click('vscode-button.canopy-expand-kept');
      const rows = await page.$$eval('vscode-tree-item', (els) => els.map((e) => (e as HTMLElement).dataset.nodeId!));
      let clicked = 0;
      // Deepest rows first: clicking a branch toggles it and would hide the rows under it.
      for (const id of rows.slice(0, 60).reverse()) {
        // Click those still shown.
        const label = page.locator(`vscode-tree-item[data-node-id="${id.replace(/["\\]/g, '\\$&')}"] > .canopy-node-label`);
        if (!(await label.isVisible())) continue;
        await label.click();
        clicked++;
      }
      assert.ok(clicked >= 10, `${clicked} regions clicked`);
      await page.fill('vscode-textfield.canopy-search >> input', '<script>');
      await page.waitForFunction(() => document.querySelectorAll('vscode-tree-item.canopy-match').length > 0);
      await keepScreenshot(page, 'xss-evidence');
      for (const tab of ['rounds', 'graph', 'topics', 'pdf', 'compare', 'replay']) await page.click(`vscode-tab-header[data-tab="${tab}"]`);
      await page.click('vscode-tab-header[data-tab="compare"]');
      await page.waitForSelector('.canopy-compare-picker');
      const other = (await ws.traces.list()).find((t) => t.id === second.id)!;
      await page.click(`.canopy-compare-pick[data-name="${other.name}"]`);
      await page.waitForSelector(`.canopy-compare-result[data-compared="${second.id}"]`);
      await page.click('vscode-tab-header[data-tab="rounds"]');
      await keepScreenshot(page, 'xss-rounds');
      // Reveal a region carrying each payload the way the host does (Evidence view, editor
      // decorations), whatever retrieval kept: its details must show the payload as text.
      await page.click('vscode-tab-header[data-tab="evidence"]');
      for (const shown of ['<script>', 'onerror=', 'javascript:']) {
        const hit = trace.rounds.flatMap((r) => r.retrieved).flatMap((item) => (item.tree ? leavesOf(item.tree).filter((n) => n.text?.includes(shown)).map((n) => ({ itemId: item.itemId, nodeId: n.id })) : []))[0];
        assert.ok(hit, `a retrieved region carries ${shown}`);
        await postFromHost(page, { kind: 'notify', method: 'inspector/reveal', params: hit });
        await page.waitForSelector(`vscode-tree-item[data-node-id="${hit.nodeId.replace(/["\\]/g, '\\$&')}"]`);
      }
      // Give any image error, frame load or animation that might have been created time to fire.
      await page.waitForTimeout(1500);

      const a = await audit(page);
      assert.equal(a.pwned, undefined, `a payload ran: ${JSON.stringify(a.pwned)}`);
      assert.deepEqual(dialogs, []);
      assert.deepEqual(a.handlerAttrs, [], 'no event-handler attribute exists anywhere');
      assert.deepEqual(a.urls, [], 'no attribute carries a payload URL or markup');
      assert.equal(a.scripts, scriptsBefore, 'no script element was added');
      assert.equal(a.forbidden, 0, 'no element of a payload exists in the inspector');
      for (const shown of ['<script>', 'onerror=', 'javascript:']) assert.ok(a.appText.includes(shown), `${shown} is shown as text`);
      assert.ok(opened.length > 0, 'the citations asked the host to open their sources');
      assert.ok(opened.every((f) => indexed.has(f)));
      const foreign = network.filter((u) => new URL(u).origin !== server.origin);
      assert.deepEqual(foreign, [], 'every request went to the page’s own origin');
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
    } finally {
      await page.close();
    }
  });
});
