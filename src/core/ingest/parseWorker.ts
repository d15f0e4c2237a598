/**
 * The parse worker: runs `parseFile` in a worker thread started by `ParsePool` (parsePool.ts)
 * with a V8 heap limit, so a file whose parse needs more memory than `canopy.maxParseMemoryMB`
 * ends this thread (ERR_WORKER_OUT_OF_MEMORY) and not the extension host or the CLI. One worker
 * parses one file at a time and is reused for the next.
 *
 * Bundled as dist/parseWorker.js beside dist/extension.js and dist/cli.js (scripts/build.mjs);
 * from source the pool loads this file through tsx.
 *
 * Protocol (plain structured-clone messages, typed in parseWorkerProtocol.ts):
 *   worker → pool  { type: 'ready' } once, then per task { type: 'embed' | 'progress', … } (zero or more),
 *                  and one { type: 'done', id, doc } or { type: 'failed', id, error }
 *   pool → worker  { type: 'parse', id, file, bytes, options, embed } and { type: 'embedResult' | 'embedError', … }
 * Cancellation and the hard time limit are the pool terminating this thread.
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { CancelledError } from '../errors';
import { parseFile } from './parseFile';
import type { ParseOptions } from './parsedDocument';
import { type FromWorker, serializeError, type ToWorker } from './parseWorkerProtocol';

function start(): void {
  const port = parentPort;
  if (!port) return; // imported outside a worker (e.g. by a type-only consumer): nothing to do
  const data = workerData as { preload?: string } | undefined;
  // Test hooks (a module that may listen to the same messages before the parser does).
  if (data?.preload) createRequire(__filename)(data.preload);

  const pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  let nextCall = 0;

  const run = async (msg: Extract<ToWorker, { type: 'parse' }>): Promise<void> => {
    const options: ParseOptions = { ...msg.options };
    if (msg.embed) {
      options.embed = (texts) =>
        new Promise<Float32Array[]>((resolve, reject) => {
          const callId = nextCall++;
          pending.set(callId, { resolve, reject });
          port.postMessage({ type: 'embed', id: msg.id, callId, texts } satisfies FromWorker);
        });
    }
    if (msg.progress) options.onProgress = (progress) => port.postMessage({ type: 'progress', id: msg.id, progress } satisfies FromWorker);
    let reply: FromWorker;
    try {
      const doc = await parseFile(msg.file, msg.bytes, options);
      if (doc.stats.stages) doc.stats.stages.sentAt = performance.timeOrigin + performance.now();
      reply = { type: 'done', id: msg.id, doc };
    } catch (err) {
      reply = { type: 'failed', id: msg.id, error: serializeError(err) };
    }
    try {
      port.postMessage(reply);
    } catch (err) {
      // A document that cannot be cloned (should not happen: it is plain data) is this file's failure.
      port.postMessage({ type: 'failed', id: msg.id, error: { name: 'Error', message: `the parsed document could not be returned (${(err as Error).message})` } } satisfies FromWorker);
    }
  };

  port.on('message', (msg: ToWorker) => {
    if (msg.type === 'parse') void run(msg);
    else {
      const p = pending.get(msg.callId);
      if (!p) return;
      pending.delete(msg.callId);
      if (msg.type === 'embedResult') p.resolve(msg.vectors);
      else {
        const e = msg.error.name === 'CancelledError' ? new CancelledError(msg.error.message) : new Error(msg.error.message);
        p.reject(e);
      }
    }
  });
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}

start();
