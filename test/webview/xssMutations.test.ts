/**
 * Mutation-based XSS corpus: seeded mutations of script, handler, URL, SVG/MathML, CSS and
 * template payloads — case and whitespace games, entity and percent encoding, context breakers
 * (`</title>`, `</textarea>`, `-->`, `]]>`, quotes), `javascript:` spellings, namespace confusion —
 * each carrying its own flag, are written into workspace files of every text format and into the
 * questions, then go through the real index → ask → inspector path in headless Chromium. The test
 * clicks through citations, evidence rows and every tab, and proves that no mutation's flag is
 * set, no dialog opens, no handler attribute, payload URL or payload element exists, the CSP
 * reports nothing and every request stays on the page's origin.
 *
 * npm test: 30 mutations (seed 11), every template at least once (~3 s of CPU less than 60: fewer
 * follow-up questions and fewer rows to click). `npm run test:xss` runs 300 (seed 7); CANOPY_XSS_MUTATIONS=<n>
 * and CANOPY_XSS_SEED=<s> for other runs.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestServices } from '../helpers/services';
import type { AskTrace } from '../../src/contracts/trace';
import { inspectorRequestHandlers } from '../../src/extension/views/inspectorRequests';
import { PROTOCOL_VERSION } from '../../src/protocol/messages';
import { InspectorServer, closeBrowser, openBrowser, openInspector, postFromHost, serveHost, stubRecord } from './harness';
import { demoFolder, openWorkspace } from './realTraces';

const COUNT = Number(process.env.CANOPY_XSS_MUTATIONS ?? 30);
const SEED = Number(process.env.CANOPY_XSS_SEED ?? 11);
const evil = 'http://203.0.113.9';

function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Templates: F is where the flag expression goes, U where a URL goes. */
const templates = [
  '<script>F</script>',
  '<img src=x onerror="F">',
  '<a href="javascript:F">gauge</a>',
  '<svg onload="F"></svg>',
  '<svg><script>F</script></svg>',
  '<iframe srcdoc="<script>parent.F</script>"></iframe>',
  '<body onload=F>',
  '<details open ontoggle="F">',
  '<video><source onerror="F"></video>',
  '<math><mtext><table><mglyph><style><img src=x onerror="F">',
  '<style>@import "U/x.css";</style>',
  '<link rel=stylesheet href="U/x.css">',
  '<div style="background:url(U/bg.png)">x</div>',
  '<object data="javascript:F"></object>',
  '<embed src="javascript:F">',
  '<form action="javascript:F"><button>go</button></form>',
  '<input autofocus onfocus="F">',
  '<marquee onstart="F">gauge</marquee>',
  '{{constructor.constructor("F")()}}',
  '${F}',
  '<meta http-equiv="refresh" content="0;url=javascript:F">',
  '<base href="U/">',
  '<svg><animate onbegin="F" attributeName=x dur=1s>',
  '<img srcset="U/a.png 1x" src=x onerror=F>',
];

const breakers = ['"><', "'><", '</title>', '</textarea>', '</style>', '</script>', '-->', ']]>', '`', '</noscript>', '</template>', '<!--', '<![CDATA['];
const jsSpellings = ['javascript:', 'JaVaScRiPt:', 'java\tscript:', 'java&#x09;script:', '&#106;avascript:', 'jav&#x61;script:', ' javascript:', 'javascript&colon;', '%6Aavascript:'];

