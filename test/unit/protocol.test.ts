// The typed protocol: validation at the boundary and the request/reply helpers on both ends,
// wired back to back in plain Node.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROTOCOL_VERSION, type HostToWebviewMessage, type WebviewToHostMessage } from '../../src/protocol/messages';
import { HostEndpoint, ProtocolError, WebviewClient } from '../../src/protocol/rpc';
import { validateHostToWebview, validateWebviewToHost } from '../../src/protocol/validate';
import type { AskTrace } from '../../src/contracts/trace';
import { inspectorRequestHandlers } from '../../src/extension/views/inspectorRequests';

const view = { title: 'Canopy', message: 'hello' };

function pair(handlers?: Partial<ConstructorParameters<typeof HostEndpoint>[1]>) {
  const toHost: unknown[] = [];
  const toWebview: HostToWebviewMessage[] = [];
  const hostNotes: unknown[] = [];
  const webviewNotes: unknown[] = [];
  const rejected: string[] = [];
  const host: HostEndpoint = new HostEndpoint(
    (m) => {
      toWebview.push(m);
      client.receive(structuredClone(m));
    },
    {
      'inspector/getView': async () => view,
      'source/open': async ({ file }) => {
        if (file !== 'docs/a.md') throw new ProtocolError('E_FORBIDDEN', `${file} is not indexed`);
        return { opened: true };
      },
      ...handlers,
    },
    (n) => hostNotes.push(n),
    (e) => rejected.push(e.message),
  );
  const client: WebviewClient = new WebviewClient(
    (m: WebviewToHostMessage) => {
      toHost.push(m);
      void host.receive(structuredClone(m));
    },
    (n) => webviewNotes.push(n),
    500,
  );
  return { host, client, toHost, toWebview, hostNotes, webviewNotes, rejected };
}

describe('protocol validation', () => {
  it('accepts every well-formed webview message', () => {
    const good: unknown[] = [
      { kind: 'notify', method: 'webview/ready', params: { protocolVersion: PROTOCOL_VERSION } },
      { kind: 'notify', method: 'webview/error', params: { message: 'x' } },
      { kind: 'request', id: 0, method: 'inspector/getView', params: {} },
      { kind: 'request', id: 7, method: 'source/open', params: { file: 'a.md', startLine: 3, startColumn: 0 } },
      { kind: 'request', id: 8, method: 'gold/mark', params: { traceId: 't1', nodeId: 'a.md#0/1' } },
      { kind: 'request', id: 9, method: 'gold/mark', params: { traceId: 't1', nodeId: 'r.pdf#0', bbox: [10, 20, 300, 90.5] } },
    ];
    for (const m of good) assert.equal(validateWebviewToHost(m).ok, true, JSON.stringify(m));
  });

  it('rejects malformed webview messages with E_PROTOCOL and a reason', () => {
    const bad: [unknown, RegExp][] = [
      [null, /object/],
      ['ready', /object/],
      [{ kind: 'shout' }, /kind/],
      [{ kind: 'notify', method: 'webview/hack', params: {} }, /unknown notification/],
      [{ kind: 'request', id: -1, method: 'inspector/getView', params: {} }, /id/],
      [{ kind: 'request', id: 1, method: 'fs/readFile', params: {} }, /unknown request/],
      [{ kind: 'request', id: 1, method: 'source/open', params: { file: 42 } }, /file must be a string/],
      [{ kind: 'request', id: 1, method: 'source/open', params: { file: 'a', startLine: 1.5 } }, /startLine/],
      [{ kind: 'request', id: 1, method: 'source/open', params: { file: 'a', extra: true } }, /not part of the protocol/],
      [{ kind: 'notify', method: 'webview/ready', params: { protocolVersion: '1' } }, /integer/],
      [{ kind: 'request', id: 1, method: 'gold/mark', params: { traceId: 't1' } }, /nodeId/],
      [{ kind: 'request', id: 1, method: 'gold/mark', params: { traceId: 't1', nodeId: '' } }, /nodeId must be a non-empty string/],
      [{ kind: 'request', id: 1, method: 'gold/mark', params: { traceId: 't1', nodeId: 'n', bbox: [1, 2, 3] } }, /bbox must be four finite numbers/],
      [{ kind: 'request', id: 1, method: 'gold/mark', params: { traceId: 't1', nodeId: 'n', bbox: [300, 20, 10, 90] } }, /x0 ≤ x1/],
      [{ kind: 'request', id: 1, method: 'gold/mark', params: { traceId: 't1', nodeId: 'n', question: 'injected' } }, /not part of the protocol/],
    ];
    for (const [m, why] of bad) {
      const r = validateWebviewToHost(m);
      assert.equal(r.ok, false, JSON.stringify(m));
      if (!r.ok) {
        assert.equal(r.error.code, 'E_PROTOCOL');
        assert.match(r.error.message, why);
      }
    }
  });

  it('rejects host messages the webview does not know', () => {
    assert.equal(validateHostToWebview({ kind: 'notify', method: 'host/hello', params: { protocolVersion: 1, view } }).ok, true);
    assert.equal(validateHostToWebview({ kind: 'notify', method: 'host/hello', params: { protocolVersion: 1 } }).ok, false);
    assert.equal(validateHostToWebview({ kind: 'notify', method: 'host/eval', params: {} }).ok, false);
    assert.equal(validateHostToWebview({ kind: 'response', id: 1, ok: 'yes' }).ok, false);
    assert.equal(validateHostToWebview({ kind: 'response', id: 1, ok: false, error: { code: 1 } }).ok, false);
  });
});

