/**
 * Webview tier: does the inspector explain at a glance, at any width, in any theme? Real traces
 * (test/webview/realTraces.ts) and a fixture with the learned reader's and critic's judgments
 * (test/fixtures/traces/learned-judgment.json), in the real page in headless Chromium:
 * - at 480 px (a source open beside the inspector) and 1440 px, every tree row's score, difference
 *   from its parent and decision code lie inside the viewport, and a clicked row's details are on
 *   screen beside or over it (screenshots: test-results/webview/evidence-480.png, -1440.png);
 * - every column of the Rounds tables can be scrolled into view at 480 px;
 * - the critic card shows what the rule critic measured, checked against the trace, for a stop and
 *   a follow-up; the judgments, a quote's context, a stale quote and the language note show;
 * - Markdown and HTML in answers, titles and labels are shown as plain text;
 * - the graph fits, zooms and pans, filters to one region's steps and keeps its tab on a click;
 * - Compare calls the original A, and the replay form offers the chosen compressor's settings;
 * - axe-core finds no serious or critical violation in any tab, in the dark, light and
 *   high-contrast themes, and the decision pills and graph strokes keep 3:1 against the background.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { AskTrace, TraceNode } from '../../src/contracts/trace';
import { PROTOCOL_VERSION, type HostToWebviewMessage } from '../../src/protocol/messages';
import { InspectorServer, applyTheme, axeViolations, closeBrowser, keepScreenshot, openBrowser, openInspector, postFromHost, repoRoot, stubRecord } from './harness';
import { buildRealTraces, serveRealHost, type RealTraces } from './realTraces';
import { type ThemeKind, themeKinds } from './themes';

const hello: HostToWebviewMessage = { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy Evidence Inspector', message: 'No question asked yet.' } } };
const show = (trace: AskTrace): HostToWebviewMessage => ({ kind: 'notify', method: 'inspector/showTrace', params: { trace } });
const fixture = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'traces', 'learned-judgment.json'), 'utf8')) as AskTrace;

function walk(n: TraceNode, out: TraceNode[] = []): TraceNode[] {
  out.push(n);
  n.children.forEach((c) => walk(c, out));
  return out;
}

const cov = (v: number) => v.toFixed(2);

describe('the inspector explains its decisions at any width and in any theme', () => {
  let browser: Browser;
  let server: InspectorServer;
  let real: RealTraces;

  before(async () => {
    real = await buildRealTraces();
    server = await InspectorServer.start();
    browser = await openBrowser();
  });

  after(async () => {
    await closeBrowser(browser);
    await server?.close();
    await real?.close();
  });

  async function inspect(trace: AskTrace, options: { width?: number; height?: number; theme?: ThemeKind } = {}): Promise<{ page: Page; requests: string[] }> {
    const page = await openInspector(browser, server.inspectorPage(options.theme ? { theme: options.theme } : {}));
    await page.setViewportSize({ width: options.width ?? 1100, height: options.height ?? 900 });
    const requests = await serveRealHost(page, real);
    await postFromHost(page, hello);
    await postFromHost(page, show(trace));
    return { page, requests };
  }

  /** Every displayed tree row whose score, difference or decision cell is missing, empty or outside the viewport. */
  async function rowProblems(page: Page): Promise<{ rows: number; problems: string[] }> {
    return page.evaluate(() => {
      const problems: string[] = [];
      const rows = [...document.querySelectorAll<HTMLElement>('vscode-tree-item')].filter((r) => r.getClientRects().length > 0);
      for (const row of rows) {
        // Scrolled into view when it is not (the rows after it then mostly are too).
        const at = row.getBoundingClientRect();
        if (at.top < 0 || at.top + 22 > window.innerHeight) row.scrollIntoView({ block: 'center', inline: 'nearest' });
        for (const cls of ['canopy-col-score', 'canopy-col-delta', 'canopy-col-code']) {
          const cell = row.querySelector(`:scope > .canopy-cols > .${cls}`);
          const r = cell?.getBoundingClientRect();
          const text = cell?.textContent?.trim() ?? '';
          if (!r || r.width <= 0 || r.height <= 0 || text === '' || r.left < 0 || r.right > window.innerWidth || r.top < 0 || r.bottom > window.innerHeight) {
            problems.push(`${row.dataset.nodeId} ${cls}: ${text} ${r ? `[${Math.round(r.left)},${Math.round(r.right)}]×[${Math.round(r.top)},${Math.round(r.bottom)}]` : 'missing'} in ${window.innerWidth}×${window.innerHeight}`);
          }
        }
      }
      return { rows: rows.length, problems };
    });
  }

  test('at 480 and 1440 px every tree row shows its score, difference and decision code, and a clicked row’s details are on screen', async () => {
    for (const [name, trace] of [
      ['demo', real.demo],
      ['pdf', real.pdf],
    ] as const) {
      const { page } = await inspect(trace, { width: 480, height: 900 });
      try {
        for (const width of [480, 1440]) {
          await page.setViewportSize({ width, height: 900 });
          const { rows, problems } = await rowProblems(page);
          const nodes = trace.rounds.flatMap((r) => r.retrieved.filter((i) => i.tree && !i.repeated)).length;
          assert.ok(rows >= nodes, `${rows} rows shown for ${nodes} items`);
          assert.deepEqual(problems, [], `${name}: cells outside the viewport`);
          // A dropped region and its glimpse say so, in different codes.
          const codes = await page.$$eval('vscode-tree-item > .canopy-cols > .canopy-col-code', (cs) => cs.map((c) => c.textContent?.trim() ?? ''));
          assert.ok(codes.every((c) => /^(kept|whole|refined|dropped|glimpse|gate ✗|controller [✓✗]|in kept|in dropped|unseen)$/.test(c)), codes.join(', '));
          // Click a kept leaf (the last kept row, far down the list at 480 px).
          const kept = trace.rounds.flatMap((r) => r.retrieved.filter((i) => i.tree && !i.repeated)).flatMap((i) => i.keptNodeIds);
          const target = kept.at(-1)!;
          const label = page.locator(`vscode-tree-item[data-node-id="${target}"] > .canopy-node-label`);
          await label.scrollIntoViewIfNeeded();
          await label.click();
          await page.waitForFunction((id) => document.querySelector('.canopy-detail')?.textContent?.includes(id), target);
          await page.waitForTimeout(100);
          const seen = await page.evaluate((id) => {
            const d = document.querySelector('.canopy-detail')!.getBoundingClientRect();
            const row = document.querySelector(`vscode-tree-item[data-node-id="${CSS.escape(id)}"]`) as HTMLElement;
            const w = (row.shadowRoot?.querySelector('.wrapper') ?? row).getBoundingClientRect();
            return { d: { top: d.top, bottom: d.bottom, left: d.left, right: d.right, w: d.width, h: d.height }, row: { top: w.top, bottom: w.bottom }, vw: window.innerWidth, vh: window.innerHeight };
          }, target);
          assert.ok(seen.d.w > 0 && seen.d.h > 50, JSON.stringify(seen));
          assert.ok(seen.d.top >= 0 && seen.d.top < seen.vh - 50 && seen.d.left >= 0 && seen.d.right <= seen.vw, `the details pane is in the viewport: ${JSON.stringify(seen)}`);
          assert.ok(seen.row.top >= 0 && seen.row.bottom <= seen.vh, `the clicked row is in the viewport: ${JSON.stringify(seen)}`);
          if (width < 700) assert.ok(seen.row.bottom <= seen.d.top + 1, `the clicked row stays above the details sheet: ${JSON.stringify(seen)}`);
          if (name === 'demo') await keepScreenshot(page, `evidence-${width}`);
          else await keepScreenshot(page, `evidence-pdf-${width}`);
        }
      } finally {
        await page.close();
      }
    }
  });

  test('at 480 px every column of the Rounds tables scrolls into view, with its first row', async () => {
    const { page } = await inspect(real.rounds, { width: 480, height: 900 });
    try {
      await page.click('vscode-tab-header[data-tab="rounds"]');
      const problems = await page.evaluate(() => {
        const out: string[] = [];
        for (const table of document.querySelectorAll<HTMLTableElement>('table.canopy-retrieved')) {
          const heads = [...table.querySelectorAll('thead th')];
          heads.forEach((th, i) => {
            const cell = table.querySelector(`tbody tr:first-child > :nth-child(${i + 1})`)!;
            cell.scrollIntoView({ block: 'center', inline: 'center' });
            for (const [what, el] of [
              ['header', th],
              ['cell', cell],
            ] as const) {
              const r = el.getBoundingClientRect();
              const box = table.parentElement!.getBoundingClientRect();
              if (r.width <= 0 || r.left < Math.max(0, box.left) - 1 || r.right > Math.min(window.innerWidth, box.right) + 1) out.push(`${th.textContent} ${what}: [${Math.round(r.left)}, ${Math.round(r.right)}] in [${Math.round(box.left)}, ${Math.round(box.right)}]`);
            }
          });
        }
        return out;
      });
      assert.deepEqual(problems, []);
      const headers = await page.$$eval('.canopy-round:first-child table.canopy-retrieved thead th', (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(headers.filter((h) => h !== 'BM25 flat'), ['#', 'Item', 'Dense', 'BM25', 'Fused', 'Kept / whole tokens', 'Status']);
      await page.evaluate(() => window.scrollTo(0, 0));
      await keepScreenshot(page, 'rounds-480');
    } finally {
      await page.close();
    }
  });

  /** What the critic card of a round says, read from the page. */
  async function card(page: Page, round: number) {
    const c = page.locator(`.canopy-round[data-round="${round}"] .canopy-critic-card`);
    return {
      why: ((await c.locator('.canopy-critic-why').textContent()) ?? '').trim(),
      outcome: await c.locator('.canopy-critic-why').getAttribute('data-outcome'),
      parts: await c.locator('.canopy-critic-parts tbody tr').evaluateAll((trs) => trs.map((tr) => ({ part: (tr as HTMLElement).dataset.part, cells: [...tr.children].map((td) => td.textContent?.trim() ?? ''), link: tr.querySelector<HTMLElement>('.canopy-best .canopy-critic-region')?.dataset.node }))),
      facts: await c.locator('.canopy-critic-facts li').allTextContents(),
      head: await c.locator('.canopy-critic-parts thead th').allTextContents(),
    };
  }

  test('the critic card shows what the rule critic measured, against the trace: a follow-up, a round-limit stop and a look-ahead stop', async () => {
    // real.rounds: round 1 asks again (look-ahead off), round 2 stops at the round limit.
    const t = real.rounds;
    assert.ok(t.rounds.length === 2 && t.rounds[0]!.critic?.followUpQuery, 'the trace has a follow-up');
    const { page } = await inspect(t);
    try {
      await page.click('vscode-tab-header[data-tab="rounds"]');
      for (const r of t.rounds) {
        const c = r.critic!;
        const details = c.details as { parts: Array<{ part: string; coverage: number; cue?: string; answered: boolean; best?: string; answerType: string; missingTerms: string[] }>; minCoverage: number };
        const seen = await card(page, r.round);
        assert.equal(seen.head[1], `Coverage (needs ≥ ${cov(details.minCoverage)})`);
        assert.equal(seen.parts.length, details.parts.length);
        for (const [i, p] of details.parts.entries()) {
          const row = seen.parts[i]!;
          assert.equal(row.part, p.part);
          assert.ok(row.cells[1]!.startsWith(`${cov(p.coverage)} / ${cov(details.minCoverage)}`), row.cells[1]);
          assert.equal(row.cells[2], p.cue ?? (p.answerType === 'other' || p.answerType === 'yesno' ? '— (not needed)' : `none (a ${p.answerType} is needed)`));
          if (p.best) assert.ok(row.cells[3]!.replace(/\s+/g, ' ').startsWith(p.best.replace(/\s+/g, ' ').slice(0, 100)), `${row.cells[3]} | ${p.best}`);
          assert.ok(row.cells[4]!.startsWith(p.answered ? 'answered' : 'not answered'), row.cells[4]);
          for (const m of p.answered ? [] : p.missingTerms) assert.ok(row.cells[4]!.includes(m), `${m} in ${row.cells[4]}`);
          // The best sentence links the kept region that holds it.
          if (p.best && row.link) {
            const node = t.rounds.flatMap((x) => x.retrieved).filter((i) => i.tree).flatMap((i) => walk(i.tree!)).find((n) => n.id === row.link)!;
            assert.ok(node.text!.replace(/\s+/g, ' ').includes(p.best.replace(/\s+/g, ' ')), node.text);
          }
        }
        const unanswered = details.parts.filter((p) => !p.answered);
        for (const p of unanswered) assert.ok(seen.why.includes(`“${p.part}” is covered only ${cov(p.coverage)} of the ${cov(details.minCoverage)} needed`), seen.why);
        if (r.round === 1) {
          assert.equal(seen.outcome, 'asked again');
          assert.ok(seen.why.startsWith('Asked again: '), seen.why);
          assert.ok(seen.why.includes(`the follow-up searches “${c.followUpQuery}”`), seen.why);
        } else {
          assert.equal(t.stop.reason, 'round-limit');
          assert.equal(seen.outcome, 'stopped');
          assert.ok(seen.why.startsWith(`Stopped at the round limit (${t.settings.maxRounds}): `), seen.why);
        }
      }
      // A best-sentence link selects its region in the evidence tree.
      const link = page.locator('.canopy-round[data-round="1"] .canopy-best .canopy-critic-region').first();
      const nodeId = await link.getAttribute('data-node');
      await link.click();
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'evidence');
      assert.equal(await page.getAttribute(`vscode-tree-item[data-node-id="${nodeId}"]`, 'selected'), '');
      await page.click('vscode-tab-header[data-tab="rounds"]');
      await keepScreenshot(page, 'critic-follow-up');
    } finally {
      await page.close();
    }

    // real.stop: the look-ahead found nothing better, so the rounds stopped without a follow-up.
    const s = real.stop;
    const probe = (s.rounds[0]!.critic!.details as { probe?: { query: string; items: number; worth: boolean; reason: string } }).probe;
    assert.equal(s.stop.reason, 'no-follow-up');
    assert.ok(probe && !probe.worth, JSON.stringify(s.rounds[0]!.critic));
    const second = await inspect(s);
    try {
      await second.page.click('vscode-tab-header[data-tab="rounds"]');
      const seen = await card(second.page, 1);
      assert.equal(seen.outcome, 'stopped');
      assert.ok(seen.why.startsWith('Stopped without a follow-up: '), seen.why);
      assert.ok(seen.why.includes(`the look-ahead searched “${probe.query}”`), seen.why);
      assert.ok(seen.facts.some((f) => f === `Look-ahead: searched “${probe.query}”, ${probe.items} new item(s) — not worth a round: ${probe.reason}`), seen.facts.join(' | '));
      await keepScreenshot(second.page, 'critic-stop');
    } finally {
      await second.page.close();
    }

    // real.demo: sufficient — every part covered at or above the threshold.
    const d = real.demo;
    const third = await inspect(d);
    try {
      await third.page.click('vscode-tab-header[data-tab="rounds"]');
      const last = d.rounds.at(-1)!;
      const seen = await card(third.page, last.round);
      const details = last.critic!.details as { parts: Array<{ part: string; coverage: number }>; minCoverage: number };
      if (last.critic!.sufficient) {
        const lowest = [...details.parts].sort((a, b) => a.coverage - b.coverage)[0]!;
        assert.ok(seen.why.startsWith(`Stopped: every part of the question has a kept sentence covering at least ${cov(details.minCoverage)} of its words`), seen.why);
        assert.ok(seen.why.includes(`(the lowest, “${lowest.part}”, ${cov(lowest.coverage)})`), seen.why);
      }
    } finally {
      await third.page.close();
    }
  });

  test('the learned critic and reader, a quote’s context, a stale quote and the question’s language show where they are read', async () => {
    const t = fixture;
    const page = await openInspector(browser, server.inspectorPage());
    try {
      await page.setViewportSize({ width: 1100, height: 900 });
      await postFromHost(page, hello);
      await postFromHost(page, show(t));
      assert.match((await page.textContent('.canopy-language-note')) ?? '', new RegExp(`^Language: ${t.language!.question}\\. `));
      for (const c of t.answer.citations) {
        const li = page.locator(`.canopy-citations li[data-marker="${c.marker}"]`);
        assert.equal((await li.locator('.canopy-quote-context').textContent())?.trim(), c.context);
        assert.equal(await li.locator('.canopy-stale').count(), c.stale ? 1 : 0);
        assert.equal((await li.locator('.canopy-why-quote summary').textContent())?.trim(), `Why this quote (${c.judgment!.probability.toFixed(2)})`);
      }
      // The first citation's "why": its probability against its threshold and its top features, largest first, signed.
      const c0 = t.answer.citations[0]!;
      await page.click('.canopy-citations li[data-marker="1"] .canopy-why-quote summary');
      const head = (await page.textContent('.canopy-citations li[data-marker="1"] .canopy-judgment-head')) ?? '';
      assert.ok(head.includes(`probability ${c0.judgment!.probability.toFixed(2)} ≥ threshold ${c0.judgment!.threshold!.toFixed(2)}`), head);
      const feats = await page.$$eval('.canopy-citations li[data-marker="1"] .canopy-contribution', (lis) => lis.map((li) => ({ f: (li as HTMLElement).dataset.feature, up: li.querySelector('.canopy-contribution-bar')!.classList.contains('up') })));
      const sorted = [...c0.judgment!.contributions].sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution));
      assert.deepEqual(feats, sorted.map((x) => ({ f: x.feature, up: x.contribution >= 0 })));
      // The critic card: the learned critic's probability against its threshold, per round.
      await page.click('vscode-tab-header[data-tab="rounds"]');
      for (const r of t.rounds) {
        const j = r.critic!.judgment!;
        const text = (await page.textContent(`.canopy-round[data-round="${r.round}"] .canopy-judgment-head`)) ?? '';
        assert.ok(text.includes(`Learned critic: probability ${j.probability.toFixed(2)} < threshold ${j.threshold!.toFixed(2)}`), text);
        assert.equal(await page.locator(`.canopy-round[data-round="${r.round}"] .canopy-contribution`).count(), Math.min(6, j.contributions.length));
        assert.ok(((await page.textContent(`.canopy-round[data-round="${r.round}"] .canopy-critic-why`)) ?? '').includes(`The learned critic's probability that the evidence holds the answer is ${j.probability.toFixed(2)}`));
      }
      // The cited region's details say it is quoted, with the quote's context and why.
      await page.click('.canopy-citations li[data-marker="1"] .canopy-citation-node');
      const detail = (await page.textContent('.canopy-detail .canopy-quoted')) ?? '';
      assert.ok(detail.startsWith('Quoted as [1]') && detail.includes(c0.context!) && detail.includes('Why this quote'), detail);
      await keepScreenshot(page, 'learned-judgment');
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
    } finally {
      await page.close();
    }
  });

  test('Markdown and HTML in the answer, item titles and region labels are shown as plain text', async () => {
    const t = structuredClone(real.demo);
    t.answer.text = '**T**abular results from [Anserini](http://example.invalid/a) <img src=x onerror="window.__pwned=1"> and `BM25`.\n\n2017. Revenue grew.\n\n- one\n- two';
    // An item refined below its root, so the root opens to its kept regions on the first paint.
    const item = t.rounds[0]!.retrieved.find((i) => i.tree && !i.repeated && i.keptNodeIds.some((id) => id !== i.tree!.id))!;
    item.title = '**Table of** _Contents_ <b>bold</b>';
    item.tree!.children[0]!.preview = '## Findings: [the gap](http://example.invalid) is *140* m²';
    const { page } = await inspect(t);
    try {
      assert.equal(await page.textContent('.canopy-answer-text'), 'Tabular results from Anserini and BM25.\n\n2017. Revenue grew.\n\n• one\n• two');
      assert.equal(await page.textContent(`vscode-tree-item[data-node-id="${item.tree!.id}"] > .canopy-node-label .canopy-item-title`), 'Table of Contents bold');
      const child = item.tree!.children[0]!;
      assert.equal(await page.locator(`vscode-tree-item[data-node-id="${item.tree!.id}"]`).evaluate((r) => (r as HTMLElement & { open: boolean }).open), true);
      assert.equal(await page.textContent(`vscode-tree-item[data-node-id="${child.id}"] > .canopy-node-label .canopy-node-text`), 'Findings: the gap is 140 m²');
      assert.equal(await page.$$eval('#app img', (imgs) => imgs.length), 0);
      assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    } finally {
      await page.close();
    }
  });

  test('the graph fits its drawing, zooms and pans, keeps its tab on a click, and shows one region’s controller steps from its details', async () => {
    const t = real.pdf;
    const run = t.rounds[0]!.retrieved.find((i) => i.controller)!.controller!;
    for (const width of [480, 1440]) {
      const { page } = await inspect(t, { width, height: 900 });
      try {
        await page.click('vscode-tab-header[data-tab="graph"]');
        await page.click('.canopy-graph-fit');
        // Fitted: every node inside the viewport.
        const inside = await page.evaluate(() => {
          const vp = document.querySelector('.canopy-graph-viewport')!.getBoundingClientRect();
          return [...document.querySelectorAll('g.canopy-gnode')].every((g) => {
            const r = g.getBoundingClientRect();
            return r.left >= vp.left - 1 && r.right <= vp.right + 1 && r.top >= vp.top - 1 && r.bottom <= vp.bottom + 1;
          });
        });
        assert.equal(inside, true, 'after Fit every node is in view');
        // Budgets are never cut off: every meter lies inside the page.
        const meters = await page.$$eval('.canopy-meter', (ms) => ms.map((m) => ({ r: m.getBoundingClientRect().right, w: window.innerWidth, name: m.querySelector('.canopy-meter-name')!.getBoundingClientRect().right })));
        for (const m of meters) assert.ok(m.r <= m.w && m.name <= m.w, JSON.stringify(m));
        const scale = async () => Number(await page.getAttribute('.canopy-graph-viewport', 'data-scale'));
        const fitted = await scale();
        await page.click('button.canopy-graph-zoom[aria-label="Zoom in"]');
        assert.ok((await scale()) > fitted * 1.2, 'zoomed in');
        const before = await page.getAttribute('svg.canopy-graph', 'viewBox');
        // Drag from an empty spot of the drawing in the window (a node under the pointer takes the press as a click).
        await page.locator('.canopy-graph-viewport').scrollIntoViewIfNeeded();
        const start = await page.evaluate(() => {
          const vp = document.querySelector('.canopy-graph-viewport')!.getBoundingClientRect();
          for (let fy = 0.5; fy < 0.95; fy += 0.1) {
            for (let fx = 0.5; fx < 0.95; fx += 0.1) {
              const x = vp.left + vp.width * fx;
              const y = vp.top + vp.height * fy;
              const hit = document.elementFromPoint(x, y);
              if (hit && !hit.closest('g.canopy-gnode') && hit.closest('.canopy-graph-viewport')) return { x, y };
            }
          }
          return { x: vp.left + vp.width / 2, y: vp.top + vp.height / 2 };
        });
        await page.mouse.move(start.x, start.y);
        await page.mouse.down();
        await page.mouse.move(start.x - 80, start.y - 30, { steps: 4 });
        await page.mouse.up();
        const after = (await page.getAttribute('svg.canopy-graph', 'viewBox'))!.split(' ').map(Number);
        const b = before!.split(' ').map(Number);
        assert.ok(after[0]! > b[0]! && after[1]! > b[1]!, `dragged left and up: ${before} → ${after.join(' ')}`);
        assert.equal(await page.getAttribute('#app', 'data-tab'), 'graph', 'a drag is not a click');
      } finally {
        await page.close();
      }
    }
    // From a region's details: the controller steps for that region.
    const opened = run.subgraph.nodes.find((n) => n.state === 'opened' && n.regionId)!;
    const { page } = await inspect(t);
    try {
      // The graph node's region, shown in the tree from the graph; its details lead back to its steps.
      await page.click('vscode-tab-header[data-tab="graph"]');
      await page.click(`g.canopy-gnode[data-node="${opened.id}"]`);
      await page.click('.canopy-gnode-detail .canopy-gnode-region');
      assert.equal(await page.getAttribute(`vscode-tree-item[data-node-id="${opened.regionId}"]`, 'selected'), '');
      await page.click('.canopy-detail .canopy-controller-steps');
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'graph');
      const focus = await page.$$eval('g.canopy-gnode.focus', (gs) => gs.map((g) => g.getAttribute('data-node')));
      assert.ok(focus.includes(opened.id), `${opened.id} highlighted among ${focus.join(', ')}`);
      const shownSteps = await page.$$eval('.canopy-step:not([hidden])', (lis) => lis.map((li) => Number((li as HTMLElement).dataset.step)));
      const ids = new Set(focus);
      const expected = run.steps.filter((s) => [s.action.nodeId, s.action.pageId, s.action.from, s.action.to].some((x) => x !== undefined && ids.has(x)) || s.changes.some((c) => ids.has(c.id))).map((s) => s.step);
      assert.deepEqual(shownSteps, expected);
      assert.ok(expected.length > 0 && expected.length < run.steps.length, `${expected.length} of ${run.steps.length} steps`);
      assert.match((await page.textContent('.canopy-graph-filter')) ?? '', new RegExp(`Controller steps for .*: ${expected.length} of ${run.steps.length} step\\(s\\)`));
      // The highlighted element is in view.
      const inView = await page.evaluate((id) => {
        const vp = document.querySelector('.canopy-graph-viewport')!.getBoundingClientRect();
        const r = document.querySelector(`g.canopy-gnode[data-node="${CSS.escape(id)}"]`)!.getBoundingClientRect();
        return r.left >= vp.left - 1 && r.right <= vp.right + 1 && r.top >= vp.top - 1 && r.bottom <= vp.bottom + 1;
      }, opened.id);
      assert.equal(inView, true);
      await keepScreenshot(page, 'graph-region-steps');
      await page.click('.canopy-graph-unfilter');
      assert.equal(await page.locator('.canopy-step:not([hidden])').count(), run.steps.length);
    } finally {
      await page.close();
    }
  });

  test('Compare calls the original A and its replay B (B − A), and lists saved answers with whole questions and times; Replay offers the chosen compressor’s settings', async () => {
    // The replay shown, the original picked: A is still the original.
    const { page } = await inspect(real.replay);
    try {
      await page.click('vscode-tab-header[data-tab="compare"]');
      await page.waitForSelector('.canopy-compare-pick');
      const picks = await page.$$eval('.canopy-compare-pick', (bs) => bs.map((b) => ({ name: (b as HTMLElement).dataset.name, time: b.querySelector('.canopy-compare-pick-time')!.textContent, question: b.querySelector('.canopy-compare-pick-question')!.textContent })));
      const others = real.saved.filter((x) => x.id !== real.replay.id);
      assert.deepEqual(
        picks.map((p) => p.question),
        others.map((x) => x.question),
        'whole questions',
      );
      for (const [i, p] of picks.entries()) assert.ok(p.time!.startsWith(others[i]!.createdAt.replace('T', ' ').slice(0, 19)), p.time!);
      const original = real.saved.find((x) => x.id === real.demo.id)!;
      await page.click(`.canopy-compare-pick[data-name="${original.name}"]`);
      await page.waitForSelector(`.canopy-compare-result[data-compared="${real.demo.id}"]`);
      const sides = await page.$$eval('.canopy-compare-side', (ds) => ds.map((d) => ({ side: (d as HTMLElement).dataset.side, trace: (d as HTMLElement).dataset.trace, text: d.textContent })));
      assert.deepEqual(
        sides.map((s) => [s.side, s.trace]),
        [
          ['A', real.demo.id],
          ['B', real.replay.id],
        ],
      );
      assert.match(sides[0]!.text!, /^A the original, /);
      assert.match(sides[1]!.text!, /^B \(shown\) a replay of A, /);
      const heads = await page.$$eval('.canopy-compare-totals thead th', (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(heads, ['', 'A', 'B (shown)', 'B − A']);
      const d = real.replay.totals.evidenceTokens - real.demo.totals.evidenceTokens;
      const first = await page.$$eval('.canopy-compare-totals tbody tr:first-child td', (tds) => tds.map((t) => t.textContent));
      assert.deepEqual(first, [real.demo.totals.evidenceTokens.toLocaleString('en-US'), real.replay.totals.evidenceTokens.toLocaleString('en-US'), d > 0 ? `+${d.toLocaleString('en-US')}` : d.toLocaleString('en-US')]);
    } finally {
      await page.close();
    }

    const replay = await inspect(real.demo);
    try {
      const p = replay.page;
      await p.click('vscode-tab-header[data-tab="replay"]');
      const visible = () => p.$$eval('.canopy-replay-form .canopy-field', (fs) => fs.filter((f) => !(f as HTMLElement).hidden).map((f) => f.querySelector('span')!.textContent));
      const pick = async (name: string) => {
        await p.evaluate((v) => {
          const c = document.querySelector('vscode-single-select.canopy-replay-compressor') as HTMLElement & { value: string };
          c.value = v;
          c.dispatchEvent(new Event('change', { bubbles: true }));
        }, name);
      };
      const always = ['Branching factor B', 'Items per round k', 'Rounds', 'Critic', 'Compressor'];
      assert.deepEqual(await visible(), [...always, 'Item gate (score margin; empty: off)', 'Rank gate: share of items (empty: off)', 'Rank gate: keep whole below (characters)', 'Rank gate: at least (items)', 'Glimpse: leaves kept of a dropped region']);
      await pick('flat');
      assert.deepEqual(await visible(), [...always, 'm: leaves kept per item']);
      await pick('threshold');
      assert.deepEqual(await visible(), [...always, 'Threshold (cosine)']);
      await pick('none');
      assert.deepEqual(await visible(), always);
      await pick('canopy');
      // The rank gate's share and the glimpse, replayed: the request carries them with the rest of the recorded gate.
      const c = real.demo.settings.compressor;
      assert.equal(c.name, 'canopy');
      await p.fill('vscode-textfield.canopy-replay-items >> input', '0.5');
      await p.fill('vscode-textfield.canopy-replay-glimpse >> input', '0');
      await p.click('vscode-button.canopy-replay-run');
      await p.waitForSelector('.canopy-replay-banner', { timeout: 30_000 });
      const posted = (await stubRecord(p)).posted.filter((m) => (m as { method?: string }).method === 'trace/replay') as Array<{ params: { settings: { compressor?: unknown } } }>;
      assert.deepEqual(posted.at(-1)!.params.settings.compressor, {
        name: 'canopy',
        ...(c.name === 'canopy' && c.itemGate !== undefined ? { itemGate: c.itemGate } : {}),
        items: 0.5,
        ...(c.name === 'canopy' && c.wholeBelow !== undefined ? { wholeBelow: c.wholeBelow } : {}),
        ...(c.name === 'canopy' && c.minItems !== undefined ? { minItems: c.minItems } : {}),
        glimpse: 0,
      });
    } finally {
      await replay.page.close();
    }
  });

  /** Each tab of the PDF answer, with what makes it whole (a selected row, a rendered page, a loaded list). */
  const tabs: Array<{ tab: string; ready: (page: Page) => Promise<void> }> = [
    {
      tab: 'evidence',
      ready: async (page) => {
        const kept = real.pdf.rounds[0]!.retrieved.find((i) => i.tree && i.keptNodeIds.length > 0)!.keptNodeIds[0]!;
        await page.locator(`vscode-tree-item[data-node-id="${kept}"] > .canopy-node-label`).click();
      },
    },
    { tab: 'rounds', ready: async () => undefined },
    { tab: 'graph', ready: async (page) => void (await page.click('g.canopy-gnode.state-opened')) },
    { tab: 'topics', ready: async () => undefined },
    { tab: 'pdf', ready: async (page) => void (await page.waitForSelector('.canopy-pdf-view[data-rendered-page] canvas', { timeout: 30_000 })) },
    { tab: 'compare', ready: async (page) => void (await page.waitForSelector('.canopy-compare-pick')) },
    { tab: 'replay', ready: async () => undefined },
  ];

  test('axe-core finds no serious or critical violation in any tab in the dark, light and high-contrast themes; decision pills and graph strokes keep 3:1', async () => {
    const { page } = await inspect(real.pdf, { theme: 'dark', width: 1100, height: 900 });
    try {
      const found: string[] = [];
      for (const theme of themeKinds) {
        // The user switches theme with the inspector open: VS Code repaints the variables in place.
        await applyTheme(page, theme);
        const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        assert.equal(bg, { dark: 'rgb(31, 31, 31)', light: 'rgb(255, 255, 255)', 'high-contrast': 'rgb(0, 0, 0)' }[theme], `${theme} is painted`);
        for (const { tab, ready } of tabs) {
          await page.click(`vscode-tab-header[data-tab="${tab}"]`);
          await ready(page);
          await page.waitForTimeout(100);
          for (const v of await axeViolations(page)) found.push(`${theme} ${tab}: ${v.id} (${v.impact}) ${v.help} — ${v.targets.join(' ')} — ${v.summary.split('\n').slice(0, 3).join(' ')}`);
          if (tab === 'evidence' || tab === 'graph') found.push(...(await graphicsBelow3(page)).map((p) => `${theme} ${tab}: ${p}`));
        }
        if (theme === 'light') await keepScreenshot(page, 'theme-light-replay');
      }
      assert.deepEqual(found, []);
    } finally {
      await page.close();
    }
  });
});

