// The OpenAI-compatible provider against a loopback server speaking the real wire protocol:
// completions and SSE streams, retries (the `openai` package's backoff and Retry-After, observed
// as the gaps between the requests the server received; the total budget and a Retry-After beyond
// it, which are Canopy's), timeouts, resets, cancellation, size limits, malformed answers, and
// that errors name the host and the status but never the key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CancelledError, ErrorCodes } from '../../../src/core/errors';
import { LlmError, type ChatMessage } from '../../../src/core/llm/llm';
import { apiKeyFromEnv, isLoopbackHost, OpenAiCompatibleChatModel, retryAfterMs } from '../../../src/core/llm/openaiProvider';
import { startOpenAiServer, withOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { everyRendering, modelOn, SECRET_KEY, settle } from './fixtures';

const messages: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello.' },
];

/** An LlmError, or a failed assertion naming what came instead. */
function llmError(result: { ok: boolean; error?: unknown }): LlmError {
  assert.equal(result.ok, false, 'expected the call to fail');
  assert.ok(result.error instanceof LlmError, `expected LlmError, got ${String(result.error)}`);
  return result.error;
}

describe('OpenAI-compatible provider', () => {
  let server: OpenAiTestServer;
  withOpenAiServer((s) => (server = s));

  it('returns a plain completion and sends model, messages, limits and the key', async () => {
    server.script({ kind: 'reply', content: 'Hello there.', usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } });
    const model = modelOn(server, { stream: false });
    const result = await model.chat(messages, { maxTokens: 50, temperature: 0.2 });
    assert.equal(result.text, 'Hello there.');
    assert.equal(result.finishReason, 'stop');
    assert.deepEqual(result.usage, { promptTokens: 12, completionTokens: 3, totalTokens: 15 });
    assert.equal(result.attempts, 1);
    const [req] = server.requests;
    assert.equal(req?.url, '/v1/chat/completions');
    assert.equal(req?.headers.authorization, `Bearer ${SECRET_KEY}`);
    assert.deepEqual(req?.body?.messages, messages);
    assert.equal(req?.body?.model, 'test-model');
    assert.equal(req?.body?.max_tokens, 50);
    assert.equal(req?.body?.temperature, 0.2);
    assert.notEqual(req?.body?.stream, true);
  });

  it('streams deltas in order and returns their concatenation', async () => {
    const pieces = ['The ', 'quick ', 'brown ', 'fox', '.'];
    server.script({ kind: 'reply', content: pieces, chunkDelayMs: 5 });
    const seen: string[] = [];
    const result = await modelOn(server).chat(messages, { onDelta: (d) => seen.push(d) });
    assert.deepEqual(seen, pieces);
    assert.equal(result.text, pieces.join(''));
    assert.equal(result.finishReason, 'stop');
    assert.equal(server.requests[0]?.body?.stream, true);
  });

  it('names the token limit max_completion_tokens and asks for JSON when configured to', async () => {
    server.script({ kind: 'reply', content: '{}' });
    await modelOn(server, { tokenLimitField: 'max_completion_tokens', jsonResponseFormat: true }).chat(messages, { maxTokens: 9, json: true });
    const body = server.requests[0]?.body;
    assert.equal(body?.max_completion_tokens, 9);
    assert.equal(body?.max_tokens, undefined);
    assert.deepEqual(body?.response_format, { type: 'json_object' });
  });

  it('sends no Authorization header when no key is configured', async () => {
    server.script({ kind: 'reply', content: 'ok' });
    await modelOn(server, { apiKey: undefined }).chat(messages);
    assert.equal(server.requests[0]?.headers.authorization, undefined);
  });

  it('takes nothing from OPENAI_* environment variables behind the caller’s back', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { OPENAI_API_KEY: 'sk-from-env-0000', OPENAI_ORG_ID: 'org-env', OPENAI_PROJECT_ID: 'proj-env', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    try {
      server.script({ kind: 'reply', content: 'ok' });
      await modelOn(server, { apiKey: undefined }).chat(messages);
    } finally {
      for (const k of ['OPENAI_API_KEY', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'OPENAI_BASE_URL']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
    const headers = server.requests[0]?.headers ?? {};
    assert.equal(headers.authorization, undefined);
    assert.equal(headers['openai-organization'], undefined);
    assert.equal(headers['openai-project'], undefined);
  });

  /** Milliseconds between the server's received requests. */
  const gaps = () => server.requests.slice(1).map((r, i) => r.at - server.requests[i]!.at);

  it('retries a 429 after the Retry-After the server asked for, and logs the retry', async () => {
    server.script({ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { kind: 'reply', content: 'ok' });
    const logs: string[] = [];
    const result = await modelOn(server, { logger: { log: (level, message) => void logs.push(`${level}: ${message}`) } }).chat(messages);
    assert.equal(result.text, 'ok');
    assert.equal(result.attempts, 2);
    assert.ok(gaps()[0]! >= 950, `the retry came ${gaps()[0]} ms after the 429`);
    assert.deepEqual(logs, [`warn: LLM ${server.host}: HTTP 429 Too Many Requests; retrying (attempt 2 of 4)`]);
  });

  it('honours retry-after-ms over Retry-After', async () => {
    server.script({ kind: 'status', status: 429, headers: { 'retry-after-ms': '300', 'retry-after': '9' } }, { kind: 'reply', content: 'ok' });
    await modelOn(server).chat(messages);
    const [gap] = gaps();
    assert.ok(gap! >= 280 && gap! < 8000, `the retry came ${gap} ms after the 429, not after 300 ms (retry-after-ms) nor 9 s (Retry-After)`);
  });

  it('backs off exponentially and gives up with a clear error after the last retry', async () => {
    server.script(
      { kind: 'status', status: 500, message: 'boom' },
      { kind: 'status', status: 502 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 500, message: 'still broken' },
    );
    const model = modelOn(server, { maxRetries: 3 });
    const err = llmError(await settle(model.chat(messages)));
    // The package's backoff: 0.5 s, 1 s, 2 s, each less up to a quarter of jitter.
    const [a, b, c] = gaps();
    assert.ok(a! >= 370 && b! >= 740 && c! >= 1490, `gaps ${gaps().join(', ')} ms`);
    assert.equal(server.requests.length, 4);
    assert.equal(err.code, ErrorCodes.llmFailed);
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 500);
    assert.equal(err.attempts, 4);
    assert.match(err.message, new RegExp(`LLM request to ${server.host.replace(/\./g, '\\.')} failed: HTTP 500`));
    assert.match(err.message, /still broken/);
    assert.match(err.message, /gave up after 4 attempts/);
  });

  it('does not retry a 400 and quotes the server message with a hint', async () => {
    server.script({ kind: 'status', status: 404, message: 'The model `nope` does not exist' });
    const err = llmError(await settle(modelOn(server).chat(messages)));
    assert.equal(server.requests.length, 1);
    assert.equal(err.status, 404);
    assert.match(err.message, /HTTP 404 Not Found: The model `nope` does not exist — check the base URL and the model name "test-model"/);
  });

  it('gives up at once when Retry-After lies beyond the total budget', async () => {
    server.script({ kind: 'status', status: 429, headers: { 'retry-after': '120' } });
    const started = Date.now();
    const model = modelOn(server, { totalTimeoutMs: 10_000 });
    const err = llmError(await settle(model.chat(messages)));
    assert.ok(Date.now() - started < 5000, 'it did not wait');
    assert.equal(server.requests.length, 1);
    assert.equal(err.status, 429);
    assert.match(err.message, /HTTP 429 Too Many Requests.*asked to retry after 120 s, beyond the total time budget of 10 s \(after 1 attempt\)/);
  });

  it('times out a silent server with a clear error, retrying once, in bounded time', async () => {
    server.script({ kind: 'hang' }, { kind: 'hang' });
    const started = Date.now();
    const err = llmError(await settle(modelOn(server, { requestTimeoutMs: 400, maxRetries: 1 }).chat(messages)));
    assert.equal(err.kind, 'timeout');
    assert.equal(server.requests.length, 2);
    assert.match(err.message, new RegExp(`LLM request to ${server.host.replace(/\./g, '\\.')} failed: timed out: no response within 400 ms \\(gave up after 2 attempts\\)`));
    assert.ok(Date.now() - started < 5000, 'guard: the timeout must bound the call');
  });

  it('times out a stream that stalls after it started, without retrying', async () => {
    server.script({ kind: 'reply', content: ['partial ', 'answer', ' never finished'], hangAfterChunks: 2 });
    const seen: string[] = [];
    const err = llmError(await settle(modelOn(server, { requestTimeoutMs: 500, maxRetries: 2 }).chat(messages, { onDelta: (d) => seen.push(d) })));
    assert.deepEqual(seen, ['partial ', 'answer']);
    assert.equal(err.kind, 'timeout');
    assert.equal(server.requests.length, 1);
    assert.match(err.message, /the stream stalled: no data for 500 ms after 14 characters/);
  });

  it('keeps a slow but steady stream alive past the request timeout', async () => {
    // 8 chunks 100 ms apart: 700 ms in all, never 400 ms of silence.
    server.script({ kind: 'reply', content: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], chunkDelayMs: 100 });
    const result = await modelOn(server, { requestTimeoutMs: 400, maxRetries: 0 }).chat(messages);
    assert.equal(result.text, 'abcdefgh');
    assert.ok(result.ms >= 400, `the stream took ${result.ms} ms`);
  });

  it('stops at the total time budget even while the server keeps the request open', async () => {
    server.script({ kind: 'hang' });
    const started = Date.now();
    const err = llmError(await settle(modelOn(server, { requestTimeoutMs: 60_000, totalTimeoutMs: 600 }).chat(messages)));
    assert.equal(err.kind, 'budget');
    assert.match(err.message, /did not finish within the total time budget of 600 ms/);
    assert.ok(Date.now() - started < 5000, 'guard: the budget must bound the call');
  });

  it('reports a connection reset mid-stream and does not replay text already delivered', async () => {
    server.script({ kind: 'reply', content: ['one ', 'two ', 'three'], resetAfterChunks: 2 });
    const seen: string[] = [];
    const err = llmError(await settle(modelOn(server, { maxRetries: 3 }).chat(messages, { onDelta: (d) => seen.push(d) })));
    assert.deepEqual(seen, ['one ', 'two ']);
    assert.equal(err.kind, 'connection');
    assert.equal(server.requests.length, 1);
    assert.match(err.message, /connection was lost mid-stream after 8 characters/);
  });

  it('retries a connection reset that came before any answer', async () => {
    server.script({ kind: 'reset' }, { kind: 'reply', content: 'second time lucky' });
    const result = await modelOn(server).chat(messages);
    assert.equal(result.text, 'second time lucky');
    assert.equal(result.attempts, 2);
  });

  it('names the host when nothing listens there', async () => {
    const closed = await startOpenAiServer();
    const host = closed.host;
    await closed.close();
    // Three retries would wait through the package's backoff (about 8 s in the issue); a refused connection fails at once.
    const model = new OpenAiCompatibleChatModel({ baseUrl: `http://${host}/v1`, model: 'm', apiKey: SECRET_KEY, maxRetries: 3 });
    const started = Date.now();
    const err = llmError(await settle(model.chat(messages)));
    assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
    assert.equal(err.kind, 'connection');
    assert.equal(err.attempts, 1);
    assert.match(err.message, new RegExp(`LLM request to ${host.replace(/\./g, '\\.')} failed: could not connect \\(ECONNREFUSED\\): nothing is listening at`));
  });

  it('settles promptly with CancelledError when cancelled mid-stream', async () => {
    server.script({ kind: 'reply', content: ['first', 'second', 'never'], hangAfterChunks: 2 });
    const controller = new AbortController();
    let abortedAt = 0;
    const call = modelOn(server).chat(messages, {
      signal: controller.signal,
      onDelta: (d) => {
        if (d === 'second') {
          abortedAt = Date.now();
          controller.abort();
        }
      },
    });
    const result = await settle(call);
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.error instanceof CancelledError, String(!result.ok && result.error));
    assert.ok(Date.now() - abortedAt < 2000, 'guard: cancellation must not wait for the server');
  });

  it('settles promptly when cancelled while the server has not answered yet', async () => {
    server.script({ kind: 'hang' });
    const controller = new AbortController();
    const call = modelOn(server).chat(messages, { signal: controller.signal });
    await server.waitForRequests(1);
    const abortedAt = Date.now();
    controller.abort();
    const result = await settle(call);
    assert.ok(!result.ok && result.error instanceof CancelledError);
    assert.ok(Date.now() - abortedAt < 2000, 'guard');
  });

  it('settles promptly when cancelled during a retry wait', async () => {
    server.script({ kind: 'status', status: 429, headers: { 'retry-after': '30' } });
    const controller = new AbortController();
    const call = modelOn(server, { totalTimeoutMs: 120_000 }).chat(messages, { signal: controller.signal });
    await server.waitForRequests(1);
    await new Promise((r) => setTimeout(r, 20)); // into the 30 s wait
    const abortedAt = Date.now();
    controller.abort();
    const result = await settle(call);
    assert.ok(!result.ok && result.error instanceof CancelledError);
    assert.ok(Date.now() - abortedAt < 2000, 'guard');
    assert.equal(server.requests.length, 1);
  });

  it('sends nothing when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await settle(modelOn(server).chat(messages, { signal: controller.signal }));
    assert.ok(!result.ok && result.error instanceof CancelledError);
    assert.equal(server.requests.length, 0);
  });

  it('cuts off a huge response body with a clear error', async () => {
    server.script({ kind: 'reply', content: 'x'.repeat(300_000) });
    const err = llmError(await settle(modelOn(server, { stream: false, maxResponseBytes: 100_000 }).chat(messages)));
    assert.equal(err.kind, 'size');
    assert.match(err.message, /the response passed the size limit of 100000 bytes and was cut off/);
  });

  it('stops reading an endless body at the byte limit instead of buffering it', async () => {
    // 64 KiB × 4096 = 256 MiB offered; the limit is 1 MiB.
    server.script({ kind: 'raw', contentType: 'text/event-stream', body: `: ${'z'.repeat(65_533)}\n`, repeat: 4096 });
    const started = Date.now();
    const err = llmError(await settle(modelOn(server, { maxResponseBytes: 1024 * 1024 }).chat(messages)));
    assert.equal(err.kind, 'size');
    assert.ok(Date.now() - started < 10_000, 'guard');
  });

  it('cuts off a streamed answer at the character limit', async () => {
    server.script({ kind: 'reply', content: Array.from({ length: 50 }, () => 'y'.repeat(100)) });
    const seen: string[] = [];
    const err = llmError(await settle(modelOn(server, { maxResponseChars: 1000 }).chat(messages, { onDelta: (d) => seen.push(d) })));
    assert.equal(err.kind, 'size');
    assert.equal(seen.join('').length, 1000);
    assert.match(err.message, /the answer passed the limit of 1000 characters/);
  });

  it('calls a body that is not JSON a protocol error and does not retry it', async () => {
    server.script({ kind: 'raw', body: '<html>this is a web page, not an API</html>', contentType: 'application/json' });
    const err = llmError(await settle(modelOn(server, { stream: false }).chat(messages)));
    assert.equal(err.kind, 'protocol');
    assert.equal(server.requests.length, 1);
    assert.match(err.message, /not valid chat-completions JSON — is the base URL an OpenAI-compatible \/v1 endpoint\?$/);
  });

  it('calls a malformed SSE event a protocol error', async () => {
    server.script({ kind: 'raw', contentType: 'text/event-stream', body: 'data: {"choices": [\n\n' });
    const err = llmError(await settle(modelOn(server).chat(messages)));
    assert.equal(err.kind, 'protocol');
  });

  it('does not take a plain JSON answer to a streaming request for an empty answer', async () => {
    server.script({ kind: 'raw', contentType: 'application/json', body: JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }] }) });
    const err = llmError(await settle(modelOn(server).chat(messages)));
    assert.equal(err.kind, 'protocol');
    assert.match(err.message, /sent no stream events/);
  });

  it('calls a completion without choices a protocol error', async () => {
    server.script({ kind: 'raw', body: '{"object": "error"}' });
    const err = llmError(await settle(modelOn(server, { stream: false }).chat(messages)));
    assert.equal(err.kind, 'protocol');
    assert.match(err.message, /has no choices/);
  });

  it('lets an exception thrown by onDelta through unchanged and does not retry', async () => {
    server.script({ kind: 'reply', content: ['a', 'b'] });
    const boom = new RangeError('the caller broke');
    const result = await settle(
      modelOn(server).chat(messages, {
        onDelta: () => {
          throw boom;
        },
      }),
    );
    assert.ok(!result.ok && result.error === boom);
    assert.equal(server.requests.length, 1);
  });

  it('never shows the key: not in errors (even when the server echoes it), logs or ids', async () => {
    const logs: string[] = [];
    const logger = { log: (_level: string, message: string) => void logs.push(message) };
    server.script(
      { kind: 'status', status: 401, message: `Incorrect API key provided: ${SECRET_KEY}` },
      { kind: 'status', status: 500, message: `internal error for key ${SECRET_KEY}` },
      { kind: 'status', status: 500, body: `{"error": {"message": "Bearer ${SECRET_KEY}"}}` },
      { kind: 'hang' },
      { kind: 'reply', content: ['x', 'y'], resetAfterChunks: 1 },
    );
    const outcomes = [
      await settle(modelOn(server, { logger }).chat(messages)),
      await settle(modelOn(server, { logger, maxRetries: 1 }).chat(messages)),
      await settle(modelOn(server, { logger, requestTimeoutMs: 400, maxRetries: 0 }).chat(messages)),
      await settle(modelOn(server, { logger }).chat(messages, { onDelta: () => undefined })),
    ];
    assert.ok(outcomes.every((o) => !o.ok));
    const errors = outcomes.map((o) => (o.ok ? undefined : o.error));
    assert.match((errors[0] as Error).message, /HTTP 401 Unauthorized: Incorrect API key provided: \[redacted\] — check the API key/);
    assert.ok(logs.length > 0, 'the 500 retry is logged');
    const model = modelOn(server);
    const everything = [...errors.map(everyRendering), ...logs, model.id, everyRendering(model.id)].join('\n');
    assert.ok(!everything.includes(SECRET_KEY), 'the key leaked');
    assert.ok(!everything.includes(SECRET_KEY.slice(3, 20)), 'part of the key leaked');
  });

  it('rejects settings it cannot use, naming no secret', () => {
    assert.throws(() => new OpenAiCompatibleChatModel({ baseUrl: 'not a url', model: 'm' }), (e: unknown) => e instanceof LlmError && e.kind === 'config');
    assert.throws(() => new OpenAiCompatibleChatModel({ baseUrl: 'ftp://example.com/v1', model: 'm' }), /http:\/\/ or https:\/\//);
    assert.throws(() => new OpenAiCompatibleChatModel({ baseUrl: 'http://127.0.0.1:1/v1', model: ' ' }), /No LLM model/);
    assert.throws(
      () => new OpenAiCompatibleChatModel({ baseUrl: `https://user:${SECRET_KEY}@example.com/v1`, model: 'm' }),
      (e: unknown) => e instanceof LlmError && /must not contain credentials/.test(e.message) && !e.message.includes(SECRET_KEY),
    );
  });

  it('calls loopback endpoints local and everything else remote', () => {
    assert.equal(modelOn(server).remote, false);
    assert.equal(new OpenAiCompatibleChatModel({ baseUrl: 'http://localhost:11434/v1', model: 'llama3' }).remote, false);
    assert.equal(new OpenAiCompatibleChatModel({ baseUrl: 'http://[::1]:8000/v1', model: 'm' }).remote, false);
    const cloud = new OpenAiCompatibleChatModel({ baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', apiKey: SECRET_KEY });
    assert.equal(cloud.remote, true);
    assert.equal(cloud.id, 'openai-compatible:gpt-4o-mini@api.openai.com');
    assert.equal(new OpenAiCompatibleChatModel({ baseUrl: 'https://api.openai.com/v1', model: 'm', remote: false }).remote, false);
    assert.equal(isLoopbackHost('127.0.0.2'), true);
    assert.equal(isLoopbackHost('10.0.0.1'), false);
  });

  it('reads the CLI key from CANOPY_LLM_API_KEY, then OPENAI_API_KEY', () => {
    assert.equal(apiKeyFromEnv({ CANOPY_LLM_API_KEY: 'a', OPENAI_API_KEY: 'b' }), 'a');
    assert.equal(apiKeyFromEnv({ OPENAI_API_KEY: 'b' }), 'b');
    assert.equal(apiKeyFromEnv({ CANOPY_LLM_API_KEY: '' }), undefined);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '2.5' }), now), 2500);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now), 30_000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now), undefined);
    assert.equal(retryAfterMs(new Headers(), now), undefined);
  });
});