describe('request/reply helpers', () => {
  it('round-trips a request and its typed result', async () => {
    const { client } = pair();
    assert.deepEqual(await client.request('inspector/getView', {}), view);
    assert.deepEqual(await client.request('source/open', { file: 'docs/a.md', startLine: 1 }), { opened: true });
  });

  it('turns a handler error into a {code, message} rejection', async () => {
    const { client } = pair();
    await assert.rejects(client.request('source/open', { file: '../../etc/passwd' }), (err: unknown) => {
      assert.ok(err instanceof ProtocolError);
      assert.equal(err.code, 'E_FORBIDDEN');
      assert.match(err.message, /not indexed/);
      return true;
    });
  });

  it('answers a malformed request with an error response and never calls a handler', async () => {
    let called = false;
    const { host, toWebview, rejected } = pair({
      'source/open': async () => {
        called = true;
        return { opened: true };
      },
    });
    await host.receive({ kind: 'request', id: 3, method: 'source/open', params: { file: 5 } });
    assert.equal(called, false);
    assert.equal(rejected.length, 1);
    const last = toWebview.at(-1)!;
    assert.equal(last.kind, 'response');
    assert.equal(last.kind === 'response' && last.ok, false);
  });

  it('rejects a result that does not match the method', async () => {
    const { client } = pair({ 'inspector/getView': async () => ({ title: 3 }) as never });
    await assert.rejects(client.request('inspector/getView', {}), /title must be a string/);
  });

  it('delivers notifications both ways', () => {
    const { host, client, hostNotes, webviewNotes } = pair();
    client.notify('webview/ready', { protocolVersion: PROTOCOL_VERSION });
    host.notify('host/hello', { protocolVersion: PROTOCOL_VERSION, view });
    assert.deepEqual(hostNotes, [{ kind: 'notify', method: 'webview/ready', params: { protocolVersion: PROTOCOL_VERSION } }]);
    assert.deepEqual(webviewNotes, [{ kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view } }]);
  });

  it('times out a request nobody answers', async () => {
    const client = new WebviewClient(() => undefined, () => undefined, 20);
    await assert.rejects(client.request('inspector/getView', {}), (err: unknown) => err instanceof ProtocolError && err.code === 'E_TIMEOUT');
  });

  it('reports a response to an unknown request id', () => {
    const client = new WebviewClient(() => undefined, () => undefined);
    const problem = client.receive({ kind: 'response', id: 99, ok: true, result: {} });
    assert.match(problem?.message ?? '', /unknown request 99/);
  });
});

