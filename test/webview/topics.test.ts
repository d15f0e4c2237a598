/**
 * Webview tier, topic compass: a trace produced by the real pipeline with canopy.topics.enabled
 * (the core services over the demo corpus, built-in encoder, topics fitted by the indexer, a scorer
 * trained at indexing, the compass retriever) rendered in the real inspector page in headless
 * Chromium. The Topics tab shows the round's selected topics with their labels and weights and
 * the per-chunk lift, in the trace's numbers; a chunk name selects its region in the evidence.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { AskTrace } from '../../src/contracts/trace';
import { inspectorRequestHandlers } from '../../src/extension/views/inspectorRequests';
import { PROTOCOL_VERSION, type HostToWebviewMessage } from '../../src/protocol/messages';
import { openServices, type TestServices } from '../helpers/services';
import { InspectorServer, keepScreenshot, closeBrowser, openBrowser, openInspector, postFromHost, repoRoot, serveHost } from './harness';
import { demoQuestion } from './realTraces';

const hello: HostToWebviewMessage = { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy Evidence Inspector', message: '' } } };

describe('inspector: the topic compass of a real trace', () => {
  let browser: Browser;
  let server: InspectorServer;
  let ws: TestServices;
  let indexDir: string;
  let trace: AskTrace;

  before(async () => {
    indexDir = mkdtempSync(join(tmpdir(), 'canopy-wv-topics-'));
    ws = openServices({ root: join(repoRoot, 'test', 'fixtures', 'demo'), indexDir, settings: { topicsEnabled: true } });
    await ws.index.index(ws.settings);
    trace = (await ws.ask.ask(demoQuestion, ws.settings, { critic: 'none' })).trace;
    server = await InspectorServer.start();
    browser = await openBrowser();
  });

  after(async () => {
    await closeBrowser(browser);
    await server?.close();
    await ws?.close();
    rmSync(indexDir, { recursive: true, force: true });
  });

  test('the Topics tab renders the selected topics, weights and per-chunk lift of the trace; a chunk opens its region', async () => {
    const topics = trace.rounds[0]!.topics;
    assert.ok(topics, 'the pipeline recorded the compass');
    const page = await openInspector(browser, server.inspectorPage());
    await page.setViewportSize({ width: 1100, height: 900 });
    try {
      const indexed = new Set(Object.keys((await ws.index.corpus(ws.settings)).manifest.files));
      await serveHost(
        page,
        inspectorRequestHandlers({
          currentView: () => ({ title: 'Canopy', message: '' }),
          isIndexedFile: (rel) => indexed.has(rel),
          openSource: async () => undefined,
          readFile: async (rel) => new Uint8Array(readFileSync(join(ws.root, rel))),
          listTraces: () => ws.traces.list(),
          readTrace: (name) => ws.traces.read(name),
          findTrace: async (id) => (id === trace.id ? trace : undefined),
          replay: (t, settings) => ws.ask.replay(t, settings, ws.settings),
        }),
      );
      await postFromHost(page, hello);
      await postFromHost(page, { kind: 'notify', method: 'inspector/showTrace', params: { trace } });
      await page.click('vscode-tab-header[data-tab="topics"]');
      // Why the compass is on: the setting, as the trace records it.
      assert.equal(trace.settings.retrieval.topicsReason, 'canopy.topics.enabled is on');
      assert.equal(await page.textContent('.canopy-topics-reason'), 'Why: canopy.topics.enabled is on.');
      const heading = (await page.textContent('.canopy-topic-round h3')) ?? '';
      assert.equal(heading, `Round 1: ${topics.selected.length} of ${topics.k} topics selected from ${topics.selectedEntries} bank entries`);
      // Topic rows: heaviest first, "#id label", the weight as the trace has it.
      const rows = await page.$$eval('.canopy-topic-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
      const expected = [...topics.selected].sort((a, b) => b.weight - a.weight);
      assert.equal(rows.length, expected.length);
      rows.forEach((cells, i) => {
        assert.equal(cells[0], `#${expected[i]!.topic} ${expected[i]!.label}`);
        assert.ok(Math.abs(Number.parseFloat(cells[1]!) - expected[i]!.weight) < 0.01, `${cells[1]} vs ${expected[i]!.weight}`);
        assert.equal(cells[2], (expected[i]!.terms ?? []).join(', '));
      });
      // Lift rows: one per re-ranked candidate, lift = with − without, ranks 1-based.
      const lift = await page.$$eval('.canopy-lift-table tbody tr', (trs) => trs.map((tr) => ({ cls: tr.className, cells: [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '') })));
      assert.equal(lift.length, topics.lift.length);
      const top = topics.lift.find((l) => l.rankAfter === 0)!;
      const topTitle = trace.rounds[0]!.retrieved.find((r) => r.itemId === top.itemId)!.title;
      const shown = lift.find((l) => l.cells[0] === topTitle);
      assert.ok(shown, `the top chunk ${topTitle} is listed`);
      assert.equal(shown.cells[4], `${top.rankBefore! + 1} → 1`);
      assert.ok(Math.abs(Number.parseFloat(shown.cells[3]!.replace('−', '-')) - (top.withTopics - top.base)) < 1e-3);
      assert.equal(lift.filter((l) => l.cls.includes('canopy-up')).length, topics.lift.filter((l) => l.withTopics - l.base > 0).length);
      await keepScreenshot(page, 'topics-real-trace');
      // The chunk name selects the item's region in the evidence view.
      await page.locator('.canopy-lift-table button.canopy-link', { hasText: topTitle }).first().click();
      assert.equal(await page.getAttribute('#app', 'data-tab'), 'evidence');
      const tree = trace.rounds[0]!.retrieved.find((r) => r.itemId === top.itemId)!.tree!;
      assert.equal(await page.locator(`vscode-tree-item[data-node-id="${tree.id}"]`).getAttribute('selected'), '');
    } finally {
      await page.close();
    }
  });

  test('with the setting off, a paragraph-sized index keeps the default retrieval and the Topics tab says why', async () => {
    const off = (await ws.ask.ask(demoQuestion, { ...ws.settings, topicsEnabled: false }, { critic: 'none' })).trace;
    assert.equal(off.settings.retrieval.topics, false);
    assert.ok(off.rounds.every((r) => r.topics === undefined));
    const reason = off.settings.retrieval.topicsReason ?? '';
    assert.match(reason, /^off by default: this index's items are paragraph-sized \(\d+(\.\d)? tree nodes per item, coarse from 40\)/);
    const page = await openInspector(browser, server.inspectorPage());
    try {
      const indexed = new Set(Object.keys((await ws.index.corpus(ws.settings)).manifest.files));
      await serveHost(
        page,
        inspectorRequestHandlers({
          currentView: () => ({ title: 'Canopy', message: '' }),
          isIndexedFile: (rel) => indexed.has(rel),
          openSource: async () => undefined,
          readFile: async (rel) => new Uint8Array(readFileSync(join(ws.root, rel))),
          listTraces: () => ws.traces.list(),
          readTrace: (name) => ws.traces.read(name),
          findTrace: async (id) => (id === off.id ? off : undefined),
          replay: (t, settings) => ws.ask.replay(t, settings, ws.settings),
        }),
      );
      await postFromHost(page, hello);
      await postFromHost(page, { kind: 'notify', method: 'inspector/showTrace', params: { trace: off } });
      await page.click('vscode-tab-header[data-tab="topics"]');
      assert.equal(await page.textContent('.canopy-empty .canopy-empty-title'), 'No topic compass in this trace.');
      assert.equal(await page.textContent('.canopy-topics-reason'), `Why: ${reason}.`);
    } finally {
      await page.close();
    }
  });
});
