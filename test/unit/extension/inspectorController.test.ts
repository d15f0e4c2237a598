// The inspector's one state (src/extension/inspectorController.ts) in plain Node: a model of the
// webview reads the notifications the way webview/main.ts does and says what the panel shows.
// The bugs of issue 18: a cancelled or failed question left "Answering…" on the panel for good,
// and the pending busy flag re-sent "Answering…" after every reload of the webview.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AskTrace } from '../../../src/contracts/trace';
import { InspectorController, type WebviewNotification } from '../../../src/extension/inspectorController';
import type { QuestionEvent } from '../../../src/extension/questions';
import { PROTOCOL_VERSION, type IndexingProgress, type PlaceholderView, type TrainingReport } from '../../../src/protocol/messages';

/** A trace as far as the controller looks at one (it passes traces through untouched). */
const trace = (id: string, question = `question ${id}`): AskTrace => ({ id, question }) as unknown as AskTrace;
const report: TrainingReport = { checkpoints: [] };

type Shown =
  | { kind: 'loading' }
  | { kind: 'placeholder'; message: string }
  | { kind: 'busy'; question: string }
  | { kind: 'trace'; id: string; selected?: string }
  | { kind: 'compare'; base: string; other: string }
  | { kind: 'training'; under?: string };

/** What the webview shows after each notification, as webview/main.ts renders them. */
class FakeWebview {
  shown: Shown = { kind: 'loading' };
  received: WebviewNotification[] = [];
  /** The progress bar above the view (webview/render.ts renderIndexing). */
  indexing: IndexingProgress | undefined;
  private lastTrace: string | undefined;

  post = (m: WebviewNotification): void => {
    this.received.push(m);
    switch (m.method) {
      case 'host/hello':
      case 'inspector/showView':
        this.shown = { kind: 'placeholder', message: m.params.view.message };
        this.lastTrace = undefined;
        return;
      case 'inspector/busy':
        this.shown = { kind: 'busy', question: m.params.question };
        this.lastTrace = undefined;
        return;
      case 'inspector/showTrace':
        this.shown = { kind: 'trace', id: m.params.trace.id };
        this.lastTrace = m.params.trace.id;
        return;
      case 'inspector/compare':
        this.shown = { kind: 'compare', base: m.params.base.id, other: m.params.other.id };
        this.lastTrace = m.params.base.id;
        return;
      case 'inspector/showTraining':
        this.shown = { kind: 'training', ...(this.lastTrace ? { under: this.lastTrace } : {}) };
        return;
      case 'inspector/indexing':
        this.indexing = m.params.running ? m.params : undefined;
        return;
      case 'inspector/reveal':
        assert.equal(this.shown.kind, 'trace', `a reveal reached a webview showing ${this.shown.kind}`);
        if (this.shown.kind === 'trace') this.shown = { ...this.shown, selected: m.params.nodeId };
        return;
      default: {
        const unreachable: never = m;
        throw new Error(`unknown notification ${JSON.stringify(unreachable)}`);
      }
    }
  };

  /** VS Code rebuilt the page (a hidden panel shown again): it loads, then says ready. */
  reload(controller: InspectorController): WebviewNotification[] {
    this.shown = { kind: 'loading' };
    this.lastTrace = undefined;
    const from = this.received.length;
    controller.receive({ kind: 'notify', method: 'webview/ready', params: { protocolVersion: PROTOCOL_VERSION } });
    return this.received.slice(from);
  }
}

const view: PlaceholderView = { title: 'Canopy Evidence Inspector', message: 'No question asked yet.' };

function setup(options: { ready?: boolean } = {}) {
  const logs: string[] = [];
  const controller = new InspectorController({ view: () => view, logger: { log: (level, message) => logs.push(`${level}: ${message}`) } });
  const webview = new FakeWebview();
  controller.attach(webview.post);
  if (options.ready !== false) webview.reload(controller);
  return { controller, webview, logs };
}