describe('the inspector host keeps the webview inside the index', () => {
  const files = new Map<string, Uint8Array>([
    ['docs/a.md', new TextEncoder().encode('# A\n')],
    ['papers/report.pdf', new TextEncoder().encode('%PDF-1.4\n%%EOF\n')],
    ['papers/fake.pdf', new TextEncoder().encode('<html>not a pdf</html>')],
  ]);
  const opened: string[] = [];
  const trace = { id: 't1' } as unknown as AskTrace;
  const handlers = inspectorRequestHandlers({
    currentView: () => view,
    isIndexedFile: (rel) => files.has(rel),
    openSource: async (rel, range, preserveFocus) => {
      opened.push(`${rel}:${range.startLine ?? '-'}:${preserveFocus}`);
    },
    readFile: async (rel) => files.get(rel)!,
    listTraces: async () => [],
    readTrace: async () => trace,
    findTrace: async (id) => (id === 't1' ? trace : undefined),
    replay: async (t) => t,
  });
  const client = () => {
    const c: WebviewClient = new WebviewClient((m) => void host.receive(structuredClone(m)), () => undefined, 1000);
    const host = new HostEndpoint((m) => c.receive(structuredClone(m)), handlers, () => undefined);
    return c;
  };
  const refused = (code: string) => (err: unknown) => err instanceof ProtocolError && err.code === code;

  it('opens an indexed file at the anchor, and refuses every path outside the index', async () => {
    const c = client();
    assert.deepEqual(await c.request('source/open', { file: 'docs/a.md', startLine: 3, startColumn: 0, preserveFocus: true }), { opened: true });
    assert.deepEqual(opened, ['docs/a.md:3:true']);
    for (const file of ['../../etc/passwd', '/etc/passwd', 'docs/../../x.md', 'docs/./a.md', 'C:/Windows/win.ini', 'docs\\a.md', 'docs/b.md', '', 'docs//a.md']) {
      await assert.rejects(c.request('source/open', { file }), refused('E_FORBIDDEN'), file);
    }
    assert.deepEqual(opened, ['docs/a.md:3:true'], 'nothing else was opened');
  });

  it('sends the bytes of an indexed PDF only', async () => {
    const c = client();
    const { file, data } = await c.request('pdf/get', { file: 'papers/report.pdf' });
    assert.equal(file, 'papers/report.pdf');
    assert.equal(Buffer.from(data, 'base64').toString('latin1'), '%PDF-1.4\n%%EOF\n');
    await assert.rejects(c.request('pdf/get', { file: 'docs/a.md' }), refused('E_FORBIDDEN'));
    await assert.rejects(c.request('pdf/get', { file: 'papers/fake.pdf' }), refused('E_FORBIDDEN'));
    await assert.rejects(c.request('pdf/get', { file: '../papers/report.pdf' }), refused('E_FORBIDDEN'));
    await assert.rejects(c.request('pdf/get', { file: 'other.pdf' }), refused('E_FORBIDDEN'));
  });

  it('reads traces by history file name only, and replays only traces it knows', async () => {
    const c = client();
    await assert.rejects(c.request('traces/get', { name: '../index/manifest.json' }), refused('E_FORBIDDEN'));
    await assert.rejects(c.request('traces/get', { name: '.secret.json' }), refused('E_FORBIDDEN'));
    await assert.rejects(c.request('trace/replay', { traceId: 'nope', settings: {} }), refused('E_NOT_FOUND'));
  });

  it('validates replay settings at the boundary', () => {
    const ok = { kind: 'request', id: 1, method: 'trace/replay', params: { traceId: 't1', settings: { branchingFactor: 3, topK: 5, compressor: { name: 'flat', m: 4 }, critic: 'rule' } } };
    assert.equal(validateWebviewToHost(ok).ok, true);
    for (const settings of [{ branchingFactor: 9 }, { topK: 0 }, { compressor: { name: 'flat' } }, { compressor: { name: 'evil' } }, { critic: 'llm' }, { extra: 1 }]) {
      assert.equal(validateWebviewToHost({ ...ok, params: { traceId: 't1', settings } }).ok, false, JSON.stringify(settings));
    }
  });

  it('a host without a handler answers E_UNSUPPORTED', async () => {
    const c: WebviewClient = new WebviewClient((m) => void host.receive(structuredClone(m)), () => undefined, 1000);
    const host = new HostEndpoint((m) => c.receive(structuredClone(m)), { 'inspector/getView': async () => view }, () => undefined);
    await assert.rejects(c.request('traces/list', {}), refused('E_UNSUPPORTED'));
  });
});
