/**
 * A loopback OpenAI-compatible server for the LLM tests: `POST /v1/chat/completions` speaking
 * the real wire protocol (a JSON completion, or SSE `data: {...}\n\n` chunks ending in
 * `data: [DONE]` when the request says `stream: true`). Each test scripts a queue of replies —
 * status codes with headers such as Retry-After, delays, hangs, resets mid-stream, raw or huge
 * bodies — and reads back the requests the server saw. When the queue is empty the server
 * answers 500 with a message naming that, so a test that sends more requests than it scripted
 * fails loudly instead of hanging.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, afterEach, before } from 'node:test';

export type ScriptedReply =
  /** A successful completion. `content` as pieces: one SSE chunk each when streaming, joined otherwise. */
  | {
      kind: 'reply';
      content: string | string[];
      /** Wait before sending headers. */
      delayMs?: number;
      /** Wait between SSE chunks. */
      chunkDelayMs?: number;
      /** Streaming only: destroy the socket after this many content chunks were sent. */
      resetAfterChunks?: number;
      /** Streaming only: stop sending (but keep the connection open) after this many chunks. */
      hangAfterChunks?: number;
      finishReason?: string;
      usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    }
  /** An error status with an OpenAI-style error body (or a given body) and optional headers. */
  | { kind: 'status'; status: number; message?: string; body?: string; headers?: Record<string, string>; delayMs?: number }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /** Destroy the connection without answering. */
  | { kind: 'reset' }
  /** Any raw body (e.g. not JSON, or huge), sent as given. */
  | { kind: 'raw'; status?: number; contentType?: string; body: string; repeat?: number };

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | undefined;
  /** Milliseconds since the server started, when the request body had arrived. */
  at: number;
}

export interface OpenAiTestServer {
  /** e.g. `http://127.0.0.1:43567/v1` — what a client takes as its base URL. */
  readonly baseUrl: string;
  readonly host: string;
  readonly requests: SeenRequest[];
  /** Append replies to the queue, in the order they are to be served. */
  script(...replies: ScriptedReply[]): void;
  /** Replies not yet served. */
  pending(): number;
  /** Drops unserved replies and forgets the requests seen. */
  reset(): void;
  /** Resolves once the server has seen `count` requests in all. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startOpenAiServer(): Promise<OpenAiTestServer> {
  const queue: ScriptedReply[] = [];
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const started = Date.now();
  let closed = false;

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, body, at: Date.now() - started });
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } });
      return;
    }
    const reply = queue.shift();
    if (!reply) {
      sendJson(res, 500, { error: { message: 'test server: no scripted reply left', type: 'server_error' } });
      return;
    }
    const model = typeof body?.model === 'string' ? body.model : 'unknown';
    switch (reply.kind) {
      case 'hang':
        return; // the socket is destroyed on close()
      case 'reset':
        req.socket.destroy();
        return;
      case 'raw': {
        res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
        for (let i = 0; i < (reply.repeat ?? 1); i++) {
          if (res.destroyed || closed) return;
          // Respect back-pressure so a huge body does not balloon the server's memory.
          if (!res.write(reply.body)) {
            await new Promise<void>((resolve) => {
              const done = () => {
                res.off('drain', done).off('close', done);
                resolve();
              };
              res.on('drain', done).on('close', done);
            });
          }
        }
        res.end();
        return;
      }
      case 'status': {
        if (reply.delayMs) await sleep(reply.delayMs);
        const text = reply.body ?? JSON.stringify({ error: { message: reply.message ?? `status ${reply.status}`, type: 'test_error', code: null } });
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(text);
        return;
      }
      case 'reply': {
        if (reply.delayMs) await sleep(reply.delayMs);
        const pieces = typeof reply.content === 'string' ? [reply.content] : reply.content;
        const id = `chatcmpl-test-${requests.length}`;
        const created = Math.floor(Date.now() / 1000);
        if (body?.stream !== true) {
          sendJson(res, 200, {
            id,
            object: 'chat.completion',
            created,
            model,
            choices: [{ index: 0, message: { role: 'assistant', content: pieces.join('') }, finish_reason: reply.finishReason ?? 'stop', logprobs: null }],
            usage: reply.usage,
          });
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
        // Each chunk is flushed before the next step, so a scripted reset really happens mid-stream.
        const send = (text: string) => new Promise<void>((resolve) => res.write(text, () => resolve()));
        await send(chunk({ role: 'assistant', content: '' }, null));
        for (let i = 0; i < pieces.length; i++) {
          if (reply.resetAfterChunks !== undefined && i >= reply.resetAfterChunks) {
            req.socket.destroy();
            return;
          }
          if (reply.hangAfterChunks !== undefined && i >= reply.hangAfterChunks) return;
          if (i > 0 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
          if (res.destroyed || closed) return;
          await send(chunk({ content: pieces[i] }, null));
        }
        if (reply.resetAfterChunks !== undefined) {
          req.socket.destroy();
          return;
        }
        res.write(chunk({}, reply.finishReason ?? 'stop', reply.usage ? { usage: reply.usage } : {}));
        res.end('data: [DONE]\n\n');
        return;
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    host: `127.0.0.1:${port}`,
    requests,
    script: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
    },
    waitForRequests: async (count) => {
      while (requests.length < count) await sleep(5);
    },
    close: async () => {
      closed = true;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * One server for the enclosing `describe` block, handed to `use` once it listens; after each test
 * the script is reset, and a test that left scripted replies unserved fails.
 */
export function withOpenAiServer(use: (server: OpenAiTestServer) => void): void {
  let server: OpenAiTestServer | undefined;
  before(async () => {
    server = await startOpenAiServer();
    use(server);
  });
  after(async () => {
    await server?.close();
  });
  afterEach(() => {
    if (!server) return;
    const left = server.pending();
    server.reset();
    assert.equal(left, 0, 'this test left scripted replies unserved');
  });
}
