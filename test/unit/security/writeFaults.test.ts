// Disk-full and read-only-folder errors: every write path (atomic files, the indexer, the
// annotation store, adapter checkpoints) reports a CanopyError E_WRITE naming the file and the
// reason (ENOSPC, EROFS, EACCES, ENOTDIR), and nothing already indexed, annotated or saved is
// lost. Faults are injected at the atomic-write layer (tests run as root, where chmod does not
// stop a write); ENOTDIR comes from a real path under a regular file, which fails for root too.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AnnotationStore, makeAnnotation } from '../../../src/core/annotate/store';
import { CanopyError } from '../../../src/core/errors';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { readCurrent } from '../../../src/core/index/layout';
import { LocalStore } from '../../../src/core/index/localStore';
import { errnoError, injectWriteFault, writeFileAtomic, type WriteStep } from '../../../src/core/store/atomicFile';
import { listCheckpoints, makeCheckpoint, saveCheckpoint } from '../../../src/core/train/checkpoint';
import { indexFolder } from '../../helpers/indexFolder';

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'canopy-faults-'));
});
afterEach(() => {
  injectWriteFault(undefined);
  rmSync(tmp, { recursive: true, force: true });
});

/** Fails every atomic write at `step` with `code` (optionally only for targets matching `only`). */
function failWrites(code: string, step: WriteStep, only?: RegExp): void {
  injectWriteFault((s, target) => (s === step && (!only || only.test(target)) ? errnoError(code, s === 'rename' ? 'rename' : s === 'open' ? 'open' : 'write', target) : undefined));
}

const writeFailure = (file: string | RegExp, code: string, reason: RegExp) => (err: unknown) => {
  assert.ok(err instanceof CanopyError, String(err));
  assert.equal(err.code, 'E_WRITE');
  if (typeof file === 'string') assert.ok(err.message.includes(file), `${err.message} names ${file}`);
  else assert.match(err.message, file);
  assert.match(err.message, new RegExp(`\\(${code}`));
  assert.match(err.message, reason);
  return true;
};

const noTemps = (dir: string) => assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.tmp')), []);

describe('atomic writes under disk faults', () => {
  for (const [code, step, reason] of [
    ['ENOSPC', 'write', /disk is full/],
    ['EROFS', 'open', /read-only/],
    ['EACCES', 'rename', /permission denied/],
  ] as const) {
    it(`${code} at ${step}: E_WRITE names the file and reason; the old content stays; no temporary file is left`, async () => {
      const file = join(tmp, 'data.json');
      await writeFileAtomic(file, '{"v":1}');
      failWrites(code, step);
      await assert.rejects(writeFileAtomic(file, '{"v":2}'), writeFailure(file, code, reason));
      assert.equal(readFileSync(file, 'utf8'), '{"v":1}');
      noTemps(tmp);
      injectWriteFault(undefined);
      await writeFileAtomic(file, '{"v":3}');
      assert.equal(readFileSync(file, 'utf8'), '{"v":3}');
    });
  }

  it('a real ENOTDIR (the folder is a file) is reported the same way', async () => {
    writeFileSync(join(tmp, 'blocker'), 'a file where a folder should be');
    await assert.rejects(writeFileAtomic(join(tmp, 'blocker', 'data.json'), 'x'), writeFailure(join(tmp, 'blocker', 'data.json'), 'ENOTDIR', /path is a file/));
  });
});

describe('indexing under disk faults', () => {
  let root: string;
  let dir: string;
  const indexOnce = () => indexFolder(root, dir);
  beforeEach(() => {
    root = join(tmp, 'ws');
    dir = join(tmp, 'index');
    mkdirSync(root);
    writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
    writeFileSync(join(root, 'ash.md'), '# Ash\n\nAsh dieback is a fungal disease. It kills ash trees.\n');
  });

  for (const [code, step, only, reason] of [
    ['ENOSPC', 'write', /docs/, /disk is full/],
    ['ENOSPC', 'write', /lexical-/, /disk is full/],
    ['EROFS', 'rename', /gen-\d+\.json/, /read-only/],
  ] as const) {
    it(`${code} while writing ${only.source}: the run stops with E_WRITE naming the file; the previous index stays live and complete`, async () => {
      const first = await indexOnce();
      assert.equal(first.files, 2);
      writeFileSync(join(root, 'elm.md'), '# Elm\n\nDutch elm disease spread by beetles. Few elms survived.\n');
      writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe sessile oak prefers dry soil.\n');
      failWrites(code, step, only);
      await assert.rejects(indexOnce(), (err: unknown) => {
        writeFailure(only, code, reason)(err);
        assert.match((err as Error).message, /^Indexing stopped: /);
        assert.match((err as Error).message, /previous index is unchanged/);
        return true;
      });
      injectWriteFault(undefined);
      assert.equal(await readCurrent(dir), first.generation, 'the old generation is still live');
      const corpus = await CorpusIndex.open(new LocalStore(dir));
      assert.deepEqual(Object.keys(corpus.manifest.files).sort(), ['ash.md', 'oak.md']);
      assert.equal(corpus.vectors.size, corpus.itemCount);
      assert.equal(corpus.lexical.size, corpus.itemCount);
      for (const f of Object.keys(corpus.manifest.files)) assert.match(JSON.stringify((await corpus.document(f)).items), /oak|Ash/);
      // With space again, the next run completes and picks up the changes.
      const next = await indexOnce();
      assert.equal(next.files, 3);
      assert.equal(next.errors.length, 0);
    });
  }

  it('an index folder that cannot be created (a file in its path) is a clear E_WRITE, not a crash', async () => {
    writeFileSync(join(tmp, 'blocker'), 'x');
    dir = join(tmp, 'blocker', 'index');
    await assert.rejects(indexOnce(), writeFailure(/Cannot write the index in .*blocker\/index/, 'ENOTDIR', /path is a file/));
  });
});

