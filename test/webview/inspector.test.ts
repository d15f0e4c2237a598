/**
 * Webview tier: the real inspector page (renderInspectorHtml + the built bundle and stylesheet,
 * under its nonce CSP) in headless Chromium, talking to a stub host that posts protocol
 * messages the way the extension does. Asserts on the DOM and on what the webview posts back.
 * One browser per file; each test opens a fresh page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { PROTOCOL_VERSION, type HostToWebviewMessage, type PlaceholderView } from '../../src/protocol/messages';
import { InspectorServer, keepScreenshot, closeBrowser, openBrowser, openInspector, postFromHost, stubRecord } from './harness';

const placeholder: PlaceholderView = {
  title: 'Canopy Evidence Inspector',
  message: 'The workspace has not been indexed yet. Run “Canopy: Index Workspace”.',
};

const indexed: PlaceholderView = {
  title: 'Canopy Evidence Inspector',
  message: 'No question asked yet. Answers and the evidence kept or dropped for them will appear here.',
  corpus: { files: 6, root: '/home/dev/papers', byFormat: { txt: 1, markdown: 3, csv: 2 } },
};

const hello = (view: PlaceholderView): HostToWebviewMessage => ({
  kind: 'notify',
  method: 'host/hello',
  params: { protocolVersion: PROTOCOL_VERSION, view },
});

const showView = (view: PlaceholderView): HostToWebviewMessage => ({ kind: 'notify', method: 'inspector/showView', params: { view } });

const readyNotification = { kind: 'notify', method: 'webview/ready', params: { protocolVersion: PROTOCOL_VERSION } };

/** The text of the inspector's visible parts, for comparing "before" and "after". */
async function viewText(page: Page): Promise<{ state: string | undefined; title: string | null; message: string | null; corpus: string | null }> {
  return page.evaluate(() => {
    const app = document.getElementById('app')!;
    return {
      state: app.dataset.state,
      title: app.querySelector('h1')?.textContent ?? null,
      message: app.querySelector('.canopy-message')?.textContent ?? null,
      corpus: app.querySelector('.canopy-corpus')?.textContent ?? null,
    };
  });
}

async function formatRows(page: Page): Promise<string[][]> {
  return page.$$eval('table.canopy-formats tr', (rows) =>
    rows.map((row) => Array.from(row.querySelectorAll('th, td'), (cell) => cell.textContent ?? '')),
  );
}