const ask = (controller: InspectorController, events: QuestionEvent[]) => events.forEach((e) => controller.onQuestion(e));

describe('inspector controller: questions', () => {
  it('a cancelled question gives the panel back to the answer it replaced, not "Answering…"', () => {
    const { controller, webview } = setup();
    controller.showTrace(trace('a'));
    ask(controller, [{ type: 'started', id: 1, question: 'q1' }]);
    assert.deepEqual(webview.shown, { kind: 'busy', question: 'q1' });
    ask(controller, [{ type: 'cancelled', id: 1, question: 'q1' }]);
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'a' });
    assert.equal(controller.state.kind, 'answer');
  });

  it('a cancelled first question leaves the placeholder', () => {
    const { controller, webview } = setup();
    ask(controller, [
      { type: 'started', id: 1, question: 'q1' },
      { type: 'cancelled', id: 1, question: 'q1' },
    ]);
    assert.deepEqual(webview.shown, { kind: 'placeholder', message: view.message });
  });

  it('a failed question replaces "Answering…" with a notice naming the question and the error', () => {
    const { controller, webview } = setup();
    controller.showTrace(trace('a'));
    ask(controller, [
      { type: 'started', id: 1, question: 'Where is P5?' },
      { type: 'failed', id: 1, question: 'Where is P5?', error: { code: 'E_NOT_FOUND', message: 'no Canopy index at /x: index the folder first' } },
    ]);
    assert.equal(webview.shown.kind, 'placeholder');
    assert.match((webview.shown as { message: string }).message, /“Where is P5\?” could not be answered: no Canopy index at \/x/);
    // The Evidence view still follows the answer under the notice, and a reveal brings it back.
    assert.equal(controller.answer?.id, 'a');
    assert.equal(controller.reveal('item', 'node-1'), true);
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'a', selected: 'node-1' });
  });

  it('after a cancel or a failure, a reload of the webview does not show "Answering…" again', () => {
    for (const end of ['cancelled', 'failed'] as const) {
      const { controller, webview } = setup();
      ask(controller, [
        { type: 'started', id: 7, question: 'q' },
        end === 'cancelled' ? { type: 'cancelled', id: 7, question: 'q' } : { type: 'failed', id: 7, question: 'q', error: { code: 'E_INTERNAL', message: 'boom' } },
      ]);
      const sent = webview.reload(controller);
      assert.ok(!sent.some((m) => m.method === 'inspector/busy'), `${end}: busy re-sent after the reload: ${sent.map((m) => m.method).join(', ')}`);
      assert.equal(webview.shown.kind, 'placeholder', end);
    }
  });

  it('a reload while the question runs shows it running, and its answer replaces it', () => {
    const { controller, webview } = setup();
    ask(controller, [{ type: 'started', id: 1, question: 'q1' }]);
    const sent = webview.reload(controller);
    assert.deepEqual(
      sent.map((m) => m.method),
      ['host/hello', 'inspector/busy'],
    );
    assert.deepEqual(webview.shown, { kind: 'busy', question: 'q1' });
    ask(controller, [{ type: 'answered', id: 1, question: 'q1', trace: trace('b'), file: '/t/b.json', warnings: [] }]);
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'b' });
    webview.reload(controller);
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'b' });
  });

  it('the cancel of a question a newer one replaced leaves the newer one running', () => {
    const { controller, webview } = setup();
    ask(controller, [
      { type: 'started', id: 1, question: 'q1' },
      { type: 'started', id: 2, question: 'q2' },
      { type: 'cancelled', id: 1, question: 'q1' },
      { type: 'failed', id: 1, question: 'q1', error: { code: 'E_INTERNAL', message: 'late' } },
    ]);
    assert.deepEqual(webview.shown, { kind: 'busy', question: 'q2' });
    ask(controller, [{ type: 'answered', id: 2, question: 'q2', trace: trace('c'), file: '/t/c.json', warnings: [] }]);
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'c' });
  });
});

