// Finding the JSON object in a model's reply: fences, prose, reasoning blocks, trailing commas,
// braces inside strings, and replies built to make a naive scan slow.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractJsonObject, looseBoolean, stringList } from '../../../src/core/llm/jsonReply';

const value = (text: string, accept?: (v: Record<string, unknown>) => boolean) => {
  const r = extractJsonObject(text, accept);
  return r.ok ? r.value : r.reason;
};

describe('extractJsonObject', () => {
  it('finds the object behind fences, prose and reasoning', () => {
    assert.deepEqual(value('```json\n{"a": 1}\n```'), { a: 1 });
    assert.deepEqual(value('Here you go: {"a": "}{"} — hope that helps'), { a: '}{' });
    assert.deepEqual(value('<think>maybe {"a": 0}</think>{"a": 2}'), { a: 2 });
    assert.deepEqual(value('{"a": [1, 2,], }'), { a: [1, 2] });
    assert.deepEqual(value('{"note": "x"} then {"sufficient": true}', (v) => 'sufficient' in v), { sufficient: true });
  });

  it('says why when there is no usable object', () => {
    assert.equal(value(''), 'the reply is empty');
    assert.equal(value('<think>still thinking {"a": 1}'), 'the reply holds only reasoning, no answer');
    assert.equal(value('[1, 2]'), 'the reply holds no JSON object');
    assert.equal(value('{"b": 1}', (v) => 'a' in v), 'the reply holds JSON, but not an object of the expected shape');
  });

  it('stays fast on a reply full of unbalanced braces', () => {
    const started = Date.now();
    assert.equal(value('{'.repeat(200_000)), 'the reply holds no JSON object');
    assert.ok(Date.now() - started < 5000, 'guard');
  });

  it('reads booleans and string lists as models write them', () => {
    assert.equal(looseBoolean('Yes'), true);
    assert.equal(looseBoolean(false), false);
    assert.equal(looseBoolean('maybe'), undefined);
    assert.deepEqual(stringList(['a', 3, '  b  c ', ''], 5, 3), ['a', 'b c']);
    assert.deepEqual(stringList('one', 5, 10), ['one']);
  });
});