describe('inspector webview in headless Chromium', () => {
  let browser: Browser;
  let server: InspectorServer;

  before(async () => {
    server = await InspectorServer.start();
    browser = await openBrowser();
  });

  after(async () => {
    await closeBrowser(browser);
    await server?.close();
  });

  test('before the handshake it shows the connecting status and posts webview/ready with the protocol version', async () => {
    const page = await openInspector(browser, server.inspectorPage());
    try {
      assert.equal(await page.getAttribute('#app', 'data-state'), 'connecting');
      assert.equal((await page.textContent('#app .canopy-status'))?.trim(), 'Connecting to Canopy…');
      assert.equal(await page.$('#app h1'), null, 'no view is painted before the host answers');
      const { posted, cspViolations } = await stubRecord(page);
      assert.deepEqual(posted, [readyNotification]);
      assert.deepEqual(cspViolations, [], 'the real page loads its script and stylesheet within its CSP');
    } finally {
      await page.close();
    }
  });

  test("the page's CSP refuses an inline script without the nonce and still runs the bundle", async () => {
    const page = await openInspector(browser, server.inspectorPage({ scriptWithoutNonce: 'window.__pwned = "inline"' }));
    try {
      // Violation reports are events: wait for the one expected before reading them.
      await page.waitForFunction(() => (window as unknown as { __cspViolations: unknown[] }).__cspViolations.length > 0, undefined, { timeout: 5_000 });
      assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), undefined);
      const { posted, cspViolations } = await stubRecord(page);
      assert.deepEqual(posted, [readyNotification]);
      assert.deepEqual(
        cspViolations.map((v) => [v.directive, v.blocked]),
        [['script-src-elem', 'inline']],
      );
    } finally {
      await page.close();
    }
  });

  test('host/hello renders the placeholder view, marks #app ready and saves the view as state', async () => {
    const page = await openInspector(browser, server.inspectorPage());
    try {
      await postFromHost(page, hello(placeholder));
      assert.deepEqual(await viewText(page), { state: 'ready', title: placeholder.title, message: placeholder.message, corpus: null });
      assert.equal(await page.$('#app .canopy-status'), null, 'the connecting status is gone');
      const { posted, stateWrites } = await stubRecord(page);
      assert.deepEqual(posted, [readyNotification], 'the handshake needs no further message from the webview');
      assert.deepEqual(stateWrites, [{ view: placeholder }]);
    } finally {
      await page.close();
    }
  });

  test('inspector/showView with a corpus renders the formats table, styled by the bundled stylesheet', async () => {
    const page = await openInspector(browser, server.inspectorPage());
    try {
      await postFromHost(page, hello(placeholder));
      await postFromHost(page, showView(indexed));
      const text = await viewText(page);
      assert.equal(text.state, 'ready');
      assert.equal(text.message, indexed.message);
      assert.equal(await page.textContent('.canopy-corpus h2'), 'Indexed corpus');
      assert.equal(await page.textContent('.canopy-corpus-root'), '/home/dev/papers');
      assert.equal(await page.textContent('.canopy-corpus-total'), '6 files');
      assert.deepEqual(await formatRows(page), [
        ['Format', 'Files'],
        ['csv', '2'],
        ['markdown', '3'],
        ['txt', '1'],
      ]);
      assert.equal(await page.$eval('table.canopy-formats', (t) => getComputedStyle(t).borderCollapse), 'collapse');
      const { stateWrites, cspViolations } = await stubRecord(page);
      assert.deepEqual(stateWrites.at(-1), { view: indexed });
      assert.deepEqual(cspViolations, []);
      await keepScreenshot(page, 'inspector-corpus');
    } finally {
      await page.close();
    }
  });

  const malformed: [string, unknown][] = [
    ['a view whose title is not a string', { kind: 'notify', method: 'inspector/showView', params: { view: { title: 7, message: 'x' } } }],
    ['an unknown notification', { kind: 'notify', method: 'inspector/explode', params: {} }],
    ['a key outside the protocol', { kind: 'notify', method: 'inspector/showView', params: { view: { ...indexed, html: '<b>x</b>' } } }],
    ['a negative file count', { kind: 'notify', method: 'inspector/showView', params: { view: { ...indexed, corpus: { ...indexed.corpus, files: -1 } } } }],
    ['a message that is not an object', 'inspector/showView'],
    ['a response to a request never sent', { kind: 'response', id: 41, ok: true, result: { opened: true } }],
  ];

  for (const [what, message] of malformed) {
    test(`rejects ${what}: shows an alert, reports webview/error, keeps the view`, async () => {
      const page = await openInspector(browser, server.inspectorPage());
      try {
        await postFromHost(page, hello(indexed));
        const before = await viewText(page);
        const beforeState = (await stubRecord(page)).stateWrites;

        await postFromHost(page, message);

        const alerts = await page.$$eval('#app .canopy-error', (els) => els.map((e) => ({ role: e.getAttribute('role'), text: e.textContent ?? '' })));
        assert.equal(alerts.length, 1);
        assert.equal(alerts[0]!.role, 'alert');
        assert.match(alerts[0]!.text, /does not understand/);
        assert.deepEqual(await viewText(page), before, 'the view is unchanged');
        const { posted, stateWrites } = await stubRecord(page);
        assert.deepEqual(stateWrites, beforeState, 'the saved state is unchanged');
        assert.equal(posted.length, 2);
        const report = posted[1] as { kind: string; method: string; params: { message: string } };
        assert.equal(report.kind, 'notify');
        assert.equal(report.method, 'webview/error');
        assert.match(report.params.message, /^rejected host message: /);
      } finally {
        await page.close();
      }
    });
  }

  test('document text in the view is rendered as text: no script runs, no element is created from it', async () => {
    const page = await openInspector(browser, server.inspectorPage());
    try {
      const hostile: PlaceholderView = {
        title: '<script>window.__pwned = "title"</script>Report',
        message: '<img src="x" onerror="window.__pwned = \'message\'">',
        corpus: {
          files: 1,
          root: '/tmp/<iframe srcdoc="<script>parent.__pwned=1</script>">',
          byFormat: { '<img src=y onerror="window.__pwned=\'format\'">': 1 },
        },
      };
      const scriptsBefore = await page.$$eval('script', (s) => s.length);
      await postFromHost(page, hello(hostile));

      assert.equal(await page.textContent('#app h1'), hostile.title);
      assert.equal(await page.textContent('#app .canopy-message'), hostile.message);
      assert.equal(await page.textContent('#app .canopy-corpus-root'), hostile.corpus!.root);
      assert.deepEqual((await formatRows(page))[1], [Object.keys(hostile.corpus!.byFormat)[0], '1']);
      assert.equal(await page.$$eval('script', (s) => s.length), scriptsBefore, 'no script element was added');
      assert.equal(await page.$$eval('#app img, #app iframe, #app script', (els) => els.length), 0);
      // Let any image error or frame load that might have been created run its course.
      await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
      assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), undefined);
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
      await keepScreenshot(page, 'inspector-hostile-text');
    } finally {
      await page.close();
    }
  });

  test('a saved view is painted at once after a reload, before the host answers; a corrupt one is ignored', async () => {
    const restored = await openInspector(browser, server.inspectorPage({ initialState: { view: indexed } }));
    try {
      const text = await viewText(restored);
      assert.equal(text.state, 'ready');
      assert.equal(text.title, indexed.title);
      assert.equal(await restored.textContent('.canopy-corpus-total'), '6 files');
      assert.deepEqual((await stubRecord(restored)).posted, [readyNotification], 'it still asks the host for the handshake');
    } finally {
      await restored.close();
    }

    const corrupt = await openInspector(browser, server.inspectorPage({ initialState: { view: { title: '<b>', corpus: 'nope' } } }));
    try {
      assert.equal(await corrupt.getAttribute('#app', 'data-state'), 'connecting');
      assert.equal(await corrupt.$('#app h1'), null);
    } finally {
      await corrupt.close();
    }
  });

  test('an index run shows its files and a PDF’s pages above whatever the inspector shows, until it ends', async () => {
    const page = await openInspector(browser, server.inspectorPage());
    try {
      await postFromHost(page, hello(placeholder));
      const running = (params: object): HostToWebviewMessage => ({ kind: 'notify', method: 'inspector/indexing', params: { running: true, ...params } } as HostToWebviewMessage);
      await postFromHost(page, running({ files: { done: 3, total: 12 }, file: 'reports/annual.pdf', part: { step: 'pages', done: 30, total: 138 } }));
      assert.equal(await page.textContent('#canopy-indexing .canopy-indexing-text'), 'Indexing the workspace: 3 of 12 files · reports/annual.pdf: page 30 of 138');
      const meter = await page.$eval('#canopy-indexing progress', (p) => ({ value: (p as HTMLProgressElement).value, max: (p as HTMLProgressElement).max }));
      assert.equal(meter.max, 12);
      assert.ok(Math.abs(meter.value - (3 + 30 / 138)) < 1e-6, String(meter.value));
      // The view below changes; the bar stays, and says when a question waits for the run.
      await postFromHost(page, showView(indexed));
      await postFromHost(page, running({ files: { done: 4, total: 12 }, file: 'notes.md', questionWaiting: true }));
      assert.equal(await page.textContent('#canopy-indexing .canopy-indexing-text'), 'Indexing the workspace: 4 of 12 files · notes.md — your question is answered when it is done');
      assert.equal(await page.textContent('.canopy-message'), indexed.message);
      await postFromHost(page, { kind: 'notify', method: 'inspector/indexing', params: { running: false, files: { done: 12, total: 12 } } });
      assert.equal(await page.$('#canopy-indexing'), null);
      // A message the protocol does not know (an unknown key) is refused whole.
      await postFromHost(page, running({ files: { done: 1, total: 2 }, pages: 3 }));
      assert.equal(await page.$('#canopy-indexing'), null);
      assert.match((await page.textContent('.canopy-error')) ?? '', /does not understand/);
    } finally {
      await page.close();
    }
  });
});