describe('inspector controller: the outbox and the shown answer', () => {
  it('sends nothing before the handshake; on ready: hello, the current state, then a reveal made meanwhile', () => {
    const { controller, webview } = setup({ ready: false });
    controller.showTrace(trace('a'));
    controller.reveal('item-1', 'node-9');
    assert.equal(webview.received.length, 0);
    const sent = webview.reload(controller);
    assert.deepEqual(
      sent.map((m) => m.method),
      ['host/hello', 'inspector/showTrace', 'inspector/reveal'],
    );
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'a', selected: 'node-9' });
    // The reveal was a one-shot: a later reload paints the answer only (the webview keeps its own selection).
    assert.deepEqual(
      webview.reload(controller).map((m) => m.method),
      ['host/hello', 'inspector/showTrace'],
    );
  });

  it('drops a waiting reveal when another answer is shown before the webview is ready', () => {
    const { controller, webview } = setup({ ready: false });
    controller.showTrace(trace('a'));
    controller.reveal('item-1', 'node-9');
    controller.showTrace(trace('b'));
    webview.reload(controller);
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'b' });
  });

  it('the training report sits over the answer; reveal goes back to the answer first; a reload restores both', () => {
    const { controller, webview } = setup();
    controller.showTrace(trace('a'));
    controller.showTraining(report);
    assert.deepEqual(webview.shown, { kind: 'training', under: 'a' });
    assert.ok(controller.showsTraining);
    const sent = webview.reload(controller);
    assert.deepEqual(
      sent.map((m) => m.method),
      ['host/hello', 'inspector/showTrace', 'inspector/showTraining'],
    );
    assert.deepEqual(webview.shown, { kind: 'training', under: 'a' });
    controller.reveal('item', 'n2');
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'a', selected: 'n2' });
    assert.ok(!controller.showsTraining);
  });

  it('nothing is revealed while a question is answered, or when there is no answer', () => {
    const { controller, webview } = setup();
    assert.equal(controller.reveal('i', 'n'), false);
    controller.showTrace(trace('a'));
    ask(controller, [{ type: 'started', id: 3, question: 'q' }]);
    assert.equal(controller.reveal('i', 'n'), false);
    assert.deepEqual(webview.shown, { kind: 'busy', question: 'q' });
  });

  it('a comparison survives a reload; a replay made in the webview becomes the answer without a repaint', () => {
    const { controller, webview } = setup();
    controller.compare(trace('a'), trace('b'));
    webview.reload(controller);
    assert.deepEqual(webview.shown, { kind: 'compare', base: 'a', other: 'b' });
    const before = webview.received.length;
    controller.replayed(trace('r'));
    assert.equal(webview.received.length, before, 'the webview shows its replay itself');
    assert.equal(controller.answer?.id, 'r');
    webview.reload(controller);
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'r' });
  });

  it('announces the answer the views follow, and keeps it while a question runs', () => {
    const { controller } = setup();
    const seen: Array<string | undefined> = [];
    controller.onDidChangeAnswer((t) => seen.push(t?.id));
    controller.showTrace(trace('a'));
    ask(controller, [{ type: 'started', id: 1, question: 'q' }]);
    ask(controller, [{ type: 'answered', id: 1, question: 'q', trace: trace('b'), file: '/b.json', warnings: [] }]);
    controller.traceDeleted('b');
    assert.deepEqual(seen, ['a', 'b', undefined]);
  });

  it('a new index repaints the placeholder only when the placeholder is shown', () => {
    let message = 'not indexed';
    const controller = new InspectorController({ view: () => ({ title: 't', message }), logger: { log: () => undefined } });
    const webview = new FakeWebview();
    controller.attach(webview.post);
    webview.reload(controller);
    message = '3 files indexed';
    controller.viewChanged();
    assert.deepEqual(webview.shown, { kind: 'placeholder', message: '3 files indexed' });
    controller.showTrace(trace('a'));
    message = '4 files indexed';
    controller.viewChanged();
    assert.deepEqual(webview.shown, { kind: 'trace', id: 'a' });
  });

  it('a detached webview gets nothing; the next one is painted from the state on its ready', () => {
    const { controller, webview } = setup();
    const other = new FakeWebview();
    controller.attach(other.post);
    const before = webview.received.length;
    controller.showTrace(trace('z'));
    assert.equal(webview.received.length, before);
    other.reload(controller);
    assert.deepEqual(other.shown, { kind: 'trace', id: 'z' });
  });

  it('logs a protocol mismatch and webview errors', () => {
    const { controller, logs } = setup({ ready: false });
    controller.receive({ kind: 'notify', method: 'webview/ready', params: { protocolVersion: PROTOCOL_VERSION + 1 } });
    controller.receive({ kind: 'notify', method: 'webview/error', params: { message: 'bad render' } });
    assert.ok(logs.some((l) => l.startsWith('warn:') && l.includes(`protocol ${PROTOCOL_VERSION + 1}`)));
    assert.ok(logs.includes('error: inspector webview: bad render'));
  });
});

