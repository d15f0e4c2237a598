/**
 * Webview tier, the MAGE controller as the pipeline runs it: a real workspace (built-in
 * encoder, default settings: the controller for PDFs of 8 pages or more) indexes a folder with a
 * generated ten-page report, answers a question from it, and the trace — with the controller's
 * run written by the ask pipeline, not attached by the test — is rendered in the real inspector
 * page in headless Chromium. The graph tab shows the run; clicking an action replays the node
 * states up to it, and clicking an opened node selects its region in the evidence tree.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { AskTrace, TraceController } from '../../src/contracts/trace';
import { inspectorRequestHandlers } from '../../src/extension/views/inspectorRequests';
import { PROTOCOL_VERSION, type HostToWebviewMessage } from '../../src/protocol/messages';
import { longReportPdf, longReportQuestion } from '../helpers/longReportPdf';
import { InspectorServer, keepScreenshot, closeBrowser, openBrowser, openInspector, postFromHost, serveHost } from './harness';
import { demoFolder, openWorkspace } from './realTraces';

const hello: HostToWebviewMessage = { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy Evidence Inspector', message: 'No question asked yet.' } } };

describe('inspector graph tab with a pipeline-produced controller run', () => {
  let browser: Browser;
  let server: InspectorServer;
  let folder: string;
  let close: () => Promise<void>;
  let ws: Awaited<ReturnType<typeof openWorkspace>>['ws'];
  let trace: AskTrace;
  let run: TraceController;

  before(async () => {
    folder = demoFolder({ 'reports/annual-2023.pdf': longReportPdf() });
    ({ ws, close } = await openWorkspace(folder));
    trace = (await ws.ask.ask(longReportQuestion, ws.settings, { topK: 4 })).trace;
    const carrier = trace.rounds.flatMap((r) => r.retrieved).find((i) => i.controller);
    assert.ok(carrier, `the pipeline ran the controller: ${trace.rounds[0]!.retrieved.map((i) => i.file).join(', ')}`);
    assert.equal(carrier.file, 'reports/annual-2023.pdf');
    run = carrier.controller!;
    assert.deepEqual(trace.settings.controller?.minPages, 8);
    server = await InspectorServer.start();
    browser = await openBrowser();
  });

  after(async () => {
    await closeBrowser(browser);
    await server?.close();
    await close?.();
    rmSync(folder, { recursive: true, force: true });
  });

  async function inspect(t: AskTrace): Promise<Page> {
    const page = await openInspector(browser, server.inspectorPage());
    await page.setViewportSize({ width: 1100, height: 900 });
    await serveHost(
      page,
      inspectorRequestHandlers({
        currentView: () => ({ title: 'Canopy', message: '' }),
        isIndexedFile: () => true,
        openSource: async () => undefined,
        readFile: async (rel) => new Uint8Array(readFileSync(join(folder, rel))),
        listTraces: () => ws.traces.list(),
        readTrace: (name) => ws.traces.read(name),
        findTrace: async (id) => (id === t.id ? t : undefined),
        replay: (x, settings) => ws.ask.replay(x, settings, ws.settings),
      }),
    );
    await postFromHost(page, hello);
    await postFromHost(page, { kind: 'notify', method: 'inspector/showTrace', params: { trace: t } });
    return page;
  }

  test('draws the run, replays the states up to a clicked action, and a click on an opened node selects its region', async () => {
    const page = await inspect(trace);
    try {
      await page.click('vscode-tab-header[data-tab="graph"]');
      const drawn = await page.$$eval('g.canopy-gnode', (gs) => gs.map((g) => g.getAttribute('data-node')));
      assert.deepEqual(drawn.sort(), run.subgraph.nodes.map((n) => n.id).sort());
      assert.equal(await page.locator('.canopy-step').count(), run.steps.length);
      assert.match((await page.textContent('.canopy-stop')) ?? '', new RegExp(`Stopped: ${run.stop.reason}`));
      const utilities = await page.$$eval('.canopy-step-utility', (xs) => xs.map((x) => x.textContent ?? ''));
      assert.ok(utilities.some((u) => /^u=/.test(u)), 'utility estimates are shown');

      // Click the first OPEN_NODE action: its node is highlighted and opened, later openings are not yet.
      const opens = run.steps.filter((s) => s.action.type === 'OPEN_NODE' && s.valid);
      assert.ok(opens.length > 0, 'the controller opened an element');
      const first = opens[0]!;
      await page.click(`.canopy-step-button[data-step="${first.step}"]`);
      assert.match((await page.textContent('.canopy-scrub-label')) ?? '', new RegExp(`State after step ${first.step + 1} of ${run.steps.length}`));
      const cls = (id: string) => page.getAttribute(`g.canopy-gnode[data-node="${id}"]`, 'class');
      assert.match((await cls(first.action.nodeId!)) ?? '', /state-opened/);
      assert.match((await cls(first.action.nodeId!)) ?? '', /highlight/);
      const later = opens.find((s) => s.step > first.step && s.action.nodeId !== first.action.nodeId);
      if (later) assert.doesNotMatch((await cls(later.action.nodeId!)) ?? '', /state-opened/, 'a later opening is not shown yet');
      const future = await page.$$eval('.canopy-actions-list li', (lis) => lis.map((li) => li.classList.contains('future')));
      assert.equal(future.filter((f) => !f).length, first.step + 1);
      await keepScreenshot(page, 'graph-pipeline-controller');

      // An opened node with a region in the item's tree: its details link selects that region in the evidence tab.
      const opened = run.subgraph.nodes.find((n) => n.state === 'opened' && n.regionId);
      assert.ok(opened);
      await page.click(`g.canopy-gnode[data-node="${opened.id}"]`);
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'graph', 'a node clicked keeps the graph tab');
      await page.click('.canopy-gnode-detail .canopy-gnode-region');
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'evidence');
      const row = page.locator(`vscode-tree-item[data-node-id="${opened.regionId}"]`);
      assert.equal(await row.getAttribute('selected'), '');
    } finally {
      await page.close();
    }
  });
});