/** One mutation of `t` (flag placeholder F untouched). */
function mutate(t: string, rand: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const ops: Array<(s: string) => string> = [
    (s) => s.replace(/<\/?[a-z]+/gi, (m) => [...m].map((c) => (rand() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('')),
    (s) => s.replace(/ (?=[a-z]+=)/gi, () => pick(['\n', '\t', '/', ' \u000c', '  ', '/**/'])),
    (s) => s.replace(/javascript:/gi, () => pick(jsSpellings)),
    (s) => `${pick(breakers)}${s}`,
    (s) => `${s}${pick(breakers)}`,
    (s) => s.replace(/</g, () => pick(['<', '&lt;', '&#60;', '&#x3C;', '\\u003c', '%3C', '<\u0000', '＜'])),
    (s) => s.replace(/"/g, () => pick(['"', "'", '`', '', '&quot;'])),
    (s) => `<!--${pick(['', '>', '-->'])}${s}`,
    (s) => `<${pick(['div', 'p', 'svg', 'math', 'table', 'noscript', 'template', 'title', 'textarea', 'xmp'])}>${s}`,
    (s) => s.replace('<', `<${pick(['', '/', '!', '?'])}`),
    (s) => s + s,
    (s) => `[x](${pick(jsSpellings)}F) ${s}`,
    (s) => `${s}\u2028\u2029\uFEFF`,
    (s) => s.replace(/=/g, () => pick(['=', ' = ', '=\n'])),
  ];
  let s = t;
  const n = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) s = pick(ops)(s);
  return s;
}

interface Mutation {
  id: string;
  payload: string;
}

function mutations(count: number, seed: number): Mutation[] {
  const rand = mulberry32(seed);
  return Array.from({ length: count }, (_, i) => {
    const id = `m${i}`;
    const flagExpr = `window.__pwned=(window.__pwned||[]).concat('${id}')`;
    const payload = mutate(templates[i % templates.length]!, rand).replace(/F/g, flagExpr).replace(/U/g, evil);
    return { id, payload };
  });
}

const all = mutations(COUNT, SEED);

/** Spreads the mutations over files of every text format; each line also names its id, so coverage is countable. */
function corpus(): Record<string, string> {
  const files: Record<string, string> = {};
  const per = Math.ceil(all.length / 6);
  const chunk = (k: number) => all.slice(k * per, (k + 1) * per);
  files['mut/notes.txt'] = `Gauge mutation notes.\n\n${chunk(0).map((m) => `Gauge note ${m.id} says ${m.payload} about the gauge reading.`).join('\n\n')}\n`;
  files['mut/report.md'] = `# Gauge mutation report\n\n${chunk(1).map((m) => `## Gauge ${m.id} ${m.payload}\n\nThe gauge reading ${m.id} was ${m.payload} logged.`).join('\n\n')}\n`;
  files['mut/table.csv'] = `id,note\n${chunk(2).map((m) => `${m.id},"gauge reading ${m.payload.replace(/"/g, '""')}"`).join('\n')}\n`;
  files['mut/records.jsonl'] = `${chunk(3).map((m) => JSON.stringify({ id: m.id, text: `The gauge record ${m.id} says ${m.payload} about the reading.` })).join('\n')}\n`;
  files['mut/talk.vtt'] = `WEBVTT\n\n${chunk(4)
    .map((m, i) => `00:00:${String(i * 3).padStart(2, '0')}.000 --> 00:00:${String(i * 3 + 2).padStart(2, '0')}.000\nGauge cue ${m.id} ${m.payload.replace(/-->/g, '- ->')}`)
    .join('\n\n')}\n`;
  files['mut/page.html'] = `<!DOCTYPE html><html><head><title>Gauge page</title></head><body>${chunk(5)
    .map((m) => `<p>Gauge paragraph ${m.id} says ${m.payload.replace(/&/g, '&amp;').replace(/</g, '&lt;')} about the reading.</p>`)
    .join('')}</body></html>`;
  return files;
}

