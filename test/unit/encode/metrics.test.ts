// nDCG@k as trec_eval computes it (linear gain, log2 discount), on hand-worked examples.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { meanNdcgAtK, ndcgAtK } from '../../../src/core/retrieve/metrics';

const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-12, `${a} != ${b}`);

describe('nDCG@k', () => {
  it('is 1 for the ideal ranking and 0 when nothing relevant is retrieved', () => {
    const qrels = new Map([['d1', 1]]);
    close(ndcgAtK(['d1', 'x', 'y'], qrels, 10), 1);
    close(ndcgAtK(['x', 'y'], qrels, 10), 0);
  });

  it('discounts by log2(rank + 1)', () => {
    // One relevant doc at rank 3: DCG = 1/log2(4) = 0.5; IDCG = 1.
    close(ndcgAtK(['a', 'b', 'd1'], new Map([['d1', 1]]), 10), 0.5);
    // Two relevant (d1, d2) at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
    const expected = (1 / Math.log2(3) + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3));
    close(
      ndcgAtK(
        ['a', 'd1', 'b', 'd2'],
        new Map([
          ['d1', 1],
          ['d2', 1],
        ]),
        10,
      ),
      expected,
    );
  });

  it('uses graded relevance as the gain and cuts at k', () => {
    const qrels = new Map([
      ['hi', 2],
      ['lo', 1],
    ]);
    // Reversed order: DCG = 1 + 2/log2(3); IDCG = 2 + 1/log2(3).
    close(ndcgAtK(['lo', 'hi'], qrels, 10), (1 + 2 / Math.log2(3)) / (2 + 1 / Math.log2(3)));
    // k = 1: only 'lo' counts; IDCG@1 = 2.
    close(ndcgAtK(['lo', 'hi'], qrels, 1), 0.5);
    assert.throws(() => ndcgAtK([], qrels, 0), RangeError);
  });

  it('averages over queries with relevant documents; a missing run scores 0', () => {
    const qrels = new Map([
      ['q1', new Map([['d1', 1]])],
      ['q2', new Map([['d2', 1]])],
      ['q3', new Map([['d3', 0]])],
    ]);
    const runs = new Map([['q1', ['d1']]]);
    assert.deepEqual(meanNdcgAtK(runs, qrels, 10), { mean: 0.5, queries: 2 });
  });
});
