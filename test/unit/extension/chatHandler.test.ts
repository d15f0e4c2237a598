// The @canopy chat participant's request handler, with VS Code's chat types faked at the seam
// only (a recording response stream and plain locations) and everything behind it real: an
// indexed fixture (built-in encoder), the agent operations, saved traces, and a ChatModel on a
// loopback OpenAI-compatible server standing in for the chat's language model.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgentCitation } from '../../../src/core/agent/citations';
import type { AskTrace } from '../../../src/contracts/trace';
import { escapeMarkdown, handleChatRequest, openTraceCommand, type ChatHandlerDeps, type ChatStreamLike } from '../../../src/extension/chat/chatHandler';
import { indexedFixture, type IndexedFixture } from '../../helpers/fixtureWorkspace';
import { startOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { modelOn } from '../llm/fixtures';

const QUESTION = 'When were the anemometer and the wind vane recalibrated?';

interface Loc {
  file: string;
  range: AgentCitation['range'];
}

type Call = { kind: 'progress'; value: string } | { kind: 'markdown'; value: string } | { kind: 'anchor'; value: Loc; title?: string } | { kind: 'reference'; value: Loc } | { kind: 'button'; value: { command: string; title: string; arguments?: unknown[] } };

class RecordingStream implements ChatStreamLike<Loc> {
  readonly calls: Call[] = [];
  progress(value: string) {
    this.calls.push({ kind: 'progress', value });
  }
  markdown(value: string) {
    this.calls.push({ kind: 'markdown', value });
  }
  anchor(value: Loc, title?: string) {
    this.calls.push({ kind: 'anchor', value, ...(title !== undefined ? { title } : {}) });
  }
  reference(value: Loc) {
    this.calls.push({ kind: 'reference', value });
  }
  button(value: { command: string; title: string; arguments?: unknown[] }) {
    this.calls.push({ kind: 'button', value });
  }
  /** The Markdown as rendered text (escapes removed). */
  text(): string {
    return this.calls
      .filter((c): c is Extract<Call, { kind: 'markdown' }> => c.kind === 'markdown')
      .map((c) => c.value)
      .join('')
      .replace(/\\(.)/g, '$1');
  }
  of<K extends Call['kind']>(kind: K): Array<Extract<Call, { kind: K }>> {
    return this.calls.filter((c): c is Extract<Call, { kind: K }> => c.kind === kind);
  }
}

/** The text a location covers in the fixture copy. */
function covered(root: string, loc: Loc): string {
  const lines = readFileSync(join(root, loc.file), 'utf8').split('\n');
  const r = loc.range!;
  if (r.start.line === r.end.line) return lines[r.start.line]!.slice(r.start.character, r.end.character);
  return [lines[r.start.line]!.slice(r.start.character), ...lines.slice(r.start.line + 1, r.end.line), lines[r.end.line]!.slice(0, r.end.character)].join('\n');
}

describe('@canopy chat handler', () => {
  let fx: IndexedFixture;
  let llmServer: OpenAiTestServer;
  const saved: AskTrace[] = [];
  let indexed = 0;
  let trusted = true;

  const deps = (): ChatHandlerDeps<Loc, 'chat-model'> => ({
    agent: fx.agent,
    index: async () => {
      indexed++;
      return fx.services.index.index(fx.services.settings);
    },
    llmFor: (model) => {
      if (!model) return { note: 'the chat gave no language model' };
      return trusted ? { llm: modelOn(llmServer) } : { note: 'the workspace is not trusted, so no document text is sent to a language model' };
    },
    location: (c) => ({ file: c.file, range: c.range }),
  });

  before(async () => {
    [fx, llmServer] = await Promise.all([indexedFixture('e2e-workspace'), startOpenAiServer()]);
    // What the extension's export and Questions view follow: the agent's 'answered' events.
    fx.agent.onEvent((e) => void saved.push(e.trace));
  });
  after(async () => {
    await Promise.all([fx?.dispose(), llmServer?.close()]);
  });

  it('answers with the chat model, cites with anchors at the exact ranges, and offers the trace', async () => {
    llmServer.script(
      { kind: 'reply', content: '{"sufficient": true, "missing": [], "followUpQuery": ""}' },
      { kind: 'reply', content: 'Both were recalibrated on 2024-03-12 [1].' },
    );
    const stream = new RecordingStream();
    const result = await handleChatRequest({ prompt: QUESTION, command: undefined, model: 'chat-model' }, stream, deps());
    assert.equal(result.errorDetails, undefined, stream.text());
    const text = stream.text();
    assert.match(text, /Both were recalibrated on 2024-03-12 \[1\]\./);
    assert.match(text, /Answered by openai-compatible:test-model/);
    const anchors = stream.of('anchor');
    assert.ok(anchors.length >= 1);
    const trace = saved.at(-1)!;
    assert.equal(trace.answer.mode, 'llm');
    assert.equal(result.metadata.traceId, trace.id);
    for (const [i, a] of anchors.entries()) {
      const c = trace.answer.citations[i]!;
      assert.equal(a.value.file, c.file);
      const span = covered(fx.root, a.value);
      for (const word of c.text.split(/\s+/).filter((w) => /\w/.test(w))) assert.ok(span.includes(word), `anchor ${i + 1} does not cover "${word}" of its cited text`);
      assert.equal(a.title, `${c.file}:${c.anchor.startLine}${c.anchor.endLine !== c.anchor.startLine ? `-${c.anchor.endLine}` : ''}`);
    }
    assert.ok(stream.of('reference').length >= 1);
    const [button] = stream.of('button');
    assert.equal(button?.value.command, openTraceCommand);
    const names = (await fx.services.traces.list()).map((t) => t.name);
    assert.ok(names.includes(button!.value.arguments![0] as string), 'the button names a saved trace');
    assert.equal(result.metadata.traceName, button!.value.arguments![0]);
    assert.equal(stream.of('progress').length, 1);
  });

  it('answers extractively, and says why, when the workspace may not send documents to the model', async () => {
    trusted = false;
    try {
      const stream = new RecordingStream();
      const result = await handleChatRequest({ prompt: QUESTION, command: undefined, model: 'chat-model' }, stream, deps());
      assert.equal(saved.at(-1)!.answer.mode, 'extractive');
      assert.equal(saved.at(-1)!.settings.llm, undefined, 'no LLM reached the trace');
      assert.match(stream.text(), /Extractive answer: quoted from the evidence, no language model \(the workspace is not trusted/);
      assert.match(stream.text(), /2024-03-12/);
      assert.equal(result.metadata.command, 'ask');
      assert.equal(llmServer.pending(), 0);
    } finally {
      trusted = true;
    }
  });

  it('/search lists the kept regions as anchors with scores', async () => {
    const stream = new RecordingStream();
    const result = await handleChatRequest({ prompt: QUESTION, command: 'search', model: undefined }, stream, deps());
    const trace = saved.at(-1)!;
    assert.equal(result.metadata.traceId, trace.id);
    assert.match(stream.text(), new RegExp(`Canopy kept \\*\\*${trace.readerInput.regions.length}\\*\\* region\\(s\\)`));
    const anchors = stream.of('anchor');
    assert.equal(anchors.length, Math.min(12, trace.readerInput.regions.length));
    assert.ok(anchors.some((a) => covered(fx.root, a.value).includes('2024-03-12')));
    assert.match(stream.text(), /score \d\.\d{3}/);
  });

  it('/trace summarises the latest answer and a named one', async () => {
    const latest = saved.at(-1)!;
    let stream = new RecordingStream();
    let result = await handleChatRequest({ prompt: '', command: 'trace', model: undefined }, stream, deps());
    assert.equal(result.metadata.traceId, latest.id);
    assert.match(stream.text(), /Round 1: “When were the anemometer/);
    assert.equal(stream.of('button')[0]?.value.command, openTraceCommand);
    stream = new RecordingStream();
    result = await handleChatRequest({ prompt: saved[0]!.id, command: 'trace', model: undefined }, stream, deps());
    assert.equal(result.metadata.traceId, saved[0]!.id);
    assert.match(stream.text(), /Both were recalibrated/);
  });

  it('/index re-indexes; an empty prompt gets help; failures become a message and errorDetails', async () => {
    let stream = new RecordingStream();
    await handleChatRequest({ prompt: '', command: 'index', model: undefined }, stream, deps());
    assert.equal(indexed, 1);
    assert.match(stream.text(), /Indexed \*\*4\*\* file\(s\): 0 parsed, 4 unchanged/);
    stream = new RecordingStream();
    await handleChatRequest({ prompt: '  ', command: undefined, model: undefined }, stream, deps());
    assert.match(stream.text(), /Commands: `\/search`/);
    stream = new RecordingStream();
    const agent = fx.agent;
    const failing: ChatHandlerDeps<Loc, 'chat-model'> = {
      ...deps(),
      agent: {
        ask: () => fx.services.traces.read('../x.json').then(() => agent.ask(QUESTION)),
        searchEvidence: (q, o) => agent.searchEvidence(q, o),
        listQuestions: (n) => agent.listQuestions(n),
        getTrace: (ref) => agent.getTrace(ref),
      },
    };
    const result = await handleChatRequest({ prompt: QUESTION, command: undefined, model: undefined }, stream, failing);
    assert.match(result.errorDetails?.message ?? '', /not a trace file name.*E_BAD_INPUT/);
    assert.match(stream.text(), /Canopy could not answer/);
  });

  it('escapes document text so it cannot become links, images or HTML', () => {
    const hostile = '![x](http://evil/p.png) [click](command:rm) <img src=x> **bold** `code`';
    const escaped = escapeMarkdown(hostile);
    assert.ok(!/(^|[^\\])[[\]()<>*`!]/.test(escaped), escaped);
    assert.equal(escaped.replace(/\\(.)/g, '$1'), hostile);
  });
});