describe(`mutation XSS corpus (${COUNT} mutations, seed ${SEED}) through index → ask → inspector`, () => {
  let browser: Browser;
  let server: InspectorServer;
  let ws: TestServices;
  let closeWs: () => Promise<void>;
  let folder: string;
  const traces: AskTrace[] = [];

  before(async () => {
    folder = demoFolder(corpus());
    ({ ws, close: closeWs } = await openWorkspace(folder));
    const questions = [
      `What do the gauge mutation notes say? ${all[0]!.payload}`,
      `Which gauge reading was logged in the report? ${all[1 % all.length]!.payload}`,
      'What does the gauge record say about the reading?',
      'What do the gauge cues and the gauge page paragraphs say?',
    ];
    for (const q of questions) {
      const t = (await ws.ask.ask(q, ws.settings, { topK: 12 })).trace;
      await ws.traces.save(t);
      traces.push(t);
    }
    // Then questions naming the mutations no answer carries yet, eight at a time (BM25 finds the ids).
    const missing = all.filter((m) => !new RegExp(`\\b${m.id}\\b`).test(JSON.stringify(traces)));
    for (let i = 0; i < missing.length; i += 8) {
      const t = (await ws.ask.ask(`What do the gauge notes ${missing.slice(i, i + 8).map((m) => m.id).join(' ')} say?`, ws.settings, { topK: 12 })).trace;
      await ws.traces.save(t);
      traces.push(t);
    }
    server = await InspectorServer.start();
    browser = await openBrowser();
  });

  after(async () => {
    await closeBrowser(browser);
    await server?.close();
    await closeWs?.();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  const audit = (page: Page) =>
    page.evaluate(() => {
      const els: Element[] = [];
      const roots: Array<Document | ShadowRoot> = [document];
      while (roots.length > 0) {
        for (const e of roots.pop()!.querySelectorAll('*')) {
          els.push(e);
          if (e.shadowRoot) roots.push(e.shadowRoot);
        }
      }
      const handlerAttrs = els.flatMap((e) => Array.from(e.attributes).filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => `${e.tagName}[${a.name}]`));
      const urls = els.flatMap((e) =>
        ['href', 'src', 'srcset', 'xlink:href', 'action', 'formaction', 'data', 'srcdoc', 'style', 'content']
          .map((n) => e.getAttribute(n))
          .filter((v): v is string => v !== null && /javascript|203\.0\.113|__pwned|<script/i.test(v)),
      );
      const app = document.getElementById('app')!;
      return {
        pwned: (window as unknown as { __pwned?: unknown }).__pwned,
        handlerAttrs,
        urls,
        scripts: document.querySelectorAll('script').length,
        forbidden:
          app.querySelectorAll('script, iframe, img, object, embed, link, style, math, video, source, marquee, details, form, meta, base, input, textarea, a[href], foreignObject, animate').length -
          app.querySelectorAll('input.canopy-scrub, details.canopy-why-quote').length,
        appText: app.textContent ?? '',
      };
    });

  test('no mutation executes, creates an element or attribute, or makes a request leave the page', async () => {
    const traceText = JSON.stringify(traces);
    const reached = all.filter((m) => new RegExp(`\\b${m.id}\\b`).test(traceText)).length;
    assert.ok(reached >= Math.ceil(0.9 * all.length), `${reached} of ${all.length} mutations reached the answers`);

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
    await serveHost(
      page,
      inspectorRequestHandlers({
        currentView: () => ({ title: 'Canopy', message: '' }),
        isIndexedFile: (rel) => indexed.has(rel),
        openSource: async () => undefined,
        readFile: async (rel) => new Uint8Array(readFileSync(join(folder, rel))),
        listTraces: () => ws.traces.list(),
        readTrace: (name) => ws.traces.read(name),
        findTrace: async (id) => traces.find((t) => t.id === id),
        replay: (t, s) => ws.ask.replay(t, s, ws.settings),
      }),
    );
    try {
      const scriptsBefore = (await audit(page)).scripts;
      await postFromHost(page, { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy', message: '' } } });
      let clicked = 0;
      for (const trace of traces) {
        await postFromHost(page, { kind: 'notify', method: 'inspector/showTrace', params: { trace } });
        await page.waitForFunction((q) => document.querySelector('#app h1')?.textContent === q, trace.question);
        for (const chip of await page.$$('.canopy-citation')) await chip.click();
        await page.click('vscode-button.canopy-expand-kept');
        const rows = await page.$$eval('vscode-tree-item', (els) => els.map((e) => (e as HTMLElement).dataset.nodeId!));
        for (const id of rows.slice(0, traces.indexOf(trace) < 4 ? 40 : 12)) {
          const label = page.locator(`vscode-tree-item[data-node-id="${id.replace(/["\\]/g, '\\$&')}"] > .canopy-node-label`);
          if (!(await label.isVisible())) continue;
          await label.click();
          clicked++;
        }
        for (const tab of ['rounds', 'graph', 'topics', 'compare', 'replay', 'evidence']) {
          const header = page.locator(`vscode-tab-header[data-tab="${tab}"]`);
          if (await header.count()) await header.click();
        }
      }
      assert.ok(clicked >= 20, `${clicked} regions clicked`);
      await page.waitForTimeout(1500); // let any created image, frame or animation fire

      const a = await audit(page);
      assert.equal(a.pwned, undefined, `a mutation ran: ${JSON.stringify(a.pwned)}`);
      assert.deepEqual(dialogs, []);
      assert.deepEqual(a.handlerAttrs, [], 'no event-handler attribute exists anywhere');
      assert.deepEqual(a.urls, [], 'no attribute carries a payload URL, flag or markup');
      assert.equal(a.scripts, scriptsBefore, 'no script element was added');
      assert.equal(a.forbidden, 0, 'no element of a payload exists in the inspector');
      assert.match(a.appText, /__pwned/, 'the payloads are shown as text');
      const foreign = network.filter((u) => new URL(u).origin !== server.origin);
      assert.deepEqual(foreign, [], 'every request went to the page’s own origin');
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
      console.log(`mutation XSS: ${all.length} mutations (seed ${SEED}), ${reached} reached the ${traces.length} answers, ${clicked} regions clicked; 0 executed, 0 elements or handler attributes created, 0 foreign requests, 0 CSP reports`);
    } finally {
      await page.close();
    }
  });
});
