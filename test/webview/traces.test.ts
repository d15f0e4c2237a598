/**
 * Webview tier, real traces: answers produced by the real pipeline (the core services over the
 * demo corpus plus a generated PDF, built-in encoder) rendered in the real inspector page in
 * headless Chromium. The stub host answers requests through the real HostEndpoint and the real
 * request handlers (views/inspectorRequests.ts) over the real workspace: opening sources, PDF
 * bytes, the trace history, replay. Clicks through the tree, the timeline, the graph, the PDF
 * view, compare and replay; screenshots go to test-results/webview/.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { AskTrace, TraceNode } from '../../src/contracts/trace';
import { annotationsPath, AnnotationStore, type Annotation } from '../../src/core/annotate/store';
import { PROTOCOL_VERSION, type HostToWebviewMessage } from '../../src/protocol/messages';
import { validateWebviewToHost } from '../../src/protocol/validate';
import { InspectorServer, keepScreenshot, closeBrowser, openBrowser, openInspector, postFromHost, stubRecord } from './harness';
import { buildRealTraces, serveRealHost, type RealTraces } from './realTraces';

const hello: HostToWebviewMessage = { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy Evidence Inspector', message: 'No question asked yet.' } } };
const show = (trace: AskTrace): HostToWebviewMessage => ({ kind: 'notify', method: 'inspector/showTrace', params: { trace } });

function walk(n: TraceNode, out: TraceNode[] = []): TraceNode[] {
  out.push(n);
  n.children.forEach((c) => walk(c, out));
  return out;
}

describe('inspector with real traces', () => {
  let browser: Browser;
  let server: InspectorServer;
  let real: RealTraces;
  const opened: string[] = [];

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

  /** A page showing `trace`, its host served by the real request handlers over the real workspace. */
  async function inspect(trace: AskTrace, viewport = { width: 1100, height: 900 }): Promise<{ page: Page; requests: string[]; network: string[] }> {
    const page = await openInspector(browser, server.inspectorPage());
    await page.setViewportSize(viewport);
    const network: string[] = [];
    page.on('request', (r) => network.push(r.url()));
    const requests = await serveRealHost(page, real, opened);
    await postFromHost(page, hello);
    await postFromHost(page, show(trace));
    return { page, requests, network };
  }

  const row = (page: Page, nodeId: string) => page.locator(`vscode-tree-item[data-node-id="${nodeId}"]`);
  const clickRow = (page: Page, nodeId: string) => row(page, nodeId).locator(':scope > .canopy-node-label').click();

  test('question, answer, mode, citation chips and token totals come from the trace; a chip opens the cited range', async () => {
    const t = real.demo;
    const { page, requests } = await inspect(t);
    try {
      assert.equal(await page.getAttribute('#app', 'data-state'), 'trace');
      assert.equal(await page.textContent('#app h1'), t.question);
      assert.equal(await page.textContent('.canopy-answer-text'), t.answer.text);
      assert.equal(await page.textContent('.canopy-mode'), 'Extractive reader — no LLM configured');
      assert.equal((await page.textContent('.canopy-mode-badge'))?.trim(), 'Extractive');
      const chips = await page.$$eval('.canopy-citation', (els) => els.map((e) => e.textContent));
      assert.deepEqual(
        chips,
        // Written out here rather than imported from the webview, so a wrong label in the page fails.
        t.answer.citations.map((c) => `[${c.marker}] ${c.anchor.page !== undefined ? `${c.file} p.${c.anchor.page + 1}` : `${c.file}:${c.anchor.startLine}`}`),
      );
      const totals = (await page.textContent('.canopy-totals')) ?? '';
      assert.ok(totals.includes(`${t.totals.evidenceTokens.toLocaleString('en-US')} of ${t.totals.uncompressedTokens.toLocaleString('en-US')} evidence tokens`), totals);
      assert.match(totals, new RegExp(`${t.rounds.length} round\\(s\\), stop: ${t.stop.reason}`));
      const before = opened.length;
      await page.click('.canopy-citation');
      await expectOpened(before);
      const c = t.answer.citations[0]!;
      assert.equal(opened.at(-1), `${c.file}:${c.anchor.startLine}:${c.anchor.startColumn}-${c.anchor.endLine}:${c.anchor.endColumn}`);
      assert.ok(requests.includes(`source/open ${c.file}`));
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
      await keepScreenshot(page, 'inspector-answer');
    } finally {
      await page.close();
    }
  });

  async function expectOpened(before: number): Promise<void> {
    for (let i = 0; i < 100 && opened.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(opened.length > before, 'the host was asked to open a source');
  }

  test('the evidence tree shows every item with scores, decisions and rules; clicking a kept node selects it, details it and opens its source', async () => {
    const t = real.demo;
    const { page } = await inspect(t);
    try {
      const items = t.rounds.flatMap((r) => r.retrieved.filter((i) => !i.repeated && i.tree));
      const roots = await page.$$eval('vscode-tree > vscode-tree-item', (els) => els.map((e) => (e as HTMLElement).dataset.nodeId));
      assert.deepEqual(roots, items.map((i) => i.tree!.id));
      // The cited node is kept, its ancestors are opened so it is visible (expand-to-kept on the first paint).
      const cited = t.answer.citations[0]!;
      const item = items.find((i) => i.itemId === cited.itemId)!;
      const keptId = item.keptNodeIds.find((id) => walk(item.tree!).some((n) => n.id === id && n.anchor.startLine !== undefined))!;
      const kept = walk(item.tree!).find((n) => n.id === keptId)!;
      await row(page, keptId).waitFor({ state: 'visible' });
      assert.match((await row(page, keptId).getAttribute('class')) ?? '', /status-kept/);
      // The fixed columns: score, score − parent, the decision code.
      const cols = async (cls: string) => ((await row(page, keptId).locator(`:scope > .canopy-cols > .${cls}`).textContent()) ?? '').trim();
      assert.equal(await cols('canopy-col-score'), kept.score!.toFixed(3));
      if (kept.parentScore !== undefined) {
        // Signed, and no sign on a difference that rounds to zero.
        const d = Number((kept.score! - kept.parentScore).toFixed(3));
        assert.equal(await cols('canopy-col-delta'), d === 0 ? '0.000' : d > 0 ? `+${d.toFixed(3)}` : d.toFixed(3));
      }
      assert.match(await cols('canopy-col-code'), kept.rule === 'glimpse' ? /^glimpse$/ : /^(kept|whole)$/);
      // A dropped node, when the trace has one, is styled as dropped.
      const dropped = items.flatMap((i) => walk(i.tree!)).find((n) => n.decision === 'dropped-sibling');
      if (dropped && (await row(page, dropped.id).count()) > 0) assert.match((await row(page, dropped.id).getAttribute('class')) ?? '', /status-dropped/);

      const before = opened.length;
      await clickRow(page, keptId);
      assert.equal(await row(page, keptId).getAttribute('selected'), '');
      const detail = (await page.textContent('.canopy-detail')) ?? '';
      assert.ok(detail.includes(kept.rule), detail);
      assert.ok(detail.includes(kept.score!.toFixed(4)), detail);
      assert.ok(detail.includes(kept.id), detail);
      await expectOpened(before);
      assert.equal(opened.at(-1), `${kept.anchor.file}:${kept.anchor.startLine}:${kept.anchor.startColumn}-${kept.anchor.endLine}:${kept.anchor.endColumn}`);
      await keepScreenshot(page, 'evidence-tree');
    } finally {
      await page.close();
    }
  });

  test('a node scored with hybrid scores shows its components in its details: dense · lexical · fused', async () => {
    const t = real.hybrid;
    const { page } = await inspect(t);
    try {
      const items = t.rounds.flatMap((r) => r.retrieved.filter((i) => !i.repeated && i.tree));
      const node = items.flatMap((i) => walk(i.tree!)).find((n) => n.components && n.components.lexical > 0 && isKept(items, n.id))!;
      assert.ok(node, 'a kept node with lexical evidence');
      await row(page, node.id).waitFor({ state: 'visible' });
      await clickRow(page, node.id);
      const detail = (await page.textContent('.canopy-detail')) ?? '';
      assert.ok(detail.includes(`dense ${node.components!.dense.toFixed(2)} · lexical ${node.components!.lexical.toFixed(2)} · fused ${node.score!.toFixed(2)}`), detail);
    } finally {
      await page.close();
    }
  });

  test('filters, search, modality and expand-to-kept; the tree is keyboard-navigable', async () => {
    const t = real.demo;
    const { page } = await inspect(t);
    try {
      const statuses = () => page.$$eval('vscode-tree-item.canopy-match', (els) => els.map((e) => e.className.match(/status-([a-z-]+)/)![1]));
      // Only dropped regions: every match is dropped or inside a dropped region.
      await page.click('vscode-checkbox[data-filter="kept"]');
      await page.click('vscode-checkbox[data-filter="other"]');
      const dropped = await statuses();
      // Dropped below their parent, or inside an item the rank gate dropped (the default's gate).
      const expected = t.rounds.flatMap((r) => r.retrieved.filter((i) => i.tree && !i.repeated)).flatMap((i) => walk(i.tree!)).filter((n) => n.decision === 'dropped-sibling' || n.rule === 'ancestor-dropped').length;
      assert.ok(dropped.length >= expected && expected > 0, `${dropped.length} dropped rows for ${expected} dropped decisions`);
      assert.ok(dropped.every((s) => s === 'dropped' || s === 'inside-dropped'), dropped.join(','));
      await page.click('vscode-checkbox[data-filter="kept"]');
      await page.click('vscode-checkbox[data-filter="other"]');
      // Search: matches contain the text.
      await page.fill('vscode-textfield.canopy-search >> input', 'ash dieback');
      await page.waitForFunction(() => document.querySelectorAll('vscode-tree-item.canopy-match').length > 0);
      const texts = await page.$$eval('vscode-tree-item.canopy-match', (els) => els.map((e) => e.querySelector(':scope > .canopy-node-label')!.textContent ?? ''));
      assert.ok(texts.length > 0);
      assert.match((await page.textContent('.canopy-tree-summary')) ?? '', /matching region/);
      // Expand to kept clears the search and opens the kept regions.
      await page.click('vscode-button.canopy-expand-kept');
      assert.equal(await page.$$eval('vscode-tree-item.canopy-match', (e) => e.length), 0);
      for (const i of t.rounds[0]!.retrieved.filter((x) => x.tree)) for (const id of i.keptNodeIds) assert.equal(await row(page, id).isVisible(), true, id);
      // Keyboard: focus the first item, move down, select with Enter.
      const first = t.rounds[0]!.retrieved[0]!.tree!.id;
      await page.click('vscode-button.canopy-collapse');
      await row(page, first).focus();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      const selected = await page.$eval('vscode-tree-item[selected]', (e) => (e as HTMLElement).dataset.nodeId);
      assert.equal(selected, t.rounds[0]!.retrieved[1]!.tree!.id, 'ArrowDown + Enter selected the next item');
      assert.equal(await row(page, selected!).getAttribute('open'), '', 'Enter opened it');
      // Its children were created when it opened (the tree is built lazily), and ArrowRight moves into them.
      const firstChild = await row(page, selected!).evaluate((r) => (r.querySelector(':scope > vscode-tree-item') as HTMLElement | null)?.dataset.nodeId);
      assert.ok(firstChild, 'opening created the children');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Enter');
      assert.equal(await page.$eval('vscode-tree-item[selected]', (e) => (e as HTMLElement).dataset.nodeId), firstChild);
      await keepScreenshot(page, 'evidence-keyboard');
    } finally {
      await page.close();
    }
  });

  test('the round timeline shows queries, score components, critic verdicts and follow-ups; an item opens its hierarchy', async () => {
    // One item marked as taken in for a source the question names (retrieve/hybrid.ts), as a trace records it.
    const t = structuredClone(real.rounds);
    assert.ok(t.rounds.length >= 2);
    t.rounds[0]!.retrieved.at(-1)!.scores.namedSource = true;
    // Round 1's follow-up looks for a named thing, whose item round 2 took first (retrieve/hybrid.ts `titled`).
    t.rounds[0]!.critic!.followUpNames = ['Oak Hall', 'Ash Lane'];
    t.rounds[1]!.retrieved[0]!.scores.titleMatch = true;
    const { page } = await inspect(t);
    try {
      await page.click('vscode-tab-header[data-tab="rounds"]');
      const rounds = page.locator('.canopy-round');
      assert.equal(await rounds.count(), t.rounds.length);
      for (const [i, r] of t.rounds.entries()) {
        const card = rounds.nth(i);
        assert.equal(await card.locator('.canopy-query q').textContent(), r.query);
        const cells = await card.locator('table.canopy-retrieved tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children, (td) => td.textContent ?? '')));
        assert.equal(cells.length, r.retrieved.length);
        // The flat BM25 column is there when the fusion used that list (the built-in profile does).
        const flat = r.retrieved.some((it) => it.scores.bm25Flat !== undefined) ? 1 : 0;
        const headers = await card.locator('table.canopy-retrieved thead th').allTextContents();
        assert.equal(headers.includes('BM25 flat'), flat === 1, JSON.stringify(headers));
        for (const [j, it] of r.retrieved.entries()) {
          assert.ok(cells[j]![1]!.startsWith(it.title));
          assert.equal(cells[j]![1]!.includes('named by the question'), it.scores.namedSource === true, cells[j]![1]);
          assert.equal(cells[j]![1]!.includes('named by the follow-up'), it.scores.titleMatch === true, cells[j]![1]);
          if (it.scores.dense !== undefined) assert.ok(cells[j]![2]!.startsWith(it.scores.dense.toFixed(3)), cells[j]![2]);
          if (it.scores.bm25 !== undefined) assert.ok(cells[j]![3]!.startsWith(it.scores.bm25.toFixed(3)), cells[j]![3]);
          if (it.scores.bm25Flat !== undefined) assert.ok(cells[j]![4]!.startsWith(it.scores.bm25Flat.toFixed(3)), cells[j]![4]);
          assert.equal(cells[j]![4 + flat], it.scores.fused.toFixed(4));
          assert.equal(cells[j]![6 + flat], it.repeated ? 'already held' : r.addedItemIds.includes(it.itemId) ? 'new' : '—');
        }
        if (r.critic) {
          const critic = (await card.locator('.canopy-critic').textContent()) ?? '';
          assert.ok(critic.includes(r.critic.sufficient ? 'sufficient' : 'not sufficient'));
          for (const m of r.critic.missing) assert.ok(critic.includes(m), m);
          if (r.critic.followUpQuery) assert.equal(await card.locator('.canopy-followup q').textContent(), r.critic.followUpQuery);
          const names = card.locator('.canopy-followup-names');
          if (r.critic.followUpQuery && r.critic.followUpNames) assert.equal(await names.textContent(), `Looks for, by title: ${r.critic.followUpNames.join(' · ')}`);
          else assert.equal(await names.count(), 0);
        }
      }
      // The follow-up of round 1 is the query of round 2.
      assert.equal(t.rounds[0]!.critic?.followUpQuery, t.rounds[1]!.query);
      await keepScreenshot(page, 'rounds-timeline');
      const added = t.rounds[1]!.addedItemIds[0]!;
      await page.click(`.canopy-round[data-round="2"] button[data-item="${added}"]`);
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'evidence');
      const root = t.rounds[1]!.retrieved.find((i) => i.itemId === added)!.tree!.id;
      assert.equal(await row(page, root).getAttribute('selected'), '');
    } finally {
      await page.close();
    }
  });

  test('the graph tab draws the controller run: nodes by state, typed edges, actions, budget meters; steps and nodes click through', async () => {
    const t = real.pdf;
    const run = t.rounds[0]!.retrieved.find((i) => i.controller)!.controller!;
    const { page } = await inspect(t);
    try {
      await page.click('vscode-tab-header[data-tab="graph"]');
      const nodes = await page.$$eval('g.canopy-gnode', (gs) => gs.map((g) => ({ id: g.getAttribute('data-node'), cls: g.getAttribute('class') })));
      assert.deepEqual(nodes.map((n) => n.id).sort(), run.subgraph.nodes.map((n) => n.id).sort());
      for (const n of run.subgraph.nodes) assert.match(nodes.find((x) => x.id === n.id)!.cls!, new RegExp(`state-${n.state}`));
      assert.equal(await page.locator('path.canopy-edge').count(), run.subgraph.edges.filter((e) => e.from !== e.to).length);
      assert.equal(await page.locator('.canopy-step').count(), run.steps.length);
      const meter = page.locator('.canopy-meter[aria-label="Opened nodes"]');
      assert.equal(await meter.getAttribute('aria-valuemax'), String(run.budgets.maxOpenedNodes));
      assert.equal(await meter.getAttribute('aria-valuenow'), String(run.budgets.maxOpenedNodes - run.steps.at(-1)!.budgetLeft.openedNodes));
      await keepScreenshot(page, 'graph');
      // Step 1: only the first entry page is active.
      await page.click('.canopy-step-button[data-step="0"]');
      const target = run.steps[0]!.action.pageId!;
      assert.match((await page.getAttribute(`g.canopy-gnode[data-node="${target}"]`, 'class')) ?? '', /state-active.*highlight|highlight.*state-active/);
      const opened = run.subgraph.nodes.find((n) => n.state === 'opened');
      if (opened) assert.match((await page.getAttribute(`g.canopy-gnode[data-node="${opened.id}"]`, 'class')) ?? '', /state-inactive/, 'not yet opened after step 1');
      assert.match((await page.textContent('.canopy-scrub-label')) ?? '', /State after step 1 of/);
      // Clicking an opened element shows its details here (the tab stays); its link selects its region in the evidence tree.
      assert.ok(opened?.regionId, 'the controller opened an element');
      await page.click(`g.canopy-gnode[data-node="${opened.id}"]`);
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'graph');
      assert.equal(await page.getAttribute('.canopy-gnode-detail', 'data-node'), opened.id);
      await page.click('.canopy-gnode-detail .canopy-gnode-region');
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'evidence');
      assert.equal(await row(page, opened.regionId).getAttribute('selected'), '');
    } finally {
      await page.close();
    }
  });

  test('graph and topics show their empty states when the trace holds no controller run or topics', async () => {
    const { page } = await inspect(real.demo);
    try {
      await page.click('vscode-tab-header[data-tab="graph"]');
      assert.match((await page.textContent('.canopy-panel-graph .canopy-empty')) ?? '', /No controller run in this trace/);
      await page.click('vscode-tab-header[data-tab="topics"]');
      assert.match((await page.textContent('.canopy-panel-topics .canopy-empty')) ?? '', /No topic compass in this trace/);
    } finally {
      await page.close();
    }
  });

  test('the PDF view renders the page with pdf.js and outlines kept and dropped regions; a box selects its node', async () => {
    const t = real.pdf;
    const { page, requests, network } = await inspect(t);
    try {
      const cited = t.answer.citations.find((c) => c.file.endsWith('.pdf'))!;
      assert.ok(cited, 'the answer cites the PDF');
      await page.click('.canopy-citation');
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'pdf');
      await page.waitForSelector(`.canopy-pdf-view[data-rendered-page="${cited.anchor.page}"] canvas`, { timeout: 30_000 });
      assert.ok(requests.includes(`pdf/get ${cited.file}`));
      // The page is painted (dark text pixels on the canvas).
      const inked = await page.$eval('canvas.canopy-pdf-canvas', (c) => {
        const ctx = (c as HTMLCanvasElement).getContext('2d')!;
        const d = ctx.getImageData(0, 0, (c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height).data;
        let dark = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i]! < 100 && d[i + 3]! > 0) dark++;
        return dark;
      });
      assert.ok(inked > 500, `${inked} dark pixels`);
      const boxes = await page.$$eval('.canopy-box', (bs) => bs.map((b) => ({ id: (b as HTMLElement).dataset.nodeId, shown: (b as HTMLElement).dataset.shown, w: (b as HTMLElement).offsetWidth, h: (b as HTMLElement).offsetHeight, x: (b as HTMLElement).offsetLeft, y: (b as HTMLElement).offsetTop })));
      assert.ok(boxes.some((b) => b.id === cited.nodeId && b.shown === 'selected'), 'the cited region is outlined');
      const canvas = await page.$eval('canvas.canopy-pdf-canvas', (c) => ({ w: (c as HTMLElement).offsetWidth, h: (c as HTMLElement).offsetHeight }));
      for (const b of boxes) assert.ok(b.x >= 0 && b.y >= 0 && b.x + b.w <= canvas.w + 1 && b.y + b.h <= canvas.h + 1 && b.w > 0 && b.h > 0, JSON.stringify(b));
      // The cited sentence's box is where its anchor says: y up in PDF space, down on screen.
      const bb = cited.anchor.bbox!;
      const scale = canvas.w / 612;
      const box = boxes.find((b) => b.id === cited.nodeId)!;
      assert.ok(Math.abs(box.x - bb[0] * scale) < 3 && Math.abs(box.y - (792 - bb[3]) * scale) < 3, `${JSON.stringify(box)} vs ${JSON.stringify(bb)} at ${scale}`);
      await keepScreenshot(page, 'pdf-view');
      const kept = boxes.find((b) => b.shown === 'kept');
      assert.ok(kept, 'a kept region is outlined on the cited page');
      await page.click(`.canopy-box[data-shown="kept"][data-node-id="${kept.id}"]`, { position: { x: 2, y: 2 } });
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'evidence');
      assert.equal(await row(page, kept.id!).getAttribute('selected'), '');
      assert.deepEqual(network.filter((u) => new URL(u).origin !== server.origin), [], 'nothing left the page');
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
    } finally {
      await page.close();
    }
  });

  /** The `gold/mark` requests the page posted, each checked by the host's own validation. */
  async function goldRequests(page: Page): Promise<Array<{ id: number; params: { traceId: string; nodeId: string; bbox?: number[] } }>> {
    const { posted } = await stubRecord(page);
    const marks = posted.filter((m) => (m as { method?: string }).method === 'gold/mark') as Array<{ id: number; params: { traceId: string; nodeId: string; bbox?: number[] } }>;
    for (const m of marks) assert.equal(validateWebviewToHost(m).ok, true, JSON.stringify(m));
    return marks;
  }

  async function storedGold(): Promise<Annotation[]> {
    return (await new AnnotationStore(annotationsPath(real.ws.root)).read()).annotations;
  }

  test('"Mark as gold evidence" in a node\'s details posts a valid gold/mark for that node; the host stores its span for the question', async () => {
    const t = real.demo;
    const { page, requests } = await inspect(t);
    try {
      // The first citation's region, a text span, selected in the tree through its "Show region" link.
      const cited = t.answer.citations[0]!;
      const item = t.rounds.flatMap((r) => r.retrieved).find((i) => i.itemId === cited.itemId && i.tree && !i.repeated)!;
      const kept = walk(item.tree!).find((n) => n.id === cited.nodeId)!;
      assert.ok(kept && kept.anchor.charStart !== undefined && kept.anchor.charEnd !== undefined, 'the cited region is a text span');
      await page.locator('.canopy-citation-node').first().click();
      assert.equal(await row(page, kept.id).getAttribute('selected'), '');
      const mark = page.locator('.canopy-detail .canopy-mark-gold');
      assert.equal(await mark.textContent(), 'Mark as gold evidence');
      assert.equal(await mark.getAttribute('title'), `Gold evidence for “${t.question}”`);
      await mark.click();
      await page.waitForFunction(() => document.querySelector('.canopy-detail .canopy-mark-gold')?.textContent === 'Marked as gold evidence ✓', undefined, { timeout: 10_000 });
      assert.equal(await mark.isDisabled(), true, 'one mark per click');
      const marks = await goldRequests(page);
      assert.deepEqual(marks.map((m) => m.params), [{ traceId: t.id, nodeId: kept.id }]);
      assert.ok(requests.includes(`gold/mark ${t.id}`));
      // What the host stored: the node's span, re-read from the file, for the trace's question.
      const stored = (await storedGold()).filter((a) => a.source === 'inspector' && a.anchor.file === kept.anchor.file && a.anchor.charStart === kept.anchor.charStart);
      assert.equal(stored.length, 1);
      const a = stored[0]!;
      assert.equal(a.question, t.question);
      assert.equal(a.anchor.charEnd, kept.anchor.charEnd);
      assert.equal(a.anchor.startLine, kept.anchor.startLine);
      const source = readFileSync(join(real.ws.root, kept.anchor.file), 'utf8');
      assert.equal(a.text, source.slice(kept.anchor.charStart, kept.anchor.charEnd));
      assert.equal(a.author, 'webview-test');
      // Marking it again (details re-opened from the citation) says it is already gold and stores nothing new.
      await page.locator('.canopy-citation-node').first().click();
      await page.waitForFunction(() => document.querySelector('.canopy-detail .canopy-mark-gold')?.textContent === 'Mark as gold evidence', undefined, { timeout: 10_000 });
      await page.locator('.canopy-detail .canopy-mark-gold').click();
      await page.waitForFunction(() => document.querySelector('.canopy-detail .canopy-mark-gold')?.textContent === 'Already gold evidence', undefined, { timeout: 10_000 });
      assert.equal((await storedGold()).filter((x) => x.id === a.id).length, 1);
      assert.equal((await goldRequests(page)).length, 2);
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
    } finally {
      await page.close();
    }
  });

  test('"Mark a box as gold" on the PDF page turns a drag into a valid gold/mark with the box in PDF points; the host stores it on that page', async () => {
    const t = real.pdf;
    const { page } = await inspect(t);
    try {
      const cited = t.answer.citations.find((c) => c.file.endsWith('.pdf'))!;
      await page.click('.canopy-citation');
      await page.waitForSelector(`.canopy-pdf-view[data-rendered-page="${cited.anchor.page}"] canvas`, { timeout: 30_000 });
      const toggle = page.locator('.canopy-mark-box');
      assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
      await toggle.click();
      const marker = page.locator('.canopy-pdf-marker');
      await marker.waitFor({ state: 'visible', timeout: 30_000 });
      assert.equal(await page.locator('.canopy-mark-box').getAttribute('aria-pressed'), 'true');
      // Drag over the cited sentence's box: from its top-left to its bottom-right corner on screen.
      const canvas = await page.$eval('canvas.canopy-pdf-canvas', (c) => (c as HTMLElement).offsetWidth);
      const scale = canvas / 612;
      const bb = cited.anchor.bbox!;
      const layer = (await marker.boundingBox())!;
      const from = { x: layer.x + bb[0] * scale, y: layer.y + (792 - bb[3]) * scale };
      const to = { x: layer.x + bb[2] * scale, y: layer.y + (792 - bb[1]) * scale };
      await page.mouse.move(from.x, from.y);
      await page.mouse.down();
      await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 3 });
      await page.mouse.move(to.x, to.y, { steps: 3 });
      await page.mouse.up();
      await page.waitForFunction(() => /Marked a box on page/.test(document.querySelector('.canopy-pdf-status')?.textContent ?? ''), undefined, { timeout: 10_000 });
      assert.equal(await page.textContent('.canopy-pdf-status'), `Marked a box on page ${cited.anchor.page! + 1} as gold evidence for “${t.question}”.`);
      const marks = await goldRequests(page);
      assert.equal(marks.length, 1);
      const { traceId, nodeId, bbox } = marks[0]!.params;
      assert.equal(traceId, t.id);
      // Sent with a node of this trace on the marked page (the host checks the page belongs to the answer).
      const pdfItem = t.rounds.flatMap((r) => r.retrieved).find((i) => i.file === cited.file && i.tree)!;
      const node = walk(pdfItem.tree!).find((n) => n.id === nodeId);
      assert.ok(node, `${nodeId} is a node of the PDF item`);
      assert.equal(node.anchor.page, cited.anchor.page);
      // The box is the drag in PDF points (y up), within a point of the sentence's box.
      assert.ok(bbox && bbox.length === 4);
      for (let i = 0; i < 4; i++) assert.ok(Math.abs(bbox[i]! - bb[i]!) < 1.5 / scale + 0.5, `bbox ${JSON.stringify(bbox)} vs ${JSON.stringify(bb)}`);
      const stored = (await storedGold()).filter((a) => a.source === 'pdf');
      assert.equal(stored.length, 1);
      assert.deepEqual(stored[0]!.anchor, { file: cited.file, page: cited.anchor.page, bbox });
      assert.equal(stored[0]!.question, t.question);
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
      await keepScreenshot(page, 'pdf-gold-box');
    } finally {
      await page.close();
    }
  });

  test('compare picks a saved answer and shows the kept-set diff with token and score deltas', async () => {
    const { page } = await inspect(real.demo);
    try {
      await page.click('vscode-tab-header[data-tab="compare"]');
      await page.waitForSelector('.canopy-compare-picker');
      const other = real.saved.find((s) => s.id === real.replay.id)!;
      await page.click(`.canopy-compare-pick[data-name="${other.name}"]`);
      await page.waitForSelector(`.canopy-compare-result[data-compared="${real.replay.id}"]`);
      const heads = await page.$$eval('.canopy-diff h4', (hs) => hs.map((h) => h.textContent));
      assert.equal(heads.length, 3);
      const totals = await page.$$eval('.canopy-compare-totals tbody tr', (trs) => trs.map((tr) => Array.from(tr.children, (c) => c.textContent)));
      // A is the original (shown), B its replay; B − A with separators and its sign.
      assert.deepEqual(totals[0], ['Evidence tokens', real.demo.totals.evidenceTokens.toLocaleString('en-US'), real.replay.totals.evidenceTokens.toLocaleString('en-US'), (() => {
        const d = real.replay.totals.evidenceTokens - real.demo.totals.evidenceTokens;
        return d > 0 ? `+${d.toLocaleString('en-US')}` : d.toLocaleString('en-US');
      })()]);
      const settings = await page.$$eval('.canopy-compare-settings tbody tr', (trs) => trs.map((tr) => Array.from(tr.children, (c) => c.textContent)));
      assert.deepEqual(settings.find((s) => s[0] === 'B'), ['B', '2', '3']);
      await keepScreenshot(page, 'compare');
    } finally {
      await page.close();
    }
  });

  test('replay runs the real replay from cached scores, shows the replayed trace and compares it with the original', async () => {
    const { page, requests } = await inspect(real.demo);
    try {
      await page.click('vscode-tab-header[data-tab="replay"]');
      await page.evaluate(() => {
        const c = document.querySelector('vscode-single-select.canopy-replay-compressor') as HTMLElement & { value: string };
        c.value = 'none';
      });
      await page.click('vscode-button.canopy-replay-run');
      await page.waitForSelector('.canopy-replay-banner', { timeout: 30_000 });
      assert.ok(requests.includes(`trace/replay ${real.demo.id}`));
      const banner = (await page.textContent('.canopy-replay-banner')) ?? '';
      assert.match(banner, new RegExp(`of ${real.demo.id} with compressor = \\{"name":"none"\\}`));
      // No compression: every kept region is a whole item.
      const totals = (await page.textContent('.canopy-totals')) ?? '';
      assert.match(totals, /\(0% fewer\)/);
      await page.click('.canopy-compare-original');
      await page.waitForSelector(`.canopy-compare-result[data-compared="${real.demo.id}"]`);
      await keepScreenshot(page, 'replay-compare');
    } finally {
      await page.close();
    }
  });

  test('after a reload the same tab, node and filters come back', async () => {
    const t = real.demo;
    const { page } = await inspect(t);
    let state: unknown;
    const keptId = t.rounds[0]!.retrieved.find((i) => i.tree)!.keptNodeIds[0]!;
    try {
      await clickRow(page, keptId);
      await page.click('vscode-checkbox[data-filter="dropped"]');
      state = (await stubRecord(page)).stateWrites.at(-1);
    } finally {
      await page.close();
    }
    assert.equal((state as { ui: { nodeId: string } }).ui.nodeId, keptId);
    const again = await openInspector(browser, server.inspectorPage({ initialState: state }));
    try {
      await postFromHost(again, hello);
      await postFromHost(again, show(t));
      assert.equal(await again.$eval('vscode-checkbox[data-filter="dropped"]', (c) => (c as HTMLElement & { checked: boolean }).checked), false);
      assert.equal(await again.getAttribute(`vscode-tree-item[data-node-id="${keptId}"]`, 'selected'), '');
      assert.match((await again.textContent('.canopy-detail')) ?? '', new RegExp(keptId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    } finally {
      await again.close();
    }
  });

  test('a trace whose tree is malformed is refused whole, with an alert', async () => {
    const bad = structuredClone(real.demo) as unknown as { rounds: Array<{ retrieved: Array<{ tree: { children: unknown } }> }> };
    (bad.rounds[0]!.retrieved[0]!.tree.children as unknown[]).push({ id: 5, children: 'no' });
    const page = await openInspector(browser, server.inspectorPage());
    try {
      await postFromHost(page, hello);
      await postFromHost(page, { kind: 'notify', method: 'inspector/showTrace', params: { trace: bad } });
      assert.equal(await page.getAttribute('#app', 'data-state'), 'ready');
      assert.match((await page.textContent('.canopy-error')) ?? '', /does not understand.*children\[\d+\]\.id must be a string/);
    } finally {
      await page.close();
    }
  });
});

/** Whether a node is one of the kept regions of its item (kept nodes are visible after expand-to-kept). */
function isKept(items: Array<{ keptNodeIds: string[] }>, id: string): boolean {
  return items.some((i) => i.keptNodeIds.includes(id));
}
