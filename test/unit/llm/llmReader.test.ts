// The LLM reader on the loopback server: the prompt carries the numbered evidence blocks, the
// answer streams, cited [n] map to the n-th region's node, file, anchor and text, numbers that
// name no block are flagged, and a failed call falls back to the extractive reader when asked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenCounter } from '../../../src/core/compress/tokens';
import { CancelledError } from '../../../src/core/errors';
import { LlmError } from '../../../src/core/llm/llm';
import type { RegionNode } from '../../../src/contracts/region';
import { ExtractiveReader } from '../../../src/core/read/extractiveReader';
import { citedNumbers, LlmReader } from '../../../src/core/read/llmReader';
import { buildReaderInput, type EvidenceRegion } from '../../../src/core/read/reader';
import { withOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { everyRendering, modelOn, SECRET_KEY, settle } from './fixtures';

const words: TokenCounter = { name: 'words', count: (t) => t.split(/\s+/).filter(Boolean).length };

function region(itemId: string, file: string, title: string, id: string, text: string, charStart: number): EvidenceRegion {
  const node: RegionNode = {
    id,
    kind: 'sentence',
    modality: 'text',
    text,
    anchor: { file, charStart, charEnd: charStart + text.length, startLine: 3, startColumn: 0, endLine: 3, endColumn: text.length },
    children: [],
  };
  return { itemId, itemTitle: title, file, node, score: 0.5 };
}

const regions = [
  region('paris.md', 'docs/paris.md', 'Paris', 'paris.md/0/1', 'Paris is the capital of France.', 10),
  region('paris.md', 'docs/paris.md', 'Paris', 'paris.md/0/4', 'About 2.1 million people live in Paris.', 120),
  region('seine.md', 'docs/seine.md', 'Seine', 'seine.md/2', 'The Seine flows through Paris.', 0),
];
const input = buildReaderInput(regions, words, 1000);
const question = 'What is the capital of France and how many people live there?';

describe('LLM reader', () => {
  let server: OpenAiTestServer;
  withOpenAiServer((s) => (server = s));

  it('maps cited markers to the regions they number, streaming the text', async () => {
    const pieces = ['Paris is the capital of France [1]', '. About 2.1 million people live there [2][3]', '; see also [7].'];
    server.script({ kind: 'reply', content: pieces });
    const fromOptions: string[] = [];
    const fromHook: string[] = [];
    const reader = new LlmReader(modelOn(server), { onDelta: (d) => fromOptions.push(d) });
    const answer = await reader.answer(question, input, undefined, { onDelta: (d) => fromHook.push(d) });
    assert.equal(answer.mode, 'llm');
    assert.equal(answer.text, pieces.join(''));
    assert.deepEqual(fromOptions, pieces);
    assert.deepEqual(fromHook, pieces);
    assert.deepEqual(
      answer.citations.map((c) => [c.marker, c.nodeId, c.itemId, c.file]),
      [
        [1, 'paris.md/0/1', 'paris.md', 'docs/paris.md'],
        [2, 'paris.md/0/4', 'paris.md', 'docs/paris.md'],
        [3, 'seine.md/2', 'seine.md', 'docs/seine.md'],
      ],
    );
    assert.deepEqual(answer.citations[1]?.anchor, regions[1]?.node.anchor);
    assert.equal(answer.citations[1]?.text, 'About 2.1 million people live in Paris.');
    assert.deepEqual(answer.unresolvedMarkers, [7]);
    assert.ok(answer.notes.some((n) => n.includes('[7]')));
  });

  it('sends the numbered evidence blocks and the question', async () => {
    server.script({ kind: 'reply', content: 'Paris [1].' });
    await new LlmReader(modelOn(server)).answer(question, input);
    const sent = server.requests[0]?.body?.messages as Array<{ role: string; content: string }>;
    assert.equal(sent[0]?.role, 'system');
    assert.match(sent[0]?.content ?? '', /in square brackets/);
    assert.ok(sent[1]?.content.includes('[1] docs/paris.md — Paris\nParis is the capital of France.'));
    assert.ok(sent[1]?.content.includes('[3] docs/seine.md — Seine\nThe Seine flows through Paris.'));
    assert.ok(sent[1]?.content.endsWith(`Question: ${question}`));
  });

  it('notes an answer that cites nothing or was cut at the token limit', async () => {
    server.script({ kind: 'reply', content: 'Paris, probably', finishReason: 'length' });
    const answer = await new LlmReader(modelOn(server)).answer(question, input);
    assert.deepEqual(answer.citations, []);
    assert.ok(answer.notes.includes('the answer cites no evidence'));
    assert.ok(answer.notes.some((n) => n.includes('token limit')));
  });

  it('does not ask the model when no evidence was kept', async () => {
    const empty = buildReaderInput([], words, 1000);
    const answer = await new LlmReader(modelOn(server)).answer(question, empty);
    assert.equal(server.requests.length, 0);
    assert.deepEqual(answer.citations, []);
    assert.match(answer.text, /No evidence was kept/);
  });

  it('throws a clear LlmError when the call fails and no fallback is set', async () => {
    server.script({ kind: 'status', status: 400, message: 'context length exceeded' });
    const result = await settle(new LlmReader(modelOn(server)).answer(question, input));
    assert.ok(!result.ok && result.error instanceof LlmError);
    assert.match((result.error as Error).message, /HTTP 400 Bad Request: context length exceeded/);
  });

  it('answers with the fallback reader when the call fails, saying so', async () => {
    server.script({ kind: 'status', status: 400, message: 'context length exceeded' });
    const answer = await new LlmReader(modelOn(server), { fallback: new ExtractiveReader() }).answer(question, input);
    assert.equal(answer.mode, 'extractive');
    assert.ok(answer.citations.length > 0);
    assert.match(answer.notes[0] ?? '', /the LLM failed, so the extractive reader answered: .*HTTP 400/);
  });

  it('passes cancellation through, even with a fallback', async () => {
    server.script({ kind: 'reply', content: ['Paris ', 'is', ' never finished'], hangAfterChunks: 1 });
    const controller = new AbortController();
    const reader = new LlmReader(modelOn(server), { fallback: new ExtractiveReader(), onDelta: () => controller.abort() });
    const result = await settle(reader.answer(question, input, controller.signal));
    assert.ok(!result.ok && result.error instanceof CancelledError);
  });

  it('puts the key in no answer', async () => {
    server.script({ kind: 'reply', content: 'Paris [1].' }, { kind: 'status', status: 401, message: `wrong key ${SECRET_KEY}` });
    const reader = new LlmReader(modelOn(server, { maxRetries: 0 }), { fallback: new ExtractiveReader() });
    const answers = [await reader.answer(question, input), await reader.answer(question, input)];
    assert.equal(answers[1]?.mode, 'extractive');
    assert.ok(!answers.map(everyRendering).join('\n').includes(SECRET_KEY));
  });

  it('reads citation markers in the forms models write them', () => {
    assert.deepEqual(citedNumbers('A [2]. B [1, 3]. C [4-6]. D [2][7]. E [source 8]. F [9–10].'), [2, 1, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.deepEqual(citedNumbers('In [2019] and [1-9999]'), [2019, 1, 9999]);
    assert.deepEqual(citedNumbers('no markers [a] [ ] [1.5]'), []);
  });
});
