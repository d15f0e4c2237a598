// Model download against a loopback HTTP server started here (127.0.0.1 only): a good
// download, one whose connection drops half-way (resumed with a Range request), a corrupted
// one (sha256 mismatch: nothing installed), and cancellation.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { downloadModel, type ModelFile } from '../../../src/core/encode/download';
import { CancelledError, CanopyError, ErrorCodes } from '../../../src/core/errors';
import type { Logger } from '../../../src/core/ports';

const MODEL = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 2654435761) >>> 24));
const TOKENIZER = Buffer.from(JSON.stringify({ model: { type: 'WordPiece' } }));
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

type Mode = 'good' | 'drop' | 'corrupt' | 'slow' | 'no-range';

interface Hit {
  path: string;
  range: string | undefined;
}

describe('model download', () => {
  let server: Server;
  let base: string;
  let tmp: string;
  const tmps: string[] = [];
  let mode: Mode = 'good';
  let drops = 0;
  const hits: Hit[] = [];

  function serve(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '';
    const range = req.headers.range;
    hits.push({ path, range });
    const body = path === '/model.onnx' ? MODEL : path === '/tokenizer.json' ? TOKENIZER : undefined;
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    let data = mode === 'corrupt' && path === '/model.onnx' ? Buffer.from(body).fill(7, 1000, 1010) : body;
    let status = 200;
    const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
    const m = range && mode !== 'no-range' ? /^bytes=(\d+)-$/.exec(range) : null;
    if (m) {
      const start = Number(m[1]);
      if (start >= data.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${data.length}` }).end();
        return;
      }
      headers['Content-Range'] = `bytes ${start}-${data.length - 1}/${data.length}`;
      data = data.subarray(start);
      status = 206;
    }
    headers['Content-Length'] = String(data.length);
    res.writeHead(status, headers);
    if (path === '/model.onnx' && mode === 'drop' && drops > 0 && !m) {
      // Send half the file, then cut the connection.
      drops--;
      res.write(data.subarray(0, data.length >> 1), () => res.socket?.destroy());
      return;
    }
    if (mode === 'slow' && path === '/model.onnx') {
      res.write(data.subarray(0, 1000));
      setTimeout(() => res.end(data.subarray(1000)), 2000).unref();
      return;
    }
    res.end(data);
  }

  const files = (): ModelFile[] => [
    { name: 'model.onnx', url: `${base}/model.onnx`, sha256: sha(MODEL), bytes: MODEL.length },
    { name: 'tokenizer.json', url: `${base}/tokenizer.json`, sha256: sha(TOKENIZER) },
  ];

  before(async () => {
    server = createServer(serve);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'canopy-download-'));
    tmps.push(tmp);
    hits.length = 0;
    mode = 'good';
    drops = 0;
  });

  it('downloads, verifies and installs every file, reporting progress', async () => {
    const dest = join(tmp, 'model');
    const reports: { done: number; total: number }[] = [];
    const res = await downloadModel({ files: files(), destDir: dest, progress: { report: (p) => reports.push(p) } });
    assert.equal(res.bytes, MODEL.length + TOKENIZER.length);
    assert.ok(readFileSync(join(dest, 'model.onnx')).equals(MODEL));
    assert.ok(readFileSync(join(dest, 'tokenizer.json')).equals(TOKENIZER));
    assert.deepEqual(readdirSync(dest).sort(), ['model.onnx', 'tokenizer.json']);
    assert.equal(existsSync(`${dest}.partial`), false);
    assert.ok(reports.length > 1);
    for (let i = 1; i < reports.length; i++) assert.ok((reports[i]?.done ?? 0) >= (reports[i - 1]?.done ?? 0));
    assert.deepEqual(reports.at(-1), { done: res.bytes, total: res.bytes, message: 'installed' });
  });

  it('resumes with a Range request when the connection drops mid-way', async () => {
    mode = 'drop';
    drops = 1;
    const dest = join(tmp, 'model');
    const logs: string[] = [];
    const logger: Logger = { log: (_l, m) => logs.push(m) };
    await downloadModel({ files: files(), destDir: dest, logger });
    assert.ok(readFileSync(join(dest, 'model.onnx')).equals(MODEL));
    const modelHits = hits.filter((h) => h.path === '/model.onnx');
    assert.equal(modelHits.length, 2);
    assert.equal(modelHits[0]?.range, undefined);
    assert.match(modelHits[1]?.range ?? '', /^bytes=\d+-$/);
    const resumedAt = Number(/bytes=(\d+)-/.exec(modelHits[1]?.range ?? '')?.[1]);
    assert.ok(resumedAt > 0 && resumedAt < MODEL.length, `resumed at ${resumedAt}`);
    assert.ok(logs.some((l) => /interrupted/.test(l)));
  });

  it('keeps the partial file when out of attempts, and the next call resumes it', async () => {
    mode = 'drop';
    drops = 1;
    const dest = join(tmp, 'model');
    await assert.rejects(downloadModel({ files: files(), destDir: dest, maxAttempts: 1 }), (err: unknown) => {
      assert.ok(err instanceof CanopyError);
      assert.equal(err.code, ErrorCodes.downloadFailed);
      assert.match(err.message, /interrupted.*resume/);
      return true;
    });
    assert.equal(existsSync(dest), false, 'nothing installed');
    assert.ok(existsSync(join(`${dest}.partial`, 'model.onnx.partial')));
    hits.length = 0;
    await downloadModel({ files: files(), destDir: dest, maxAttempts: 1 });
    assert.match(hits.find((h) => h.path === '/model.onnx')?.range ?? '', /^bytes=[1-9]\d*-$/);
    assert.ok(readFileSync(join(dest, 'model.onnx')).equals(MODEL));
  });

  it('restarts from zero when the server ignores the Range header', async () => {
    const dest = join(tmp, 'model');
    mkdirSync(`${dest}.partial`, { recursive: true });
    writeFileSync(join(`${dest}.partial`, 'model.onnx.partial'), MODEL.subarray(0, 5000));
    mode = 'no-range';
    await downloadModel({ files: files(), destDir: dest });
    assert.ok(readFileSync(join(dest, 'model.onnx')).equals(MODEL));
  });

  it('discards a file whose sha256 does not match and installs nothing', async () => {
    mode = 'corrupt';
    const dest = join(tmp, 'model');
    await assert.rejects(downloadModel({ files: files(), destDir: dest }), (err: unknown) => {
      assert.ok(err instanceof CanopyError);
      assert.equal(err.code, ErrorCodes.downloadFailed);
      assert.match(err.message, /sha256/);
      assert.ok(err.message.includes(sha(MODEL)));
      return true;
    });
    assert.equal(existsSync(dest), false);
    assert.equal(existsSync(join(`${dest}.partial`, 'model.onnx.partial')), false, 'bad bytes are not kept for resuming');
    assert.equal(existsSync(join(`${dest}.partial`, 'model.onnx')), false);
  });

  it('replaces an existing model folder only once the new one is complete', async () => {
    const dest = join(tmp, 'model');
    mkdirSync(dest);
    writeFileSync(join(dest, 'model.onnx'), 'old');
    mode = 'corrupt';
    await assert.rejects(downloadModel({ files: files(), destDir: dest }));
    assert.equal(readFileSync(join(dest, 'model.onnx'), 'utf8'), 'old');
    mode = 'good';
    await downloadModel({ files: files(), destDir: dest });
    assert.ok(readFileSync(join(dest, 'model.onnx')).equals(MODEL));
    // No staging folder and no set-aside old folder left behind.
    assert.deepEqual(readdirSync(tmp), ['model']);
  });

  it('stops with CancelledError when the signal fires, installing nothing', async () => {
    mode = 'slow';
    const dest = join(tmp, 'model');
    const ac = new AbortController();
    const pending = downloadModel({ files: files(), destDir: dest, signal: ac.signal, progress: { report: () => ac.abort() } });
    await assert.rejects(pending, CancelledError);
    assert.equal(existsSync(dest), false);
  });

  it('rejects a non-http URL and a malformed digest before fetching anything', async () => {
    const dest = join(tmp, 'model');
    await assert.rejects(downloadModel({ files: [{ name: 'm', url: 'file:///etc/passwd', sha256: sha(MODEL) }], destDir: dest }), /http/);
    await assert.rejects(downloadModel({ files: [{ name: 'm', url: `${base}/model.onnx`, sha256: 'abc' }], destDir: dest }), /sha256/);
    await assert.rejects(downloadModel({ files: [{ name: '../escape', url: `${base}/model.onnx`, sha256: sha(MODEL) }], destDir: dest }), /relative path/);
    assert.equal(hits.length, 0);
  });

  after(() => {
    for (const t of tmps) rmSync(t, { recursive: true, force: true });
  });
});
