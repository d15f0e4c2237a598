// OpenInference export: real traces (asked over an indexed fixture with the built-in encoder, one
// with an LLM on a loopback OpenAI-compatible server) exported with the OpenTelemetry SDK to a
// loopback OTLP/HTTP receiver that decodes the protobuf itself; the spans' OpenInference
// attributes are checked against the trace they came from. Also the JSON-lines file and failures.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { traceToSpans, flattenSpans } from '../../../src/core/export/openInference';
import { TraceExporter, tracesUrl } from '../../../src/core/export/otlpExport';
import type { AskTrace } from '../../../src/contracts/trace';
import { indexedFixture, type IndexedFixture } from '../../helpers/fixtureWorkspace';
import { startOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlpReceiver';
import { modelOn } from '../llm/fixtures';

const QUESTION = 'When were the anemometer and the wind vane recalibrated?';

function docs(span: ReceivedSpan, prefix: string): Array<{ id: string; score: number | undefined; content: string; metadata: Record<string, unknown> }> {
  const out = [];
  for (let i = 0; `${prefix}.${i}.document.id` in span.attributes; i++) {
    const a = (k: string) => span.attributes[`${prefix}.${i}.document.${k}`];
    out.push({ id: a('id') as string, score: a('score') as number | undefined, content: a('content') as string, metadata: JSON.parse(a('metadata') as string) });
  }
  return out;
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((s) => s.name === name);
}

describe('OpenInference trace export', () => {
  let fx: IndexedFixture;
  let receiver: OtlpReceiver;
  let llmServer: OpenAiTestServer;
  let extractive: AskTrace;
  const tmp = mkdtempSync(join(tmpdir(), 'canopy-export-'));

  before(async () => {
    [fx, receiver, llmServer] = await Promise.all([indexedFixture('e2e-workspace'), startOtlpReceiver(), startOpenAiServer()]);
    extractive = (await fx.services.ask.ask(QUESTION, fx.services.settings, { critic: 'rule' })).trace;
  });
  after(async () => {
    await Promise.all([fx?.dispose(), receiver?.close(), llmServer?.close()]);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('sends an extractive answer as OpenInference spans over OTLP/HTTP protobuf, matching the trace', async () => {
    const exporter = new TraceExporter({ endpoint: receiver.base, project: 'canopy-test', version: '9.9.9' });
    const result = await exporter.export(extractive);
    await receiver.waitFor(1);
    const req = receiver.requests[0]!;
    assert.equal(req.path, '/v1/traces');
    assert.equal(req.contentType, 'application/x-protobuf');
    assert.equal(req.resource['service.name'], 'canopy');
    assert.equal(req.resource['service.version'], '9.9.9');
    assert.equal(req.resource['openinference.project.name'], 'canopy-test');
    const spans = req.spans;
    assert.equal(spans.length, result.spans);
    assert.ok(spans.every((s) => s.droppedAttributes === 0), 'attributes were dropped by span limits');
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, 'all spans in one trace');

    // Root: a CHAIN from the question to the answer, timed as the trace.
    const [root] = spans.filter((s) => s.parentSpanId === '');
    assert.ok(root);
    assert.equal(root.name, 'canopy.ask');
    assert.equal(root.attributes['openinference.span.kind'], 'CHAIN');
    assert.equal(root.attributes['input.value'], QUESTION);
    assert.equal(root.attributes['output.value'], extractive.answer.text);
    assert.equal(root.attributes['canopy.trace.id'], extractive.id);
    assert.equal(root.startMs, Date.parse(extractive.createdAt));
    assert.equal(root.endMs, Date.parse(extractive.createdAt) + Math.round(extractive.ms));
    assert.deepEqual(root.attributes['tag.tags'], ['canopy', 'extractive-reader']);
    assert.equal(JSON.parse(root.attributes['metadata'] as string).settings.encoderId, extractive.settings.encoderId);

    // One round span per round, each with a RETRIEVER child listing every retrieved item and its fused score.
    const rounds = spans.filter((s) => s.parentSpanId === root.spanId && s.name.startsWith('round '));
    assert.equal(rounds.length, extractive.rounds.length);
    for (const [i, round] of extractive.rounds.entries()) {
      const span = rounds.find((s) => s.attributes['canopy.round'] === round.round)!;
      assert.equal(span.attributes['input.value'], round.query);
      const children = spans.filter((s) => s.parentSpanId === span.spanId);
      const [retriever] = children.filter((s) => s.attributes['openinference.span.kind'] === 'RETRIEVER');
      assert.ok(retriever, `round ${i + 1} has no retriever span`);
      assert.equal(retriever.attributes['input.value'], round.query);
      assert.equal(retriever.attributes['embedding.model_name'], extractive.settings.encoderId);
      const retrieved = docs(retriever, 'retrieval.documents');
      assert.deepEqual(retrieved.map((d) => d.id), round.retrieved.map((it) => it.itemId));
      assert.deepEqual(retrieved.map((d) => d.score), round.retrieved.map((it) => it.scores.fused));
      assert.deepEqual(retrieved.map((d) => d.metadata.file), round.retrieved.map((it) => it.file));

      // A RERANKER span per freshly compressed item: the scored regions in, the kept regions out.
      const rerankers = children.filter((s) => s.attributes['openinference.span.kind'] === 'RERANKER');
      const fresh = round.retrieved.filter((it) => !it.repeated && it.tree);
      assert.equal(rerankers.length, fresh.length);
      for (const it of fresh) {
        const span2 = rerankers.find((s) => s.attributes['canopy.item.id'] === it.itemId)!;
        assert.ok(span2, `no compression span for ${it.itemId}`);
        assert.equal(span2.attributes['reranker.query'], round.query);
        assert.equal(span2.attributes['reranker.model_name'], `canopy-projection B=${extractive.settings.branchingFactor}`);
        const out = docs(span2, 'reranker.output_documents');
        assert.deepEqual(out.map((d) => d.id), it.keptNodeIds);
        const input = docs(span2, 'reranker.input_documents');
        for (const d of input) assert.notEqual(d.metadata.decision, 'not-visited');
        for (const id of it.keptNodeIds) assert.ok(input.some((d) => d.id === id), `kept ${id} is not among the scored regions`);
        assert.equal(span2.attributes['canopy.tokens.kept'], it.tokens.kept);
        assert.equal(span2.attributes['canopy.regions.dropped'], input.filter((d) => d.metadata.decision === 'dropped-sibling').length);
      }
      if (round.critic) {
        const [critic] = children.filter((s) => s.attributes['openinference.span.kind'] === 'EVALUATOR');
        assert.ok(critic);
        assert.equal(critic.attributes['canopy.critic.sufficient'], round.critic.sufficient);
        assert.equal(critic.attributes['canopy.critic.source'], round.critic.source);
      }
    }

    // The extractive reader is not an LLM: a CHAIN with the reader input and its token count.
    const [reader] = byName(spans, 'reader (extractive)');
    assert.ok(reader);
    assert.equal(reader.parentSpanId, root.spanId);
    assert.equal(reader.attributes['openinference.span.kind'], 'CHAIN');
    assert.equal(reader.attributes['input.value'], extractive.readerInput.text);
    assert.equal(reader.attributes['llm.token_count.prompt'], extractive.readerInput.tokens);
    assert.equal(reader.attributes['canopy.token_count.source'], 'canopy:cl100k_base');
    assert.equal(byName(spans, 'reader').length, 0);
  });

  it('an LLM answer gets LLM spans with model, messages and token counts, and an LLM critic span', async () => {
    llmServer.script(
      { kind: 'reply', content: '{"sufficient": true, "missing": [], "followUpQuery": ""}' },
      { kind: 'reply', content: 'They were recalibrated on 2024-03-12 [1].' },
    );
    const trace = (await fx.services.ask.ask(QUESTION, fx.services.settings, { llm: modelOn(llmServer), routing: 'rule' })).trace;
    assert.equal(trace.answer.mode, 'llm', JSON.stringify(trace.answer));
    const tokens = bpeTokenCounter();
    const before = receiver.requests.length;
    await new TraceExporter({ endpoint: `${receiver.base}/v1/traces`, mapping: { countTokens: (t) => tokens.count(t) } }).export(trace);
    await receiver.waitFor(before + 1);
    const spans = receiver.requests[before]!.spans;
    const [reader] = byName(spans, 'reader');
    assert.ok(reader, 'no LLM reader span');
    assert.equal(reader.attributes['openinference.span.kind'], 'LLM');
    assert.equal(reader.attributes['llm.model_name'], trace.answer.model);
    assert.equal(reader.attributes['llm.input_messages.0.message.role'], 'user');
    assert.equal(reader.attributes['llm.input_messages.0.message.content'], trace.readerInput.text);
    assert.equal(reader.attributes['llm.output_messages.0.message.role'], 'assistant');
    assert.equal(reader.attributes['llm.output_messages.0.message.content'], trace.answer.text);
    const completion = tokens.count(trace.answer.text);
    assert.equal(reader.attributes['llm.token_count.prompt'], trace.readerInput.tokens);
    assert.equal(reader.attributes['llm.token_count.completion'], completion);
    assert.equal(reader.attributes['llm.token_count.total'], trace.readerInput.tokens + completion);
    const [critic] = byName(spans, 'critic');
    assert.ok(critic);
    assert.equal(critic.attributes['canopy.critic.source'], 'llm');
    assert.equal(critic.attributes['llm.model_name'], trace.settings.llm?.id);
    const [root] = spans.filter((s) => s.parentSpanId === '');
    assert.deepEqual(root!.attributes['tag.tags'], ['canopy', 'llm-reader']);
  });

  it('writes OTLP JSON lines to a file, one request per answer', async () => {
    const file = join(tmp, 'nested', 'spans.jsonl');
    const exporter = new TraceExporter({ file });
    await exporter.export(extractive);
    await exporter.export(extractive);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 2);
    const request = JSON.parse(lines[0]!) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> }> }> }> };
    const spans = request.resourceSpans[0]!.scopeSpans[0]!.spans;
    assert.equal(spans.length, flattenSpans(traceToSpans(extractive)).length);
    const root = spans.find((s) => s.name === 'canopy.ask')!;
    assert.equal(root.attributes.find((a) => a.key === 'input.value')?.value.stringValue, QUESTION);
  });

  it('caps long document lists and says how many were left out', () => {
    const root = traceToSpans(extractive, { maxDocuments: 1 });
    const retriever = flattenSpans(root).find((s) => s.kind === 'RETRIEVER')!;
    assert.ok('retrieval.documents.0.document.id' in retriever.attributes);
    assert.ok(!('retrieval.documents.1.document.id' in retriever.attributes));
    assert.equal(retriever.attributes['canopy.documents.omitted'], extractive.rounds[0]!.retrieved.length - 1);
  });

  it('reports an endpoint that refuses the spans, naming it, and bad endpoints up front', async () => {
    const dead = await startOtlpReceiver();
    await dead.close();
    await assert.rejects(new TraceExporter({ endpoint: dead.base, timeoutMs: 1000 }).export(extractive), (e: Error & { code?: string }) => e.code === 'E_WRITE' && e.message.includes(`${dead.base}/v1/traces`));
    assert.throws(() => new TraceExporter({ endpoint: 'not a url' }), /not a URL/);
    assert.throws(() => new TraceExporter({ endpoint: 'ftp://x/v1/traces' }), /http or https/);
    assert.throws(() => new TraceExporter({}), /endpoint or a file/);
    assert.equal(tracesUrl('http://localhost:6006'), 'http://localhost:6006/v1/traces');
    assert.equal(tracesUrl('http://h:4318/otel/'), 'http://h:4318/otel/v1/traces');
    assert.equal(tracesUrl('https://h/api/public/otel/v1/traces'), 'https://h/api/public/otel/v1/traces');
  });
});