describe('annotation writes under disk faults', () => {
  const anchor = (n: number) => ({ file: 'notes.md', charStart: n * 10, charEnd: n * 10 + 5, startLine: n + 1 });
  const annotation = (n: number) => makeAnnotation({ question: `Question ${n}?`, anchor: anchor(n), text: `text ${n}`, source: 'editor', author: 'test' });

  for (const [code, step, reason] of [
    ['ENOSPC', 'write', /disk is full/],
    ['EROFS', 'open', /read-only/],
    ['EACCES', 'rename', /permission denied/],
  ] as const) {
    it(`${code}: add/update/remove fail with E_WRITE naming annotations.jsonl; every saved annotation stays; the lock is released`, async () => {
      const store = new AnnotationStore(join(tmp, '.canopy', 'annotations.jsonl'), { lockTimeoutMs: 2_000 });
      await store.add([annotation(1), annotation(2)]);
      const before = readFileSync(store.file, 'utf8');
      failWrites(code, step);
      await assert.rejects(store.add([annotation(3)]), writeFailure(store.file, code, reason));
      await assert.rejects(store.update(annotation(1).id, { text: 'changed' }), writeFailure(store.file, code, reason));
      await assert.rejects(store.remove(annotation(2).id), writeFailure(store.file, code, reason));
      assert.equal(readFileSync(store.file, 'utf8'), before);
      assert.equal(existsSync(`${store.file}.lock`), false, 'no lock left behind');
      noTemps(join(tmp, '.canopy'));
      injectWriteFault(undefined);
      assert.equal((await store.add([annotation(3)])).length, 1);
      assert.deepEqual((await store.read()).annotations.map((a) => a.text), ['text 1', 'text 2', 'text 3']);
    });
  }

  it('an annotations folder under a file (real ENOTDIR) is a clear E_WRITE', async () => {
    writeFileSync(join(tmp, 'blocker'), 'x');
    const store = new AnnotationStore(join(tmp, 'blocker', '.canopy', 'annotations.jsonl'));
    await assert.rejects(store.add([annotation(1)]), writeFailure(store.file, 'ENOTDIR', /path is a file/));
  });
});

describe('checkpoint writes under disk faults', () => {
  const weights = (seed: number) => {
    const dim = 8;
    const rank = 2;
    const A = Float64Array.from({ length: dim * rank }, (_, i) => Math.sin(seed + i));
    const B = Float64Array.from({ length: rank * dim }, (_, i) => Math.cos(seed + i));
    return { dim, rank, A, B };
  };
  const checkpoint = (seed: number) =>
    makeCheckpoint(weights(seed), { baseEncoderId: 'enc', trainedOn: { questions: 1, annotations: 1, pairs: 1, validationPairs: 0 }, metrics: { seed } });

  for (const [code, step, reason] of [
    ['ENOSPC', 'write', /disk is full/],
    ['EROFS', 'open', /read-only/],
  ] as const) {
    it(`${code}: saving fails with E_WRITE naming the checkpoint file; the checkpoints already saved load intact`, async () => {
      const dir = join(tmp, 'adapters');
      const first = await saveCheckpoint(dir, checkpoint(1));
      failWrites(code, step);
      const second = checkpoint(2);
      await assert.rejects(saveCheckpoint(dir, second), writeFailure(join(dir, `${second.id}.json`), code, reason));
      injectWriteFault(undefined);
      const listed = await listCheckpoints(dir);
      assert.deepEqual(listed.map((c) => c.file), [first]);
      noTemps(dir);
    });
  }

  it('a checkpoint folder under a file (real ENOTDIR) is a clear E_WRITE', async () => {
    writeFileSync(join(tmp, 'blocker'), 'x');
    const c = checkpoint(3);
    await assert.rejects(saveCheckpoint(join(tmp, 'blocker', 'adapters'), c), writeFailure(/blocker\/adapters/, 'ENOTDIR', /path is a file/));
  });
});
