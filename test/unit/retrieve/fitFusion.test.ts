// Fitting the retrieval fusion (src/core/retrieve/fitFusion.ts): the fit scores each candidate
// with the retriever's own fusion functions, picks the best mean nDCG@10, and is never below BM25
// alone; a dense signal that helps is given weight, one that only hurts is given none.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitFusion, fusedRanking, DENSE_WEIGHT_GRID, FLAT_WEIGHT_GRID, type JudgedQuestion } from '../../../src/core/retrieve/fitFusion';
import { linearFusion } from '../../../src/core/retrieve/hybrid';

const list = (...pairs: Array<[string, number]>) => pairs.map(([id, score]) => ({ id, score }));

/** BM25 puts the gold second behind a lexical decoy; the cosine clearly prefers the gold. */
function helpedByDense(i: number): JudgedQuestion {
  return {
    lexical: list([`decoy${i}`, 10], [`gold${i}`, 9.5], [`x${i}`, 2], [`y${i}`, 1]),
    dense: list([`gold${i}`, 0.9], [`y${i}`, 0.3], [`decoy${i}`, 0.2], [`x${i}`, 0.1]),
    qrels: new Map([[`gold${i}`, 1]]),
  };
}

/** BM25 is right; the cosine prefers a wrong item strongly. */
function hurtByDense(i: number): JudgedQuestion {
  return {
    lexical: list([`gold${i}`, 12], [`x${i}`, 11], [`y${i}`, 2], [`z${i}`, 1]),
    dense: list([`x${i}`, 0.95], [`y${i}`, 0.5], [`z${i}`, 0.4], [`gold${i}`, 0.05]),
    qrels: new Map([[`gold${i}`, 1]]),
  };
}

describe('fitFusion', () => {
  it('gives the cosine weight when it fixes BM25’s order, and reports every candidate', () => {
    const fit = fitFusion([0, 1, 2, 3].map(helpedByDense));
    assert.equal(fit.best.kind, 'linear');
    assert.ok(fit.best.kind === 'linear' && fit.best.dense > 0, JSON.stringify(fit.best));
    assert.equal(fit.ndcg, 1);
    assert.ok(fit.figures.bm25! < 1);
    for (const w of DENSE_WEIGHT_GRID) assert.ok(`linear:${w}` in fit.figures);
    assert.ok('rrf' in fit.figures && 'dense' in fit.figures);
    assert.equal(fit.questions, 4);
  });

  it('gives the cosine no weight when it only hurts, and stays at BM25’s figure', () => {
    const fit = fitFusion([0, 1, 2].map(hurtByDense));
    assert.deepEqual(fit.best, { kind: 'linear', dense: 0, depth: 100 });
    assert.equal(fit.ndcg, fit.figures.bm25);
    assert.ok(fit.figures.rrf! < fit.ndcg);
  });

  it('is never below BM25 alone on a mixture, and leaves out questions with nothing relevant', () => {
    const qs = [...[0, 1, 2].map(helpedByDense), ...[3, 4, 5].map(hurtByDense), { lexical: list(['a', 1]), dense: list(['a', 1]), qrels: new Map([['a', 0]]) }];
    const fit = fitFusion(qs);
    assert.equal(fit.questions, 6);
    assert.ok(fit.ndcg >= fit.figures.bm25!, JSON.stringify(fit.figures));
    const bestCandidate = Math.max(...Object.entries(fit.figures).filter(([k]) => k !== 'bm25' && k !== 'dense').map(([, v]) => v));
    assert.ok(Math.abs(fit.ndcg - bestCandidate) < 1e-9, `${fit.ndcg} vs ${bestCandidate}`);
  });

  it('ranks with the retriever’s own linear fusion', () => {
    const q = helpedByDense(7);
    assert.deepEqual(fusedRanking(q, { kind: 'linear', dense: 0.3, depth: 2 }), linearFusion(q.dense.slice(0, 2), q.lexical.slice(0, 2), 0.3).map((e) => e.id));
    const withFlat = { ...q, flat: list([`x7`, 5], [`gold7`, 4], [`decoy7`, 1]) };
    assert.deepEqual(
      fusedRanking(withFlat, { kind: 'linear', dense: 0.3, depth: 2, flat: 0.4 }),
      linearFusion(q.dense.slice(0, 2), q.lexical.slice(0, 2), 0.3, { list: withFlat.flat.slice(0, 2), weight: 0.4 }).map((e) => e.id),
    );
  });

  it('fits a flat BM25 weight when the questions carry the flat list and it ranks the gold better', () => {
    // Per-field BM25 puts a decoy first, flat BM25 the gold; the cosine is no help (it prefers a third item).
    const qs: JudgedQuestion[] = [0, 1, 2, 3].map((i) => ({
      lexical: list([`decoy${i}`, 10], [`gold${i}`, 8], [`x${i}`, 1]),
      flat: list([`gold${i}`, 6], [`decoy${i}`, 5], [`x${i}`, 1]),
      dense: list([`x${i}`, 0.9], [`decoy${i}`, 0.5], [`gold${i}`, 0.1]),
      qrels: new Map([[`gold${i}`, 1]]),
    }));
    const fit = fitFusion(qs);
    assert.ok(fit.best.kind === 'linear' && (fit.best.flat ?? 0) > 0, JSON.stringify(fit.best));
    assert.equal(fit.ndcg, 1);
    assert.ok(fit.figures.bm25! < 1 && fit.figures['bm25-flat'] === 1, JSON.stringify(fit.figures));
    for (const f of FLAT_WEIGHT_GRID.filter((x) => x > 0)) assert.ok(`linear:0.1+flat:${f}` in fit.figures);
    // Without the flat lists nothing flat is fitted or reported.
    const plain = fitFusion(qs.map(({ flat: _flat, ...q }) => q));
    assert.ok(plain.best.kind === 'linear' && plain.best.flat === undefined);
    assert.ok(!('bm25-flat' in plain.figures) && !Object.keys(plain.figures).some((k) => k.includes('flat')));
  });
});
