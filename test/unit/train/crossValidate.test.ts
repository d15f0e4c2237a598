// Cross-validated selection, the default recipe: folds partition the training questions, the
// recall gain's lower bound is a paired one over questions, and the criterion prefers the surest
// recall gain among candidates with higher accuracy, fewer tokens and no lower recall — never a
// more accurate candidate that loses recall, and the smaller blend on a tie.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { betterCandidate, dealFolds, recallGainBound, scoreCandidate } from '../../../src/core/train/crossValidate';
import { zeroCounts, type QuestionCounts } from '../../../src/core/train/report';

/** One question: `kept` of `spans` gold spans recalled, `agreed` of 10 decisions right, `tokens` kept. */
function q(kept: number, agreed: number, tokens: number, spans = 2): QuestionCounts {
  return { ...zeroCounts(), goldSpans: spans, goldKept: kept, decisions: 10, agreed, pairs: 10, pairsAgreed: agreed, evidenceTokens: tokens, wholeTokens: 200, items: 10 };
}

describe('cross-validated selection', () => {
  it('deals every key into exactly one fold, seeded and independent of input order', () => {
    const keys = Array.from({ length: 23 }, (_, i) => `k${i}`);
    const folds = dealFolds(keys, 4, 5);
    assert.equal(folds.length, 4);
    assert.deepEqual(folds.flat().sort(), [...keys].sort());
    assert.ok(folds.every((f) => f.length === 5 || f.length === 6));
    assert.deepEqual(dealFolds([...keys].reverse(), 4, 5), folds);
    assert.notDeepEqual(dealFolds(keys, 4, 6), folds);
  });

  it('bounds the recall gain from below with the paired spread over questions', () => {
    const before = [q(1, 5, 100), q(1, 5, 100), q(2, 5, 100), q(2, 5, 100)];
    // +1 span on two questions, none lost: gain 2/8; spread of (1, 1, 0, 0) = sd 0.577.
    const up = recallGainBound(before, [q(2, 5, 100), q(2, 5, 100), q(2, 5, 100), q(2, 5, 100)]);
    assert.equal(up.gain, 0.25);
    assert.ok(Math.abs(up.lowerBound - (0.25 - (1.645 * Math.sqrt(1 / 3) * 2) / 8)) < 1e-12);
    // The same net gain from +2 and −1 and +1 is less certain.
    const mixed = recallGainBound(before, [q(2, 5, 100), q(0, 5, 100), q(2, 5, 100), q(2, 5, 100)]);
    assert.ok(mixed.gain < up.gain && mixed.lowerBound < up.lowerBound);
    assert.deepEqual(recallGainBound(before, before), { gain: 0, lowerBound: 0 });
  });

  it('keeps out a more accurate candidate that loses recall, and prefers the surest recall gain', () => {
    const before = [q(1, 3, 100), q(1, 3, 100), q(2, 3, 100), q(2, 3, 100)];
    const loses = scoreCandidate(5, 1, before, [q(1, 9, 50), q(0, 9, 50), q(2, 9, 50), q(2, 9, 50)]);
    assert.equal(loses.eligible, false, 'lower recall');
    const moreTokens = scoreCandidate(1, 0.25, before, [q(2, 4, 120), q(2, 4, 120), q(2, 4, 120), q(2, 4, 120)]);
    assert.equal(moreTokens.eligible, false, 'more tokens');
    const ties = scoreCandidate(4, 0.5, before, [q(1, 7, 80), q(1, 7, 80), q(2, 7, 80), q(2, 7, 80)]);
    const gains = scoreCandidate(2, 0.5, before, [q(2, 5, 90), q(2, 5, 90), q(2, 5, 90), q(2, 5, 90)]);
    assert.ok(ties.eligible && gains.eligible);
    // The recall gain's bound beats the tie's higher accuracy (the tie is what failed seed 3).
    assert.ok(betterCandidate(gains, ties));
    assert.ok(!betterCandidate(ties, gains));
    assert.ok(betterCandidate(ties, loses), 'eligible first, whatever the accuracy');
    // Equal in everything but α: the smaller blend wins.
    const smaller = { ...gains, blend: 0.25 };
    assert.ok(betterCandidate(smaller, gains) && !betterCandidate(gains, smaller));
  });
});