describe('inspector controller: an index run’s progress', () => {
  const at = (done: number, total: number, extra: Partial<IndexingProgress> = {}): IndexingProgress => ({ running: true, files: { done, total }, ...extra });

  it('paces the progress of a run (its start and end always), over whatever is shown, and repaints the placeholder at its end', () => {
    let now = 0;
    let message = 'The workspace has not been indexed yet.';
    const controller = new InspectorController({ view: () => ({ title: 't', message }), logger: { log: () => undefined }, now: () => now });
    const webview = new FakeWebview();
    controller.attach(webview.post);
    webview.reload(controller);
    const sent = () => webview.received.filter((m) => m.method === 'inspector/indexing').map((m) => (m.method === 'inspector/indexing' ? `${m.params.running ? 'run' : 'end'} ${m.params.files.done}/${m.params.files.total}${m.params.part ? ` p${m.params.part.done}` : ''}` : ''));
    controller.indexProgress(at(0, 3));
    // A PDF reports every page: only one report per interval goes out.
    for (let page = 1; page <= 50; page++) {
      now += 10;
      controller.indexProgress(at(1, 3, { file: 'big.pdf', part: { step: 'pages', done: page, total: 50 } }));
    }
    assert.deepEqual(webview.indexing?.file, 'big.pdf');
    assert.ok(sent().length <= 1 + Math.ceil((50 * 10) / 200) + 1, sent().join(', '));
    // A question starts waiting: said at once.
    controller.indexProgress(at(1, 3, { file: 'big.pdf', part: { step: 'pages', done: 50, total: 50 }, questionWaiting: true }));
    assert.equal(webview.indexing?.questionWaiting, true);
    message = 'No question asked yet.';
    controller.indexProgress({ running: false, files: { done: 3, total: 3 } });
    assert.equal(sent().at(-1), 'end 3/3');
    assert.equal(webview.indexing, undefined, 'the bar goes when the run ends');
    assert.deepEqual(webview.shown, { kind: 'placeholder', message: 'No question asked yet.' }, 'the placeholder says the workspace is indexed');
  });

  it('a webview that loads during a run gets the latest progress after its state; after the run, none', () => {
    const { controller } = setup();
    controller.showTrace(trace('a'));
    controller.indexProgress(at(2, 9, { file: 'b.md' }));
    const fresh = new FakeWebview();
    controller.attach(fresh.post);
    fresh.reload(controller);
    assert.deepEqual(fresh.shown, { kind: 'trace', id: 'a' });
    assert.deepEqual(fresh.indexing, at(2, 9, { file: 'b.md' }));
    controller.indexProgress({ running: false, files: { done: 9, total: 9 } });
    const later = new FakeWebview();
    controller.attach(later.post);
    later.reload(controller);
    assert.equal(later.indexing, undefined);
    assert.deepEqual(later.shown, { kind: 'trace', id: 'a' }, 'the end of a run leaves an answer shown as it is');
  });
});
