// Adapter training parses its candidate files in the parse workers, under canopy.maxParseMemoryMB
// (issue 18: it parsed them in the extension host, outside the memory-limited pool). A file whose
// parse exhausts a 64 MB worker is left out with the pool's E_MEMORY_LIMIT message naming it, and
// training goes on with the other files; in-process, the same file parsed without complaint.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importGold } from '../../../src/core/annotate/importGold';
import { annotationsPath, AnnotationStore } from '../../../src/core/annotate/store';
import { openServices, type TestServices } from '../../helpers/services';

// Unclosed emphasis openers cost over 150× the file's size in live heap (test/unit/security/parseMemoryLimit.test.ts):
// 450 KB of them does not fit in a 64 MB worker, and parses fine in a 1 GB host.
const hostileMarkdown = () => Buffer.from('_a '.repeat(150_000));

describe('TrainingService', () => {
  let root: string;
  let ws: TestServices;
  let folder: string;
  let hostileFile: string;
  const logs: string[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'canopy-train-svc-'));
    const src = readFileSync(new URL('../../fixtures/annotate/hotpot_slice.jsonl', import.meta.url), 'utf8').trim().split('\n');
    const rows = [...src, ...src.map((l) => JSON.stringify({ ...(JSON.parse(l) as object), _id: `${(JSON.parse(l) as { _id: string })._id}-b` }))];
    writeFileSync(join(root, 'slice.jsonl'), `${rows.join('\n')}\n`);
    folder = join(root, 'ws');
    const imported = await importGold(join(root, 'slice.jsonl'), folder, { time: '2026-01-01T00:00:00.000Z' });
    await new AnnotationStore(annotationsPath(folder)).add(imported.annotations);
    // A hostile file beside a gold file: training reads every file of a gold file's folder.
    const dir = dirname(imported.annotations[0]!.file);
    hostileFile = dir === '.' ? 'zz-hostile.md' : `${dir}/zz-hostile.md`;
    writeFileSync(join(folder, hostileFile), hostileMarkdown());
    ws = openServices({ root: folder, indexDir: join(root, 'index'), settings: { maxParseMemoryMB: 64 }, logger: { log: (level, message) => logs.push(`${level}: ${message}`) } });
  });

  after(async () => {
    await ws?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('parses the candidate files in the workers; a file over the memory limit is left out, named', async () => {
    const report = await ws.training.train(ws.settings, {
      annotationsFile: annotationsPath(folder),
      holdout: 0.25,
      selection: 'loss',
      prunePairs: false,
      balanceRules: false,
      blend: false,
      train: { seed: 1, rank: 4, epochs: 2, learningRate: 0.02, batchSize: 4 },
    });
    assert.ok(report.preferences.train.pairs > 0, 'training had pairs from the other files');
    const pool = ws.parseWorkers.pool(64);
    assert.ok(pool.counters.inWorker > 0, 'files were parsed in workers');
    assert.equal(pool.counters.inProcess, 0, 'no file was parsed in this thread');
    assert.equal(pool.counters.memoryLimit, 1, 'the hostile file ran its worker out of memory');
    const warning = logs.find((l) => l.includes(hostileFile));
    assert.ok(warning, logs.join('\n'));
    assert.match(warning, /^warn: .*memory limit of 64 MB \(canopy\.maxParseMemoryMB\).*its items are left out$/);
  });
});
