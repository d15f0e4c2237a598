// Schema errors name the file and the line; files of a known dataset that are not question
// files say which file to pass instead.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadDataset } from '../../../src/eval/datasets/load';
import { EvalDataError } from '../../../src/eval/datasets/jsonl';

const fx = (p: string) => fileURLToPath(new URL(`../../fixtures/eval/${p}`, import.meta.url));

function failsWith(file: string, pattern: RegExp, line?: number): void {
  assert.throws(
    () => loadDataset(file),
    (err: unknown) => {
      assert.ok(err instanceof EvalDataError, `expected EvalDataError, got ${String(err)}`);
      assert.match(err.message, pattern);
      assert.ok(err.message.startsWith(`${file}:`), `names the file: ${err.message}`);
      if (line !== undefined) assert.equal(err.line, line);
      assert.equal(err.code, 'E_BAD_INPUT');
      return true;
    },
  );
}

describe('schema errors', () => {
  it('a line that is not JSON: file and line', () => failsWith(fx('bad/bad-json.jsonl'), /:2: not valid JSON/, 2));
  it('a field of the wrong type: file, line (blank lines counted) and field', () => failsWith(fx('bad/bad-field.jsonl'), /:3: field "question" must be a string/, 3));
  it('an unknown schema lists the fields it saw', () => failsWith(fx('bad/unknown.jsonl'), /:1: unrecognised schema \(fields: foo, bar\)/, 1));
  it('a pool file is not a questions file', () => failsWith(fx('hotpotqa/pool-00.jsonl'), /pool or corpus file/));
  it('SQuAD articles are not the questions', () => failsWith(fx('squad/articles.jsonl'), /SQuAD articles file; pass the questions file/));
  it('an annotation of an unknown version', () => failsWith(fx('bad/annotation-v9.jsonl'), /:1: annotation format version 9 is not supported/, 1));
  it('a missing file is a not-found error naming it', () => {
    assert.throws(() => loadDataset(fx('bad/nope.jsonl')), /nope\.jsonl: cannot read/);
  });
});
