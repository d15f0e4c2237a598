// The annotation store: round trip, dedupe on add, edit and delete, corrupt lines reported with
// their line number and kept through later changes, and no lost lines under concurrent writers
// in one process and across two processes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { annotationsPath, AnnotationStore, contextFingerprint, makeAnnotation, type Annotation } from '../../../src/core/annotate/store';

function sample(i: number, question = 'Who wrote it?'): Annotation {
  const source = `Intro text. Sentence number ${i} is gold. Outro text.`;
  const start = source.indexOf('Sentence');
  const end = source.indexOf('gold.') + 5;
  return makeAnnotation({
    question,
    anchor: { file: `docs/f${i}.md`, charStart: start, charEnd: end, startLine: 1, startColumn: start, endLine: 1, endColumn: end },
    text: source.slice(start, end),
    context: contextFingerprint(source, start, end),
    author: 'tester',
    time: '2026-01-01T00:00:00.000Z',
    source: 'editor',
  });
}

describe('AnnotationStore', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'canopy-ann-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stores under .canopy/annotations.jsonl and round-trips', async () => {
    const root = path.join(dir, 'ws1');
    const store = new AnnotationStore(annotationsPath(root));
    assert.equal(store.file, path.join(root, '.canopy', 'annotations.jsonl'));
    assert.deepEqual(await store.read(), { annotations: [], corrupt: [] });
    const added = await store.add([sample(1), sample(2), sample(1)]);
    assert.equal(added.length, 2, 'a repeated id is added once');
    assert.equal((await store.add([sample(2)])).length, 0);
    const { annotations } = await store.read();
    assert.deepEqual(annotations, [sample(1), sample(2)]);
    assert.equal(annotations[0]!.version, 1);
    assert.equal(annotations[0]!.context.before, 'Intro text. ');
  });

  it('edits and deletes by id', async () => {
    const store = new AnnotationStore(path.join(dir, 'ws2', 'a.jsonl'));
    await store.add([sample(1), sample(2), sample(3)]);
    assert.equal(await store.update(sample(2).id, { question: 'Changed?', anchor: { ...sample(2).anchor, file: 'moved.md' } }), true);
    assert.equal(await store.remove(sample(1).id), true);
    assert.equal(await store.remove('nope'), false);
    assert.equal(await store.update('nope', { question: 'x' }), false);
    const { annotations } = await store.read();
    assert.deepEqual(
      annotations.map((a) => [a.id, a.question, a.file]),
      [
        [sample(2).id, 'Changed?', 'moved.md'],
        [sample(3).id, 'Who wrote it?', 'docs/f3.md'],
      ],
    );
  });

  it('reports corrupt lines with file and line number and keeps them through changes', async () => {
    const file = path.join(dir, 'ws3', 'a.jsonl');
    const store = new AnnotationStore(file);
    await store.add([sample(1)]);
    const good = (await readFile(file, 'utf8')).trim();
    await writeFile(file, `${good}\n{not json\n\n{"version":2,"id":"x"}\n`);
    const read = await store.read();
    assert.equal(read.annotations.length, 1);
    assert.deepEqual(
      read.corrupt.map((c) => [c.file, c.line, c.raw]),
      [
        [file, 2, '{not json'],
        [file, 4, '{"version":2,"id":"x"}'],
      ],
    );
    assert.match(read.corrupt[1]!.reason, /version/);
    await store.add([sample(2)]);
    await store.remove(sample(1).id);
    const text = await readFile(file, 'utf8');
    assert.ok(text.includes('{not json\n'), 'corrupt line kept verbatim');
    assert.ok(text.includes('{"version":2,"id":"x"}\n'));
    assert.equal((await store.read()).annotations[0]!.id, sample(2).id);
  });

  it('rejects an invalid annotation on add', async () => {
    const store = new AnnotationStore(path.join(dir, 'ws4', 'a.jsonl'));
    await assert.rejects(store.add([{ ...sample(1), source: 'robot' as never }]), /source/);
  });

  it('loses nothing with many concurrent writers in one process', async () => {
    const store = new AnnotationStore(path.join(dir, 'ws5', 'a.jsonl'));
    const other = new AnnotationStore(store.file); // a second handle, as a second panel would have
    await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? store : other).add([sample(i)])));
    await Promise.all([store.remove(sample(0).id), other.update(sample(1).id, { question: 'edited' })]);
    const { annotations, corrupt } = await store.read();
    assert.equal(corrupt.length, 0);
    assert.equal(annotations.length, 29);
    assert.equal(annotations.find((a) => a.id === sample(1).id)!.question, 'edited');
  });

  it('loses nothing with writers in two processes', async () => {
    const file = path.join(dir, 'ws6', 'a.jsonl');
    const storeUrl = path.resolve('src/core/annotate/store.ts');
    const script = `
      const mod = await import(${JSON.stringify(storeUrl)});
      const { AnnotationStore, makeAnnotation } = mod.AnnotationStore ? mod : mod.default;
      const store = new AnnotationStore(${JSON.stringify(file)});
      for (let i = 0; i < 15; i++) {
        await store.add([makeAnnotation({ question: 'child', anchor: { file: 'c' + i + '.md', charStart: 0, charEnd: 1 }, text: 'x', source: 'import', time: 't', author: 'c' })]);
      }`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
    const store = new AnnotationStore(file);
    for (let i = 0; i < 15; i++) await store.add([sample(i, 'parent')]);
    assert.equal(await exited, 0, stderr);
    const { annotations, corrupt } = await store.read();
    assert.equal(corrupt.length, 0);
    assert.equal(annotations.filter((a) => a.question === 'parent').length, 15);
    assert.equal(annotations.filter((a) => a.question === 'child').length, 15);
  });
});
