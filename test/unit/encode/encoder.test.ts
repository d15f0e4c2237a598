// The long-region strategy and vector helpers shared by every encoder.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { combineWindows, cosine, l2NormalizeInPlace, normalizeText, splitWindows } from '../../../src/core/encode/encoder';

describe('splitWindows', () => {
  it('keeps a short sequence (or an empty one) as one window', () => {
    assert.deepEqual(splitWindows([1, 2, 3], 3), [[0, 3]]);
    assert.deepEqual(splitWindows([], 128), [[0, 0]]);
  });

  it('splits into near-equal windows instead of full ones plus a tiny tail', () => {
    const ids = Array.from({ length: 130 }, (_, i) => i);
    assert.deepEqual(splitWindows(ids, 128), [
      [0, 65],
      [65, 130],
    ]);
  });

  it('moves cuts back to a word start when it can', () => {
    // Word starts every 10 pieces; the equal cut at 50 sits on one, the next at 100 too.
    const ids = Array.from({ length: 100 }, (_, i) => (i % 10 === 0 ? 1 : 0));
    assert.deepEqual(splitWindows(ids, 60, (id) => id === 1), [
      [0, 50],
      [50, 100],
    ]);
    // With word starts every 7 pieces, the cut at 50 moves back to 49.
    const ids7 = Array.from({ length: 100 }, (_, i) => (i % 7 === 0 ? 1 : 0));
    assert.equal(splitWindows(ids7, 60, (id) => id === 1)[0]?.[1], 49);
  });

  it('always covers the sequence with contiguous windows of at most max pieces', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 700 }), fc.integer({ min: 1, max: 130 }), fc.boolean(), (ids, max, aligned) => {
        const ws = splitWindows(ids, max, aligned ? (id) => id === 0 : undefined);
        assert.equal(ws[0]?.[0], 0);
        assert.equal(ws.at(-1)?.[1], ids.length);
        ws.forEach(([s, e], i) => {
          assert.ok(e - s <= max && (e > s || ids.length === 0));
          if (i > 0) assert.equal(s, ws[i - 1]?.[1]);
        });
        assert.ok(ws.length <= Math.ceil(ids.length / max) + 1);
      }),
    );
  });
});

describe('vector helpers', () => {
  it('normalises whitespace', () => {
    assert.equal(normalizeText('  a \n\t b  '), 'a b');
    assert.equal(normalizeText('\n'), '');
  });

  it('combines windows into their normalised mean; one window is returned as is', () => {
    const a = l2NormalizeInPlace(Float32Array.from([1, 0, 0]));
    const b = l2NormalizeInPlace(Float32Array.from([0, 1, 0]));
    assert.equal(combineWindows([a], 3), a);
    const m = combineWindows([a, b], 3);
    assert.ok(Math.abs((m[0] as number) - Math.SQRT1_2) < 1e-7 && Math.abs((m[1] as number) - Math.SQRT1_2) < 1e-7);
    assert.ok(Math.abs(cosine(m, a) - Math.SQRT1_2) < 1e-7);
  });

  it('leaves a zero vector alone and gives cosine 0 with it', () => {
    const z = new Float32Array(3);
    l2NormalizeInPlace(z);
    assert.deepEqual([...z], [0, 0, 0]);
    assert.equal(cosine(z, Float32Array.from([1, 2, 3])), 0);
  });
});
