// Large inputs that once overflowed the call stack: `Math.max(...rows)` and `out.push(...nodes)`
// pass every element as an argument, which throws past ~100,000 of them. A CSV of 150,000
// one-cell rows (300 KB) failed with "Maximum call stack size exceeded" before the fix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxOf, minOf, pushAll } from '../../../src/core/arrays';
import { parseFile } from '../../../src/core/ingest/parseFile';

const N = 150_000;
const bytes = (s: string) => new TextEncoder().encode(s);

describe('large inputs parse without overflowing the stack', () => {
  it('the helpers handle a million elements', () => {
    const xs = Array.from({ length: 1_000_000 }, (_, i) => i);
    assert.equal(maxOf(xs, (x) => x), 999_999);
    assert.equal(minOf(xs, (x) => -x), -999_999);
    assert.equal(pushAll([-1], xs).length, 1_000_001);
    assert.equal(maxOf([], (x: number) => x), -Infinity);
    assert.throws(() => Math.max(...xs), RangeError, 'the spread form does overflow here, so this test can fail');
  });

  it(`a CSV of ${N.toLocaleString('en')} one-cell rows`, async () => {
    const doc = await parseFile('big.csv', bytes('a\n'.repeat(N)), {});
    assert.equal(doc.format, 'csv');
    assert.ok(doc.items.length > 0);
  });
});