/**
 * Non-text contrast (WCAG 1.4.11), which axe does not check: the decision pills' borders, the
 * status dots and the graph nodes' strokes against the page background, at least 3:1.
 */
async function graphicsBelow3(page: Page): Promise<string[]> {
  return page.evaluate(graphicsSource) as Promise<string[]>;
}

/** Kept as source text: the TypeScript loader would wrap its inner functions in a helper the page does not have. */
const graphicsSource = `(() => {
  const rgb = (c) => {
    const m = /rgba?\\(([\\d.]+),\\s*([\\d.]+),\\s*([\\d.]+)(?:,\\s*([\\d.]+))?\\)/.exec(c);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : undefined;
  };
  const lum = (c) => {
    const f = (v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const bg = rgb(getComputedStyle(document.body).backgroundColor);
  const ratio = (c) => {
    const mixed = [0, 1, 2].map((i) => c[i] * c[3] + bg[i] * (1 - c[3]));
    const a = lum(mixed), b = lum(bg);
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  };
  const out = [];
  const check = (what, color) => {
    const c = rgb(color);
    if (!c) return;
    const r = ratio(c);
    if (r < 3) out.push(what + ': ' + color + ' is ' + r.toFixed(2) + ':1 against the background');
  };
  for (const pill of document.querySelectorAll('.canopy-code')) if (pill.getClientRects().length > 0) check('pill “' + pill.textContent + '”', getComputedStyle(pill).borderTopColor);
  for (const dot of document.querySelectorAll('.canopy-dot')) if (dot.getClientRects().length > 0) check('status dot', getComputedStyle(dot).borderTopColor);
  for (const rect of document.querySelectorAll('g.canopy-gnode rect')) if (rect.getClientRects().length > 0) check('graph node ' + rect.parentElement.getAttribute('data-node'), getComputedStyle(rect).stroke);
  return [...new Set(out)];
})()`;
