// Canopy's annotation JSONL (version 1): the writer and the reader agree, and a bad line names
// its file and line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATION_FORMAT_VERSION, formatAnnotation, readAnnotations } from '../../../src/eval/annotations';

describe('annotation format', () => {
  it('round-trips through formatAnnotation and readAnnotations; anchors default to the line’s file', () => {
    const a = { question: 'Who?', file: 'docs/a.md', anchors: [{ file: 'docs/a.md', charStart: 3, charEnd: 9 }, { file: 'docs/a.md', page: 2, bbox: [1, 2, 3, 4] as [number, number, number, number] }], text: 'abcdef', answer: 'Ada' };
    const line = formatAnnotation(a);
    const parsed = JSON.parse(line);
    assert.equal(parsed.version, ANNOTATION_FORMAT_VERSION);
    assert.equal(parsed.anchors[0].file, undefined, 'the line’s own file is not repeated per anchor');
    const [back] = readAnnotations('mem.jsonl', `${line}\n`);
    assert.deepEqual(back, { version: 1, ...a });
  });

  it('rejects anchors that locate nothing, half char ranges and paths leaving the workspace', () => {
    const bad = [
      [{ version: 1, question: 'q', file: 'a.md', anchors: [{}], text: '' }, /:1: "anchors"\[0\] locates nothing/],
      [{ version: 1, question: 'q', file: 'a.md', anchors: [{ charStart: 1 }], text: '' }, /needs both charStart and charEnd/],
      [{ version: 1, question: 'q', file: '../a.md', anchors: [{ row: 1 }], text: '' }, /workspace-relative path/],
      [{ version: 1, question: 'q', file: 'a.md', anchors: [], text: '' }, /"anchors" is empty/],
    ] as const;
    for (const [value, pattern] of bad) assert.throws(() => readAnnotations('mem.jsonl', `${JSON.stringify(value)}\n`), pattern);
  });
});
