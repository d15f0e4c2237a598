// The inspector's Training view data (src/extension/views/trainingReport.ts): checkpoints as the
// trainer writes them → the protocol's report, newest first, the active one by resolved path, odd
// or older checkpoints read defensively, and the result always valid protocol.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { makeCheckpoint, type AdapterCheckpoint } from '../../../src/core/train/checkpoint';
import type { SideMetrics } from '../../../src/contracts/training';
import type { TrainRunReport } from '../../../src/core/train/run';
import type { ScoringReport } from '../../../src/core/train/scoringReport';
import { checkpointSummary, trainingFigures, trainingReport } from '../../../src/extension/views/trainingReport';

const prefs = () => ({ pairs: 4, identical: 0, itemsWithGold: 2, itemsWithoutGold: 1, perRule: { refine: 3, 'keep-whole': 1 } });
import { validateHostToWebview } from '../../../src/protocol/validate';

const side = (over: Partial<SideMetrics> = {}): SideMetrics => ({
  decisionAccuracy: 0.5,
  decisions: 10,
  pairAccuracy: 0.4,
  pairs: 20,
  goldRecall: 0.9,
  goldSpans: 30,
  evidenceTokens: 1200,
  wholeTokens: 2000,
  tokenShare: 0.6,
  prunedItemShare: 0.25,
  items: 8,
  questions: 3,
  ...over,
});

function checkpoint(seed: number, createdAt: string, metrics?: Record<string, unknown>): AdapterCheckpoint {
  const w = { dim: 2, rank: 1, A: Float64Array.from([seed, 0]), B: Float64Array.from([0, 1]) };
  return makeCheckpoint(w, {
    baseEncoderId: 'enc-1',
    trainedOn: { questions: 5, annotations: 12, pairs: 40, validationPairs: 6 },
    metrics: metrics ?? {
      training: { bestEpoch: 3, epochs: [{}, {}, {}, {}], options: { seed, rank: 1 } },
      report: { before: side(), after: side({ decisionAccuracy: 0.7, evidenceTokens: 900, tokenShare: 0.45 }) },
      heldOutQuestions: ['a', 'b', 'c'],
      recipe: { prunePairs: true, balanceRules: true, selection: 'recall-guard', blend: 0.5, validation: 0.25, holdout: 0.2 },
      validation: { before: side(), after: side({ goldRecall: 0.95 }) },
    },
    createdAt,
  });
}

const message = (report: unknown) => ({ kind: 'notify', method: 'inspector/showTraining', params: { report } });

describe('training report view data', () => {
  it('summarises checkpoints newest first, marks the active one by resolved path, and is valid protocol', () => {
    const older = { file: path.resolve('/ws/.canopy/adapters/a.json'), checkpoint: checkpoint(1, '2026-01-01T00:00:00.000Z') };
    const newer = { file: path.resolve('/store/adapters/b.json'), checkpoint: checkpoint(2, '2026-02-01T00:00:00.000Z') };
    const r = trainingReport([older, newer], '/ws/.canopy/adapters/../adapters/a.json');
    assert.deepEqual(
      r.checkpoints.map((c) => [c.id, c.active]),
      [
        [newer.checkpoint.id, false],
        [older.checkpoint.id, true],
      ],
    );
    assert.equal(r.activeNote, undefined);
    const c = r.checkpoints[1]!;
    assert.equal(c.seed, 1);
    assert.equal(c.bestEpoch, 3);
    assert.equal(c.epochs, 4);
    assert.equal(c.heldOutQuestions, 3);
    assert.equal(c.recipe, 'recall-guarded selection, blend 0.5, §10 + prune-sibling pairs, rules balanced, validation 0.25, held back 0.2');
    assert.deepEqual(c.before, side());
    assert.equal(c.after?.decisionAccuracy, 0.7);
    assert.equal(c.validation?.after.goldRecall, 0.95);
    assert.deepEqual(c.trainedOn, { questions: 5, annotations: 12, pairs: 40, validationPairs: 6 });
    assert.equal(validateHostToWebview(message(r)).ok, true);
  });

  it('says when the active setting names a checkpoint it does not list; the same id found twice is listed once', () => {
    const one = checkpoint(1, '2026-01-01T00:00:00.000Z');
    const r = trainingReport(
      [
        { file: '/a/x.json', checkpoint: one },
        { file: '/b/x.json', checkpoint: one },
      ],
      '/elsewhere/gone.json',
    );
    assert.equal(r.checkpoints.length, 1);
    assert.equal(r.checkpoints[0]!.active, false);
    assert.match(r.activeNote ?? '', /gone\.json/);
    assert.equal(trainingReport([], '').activeNote, undefined);
  });

  it('reads older or odd checkpoints defensively: missing or non-finite figures are left out, never sent', () => {
    const bare = checkpointSummary(checkpoint(1, '2026-01-01T00:00:00.000Z', {}), false);
    assert.equal(bare.before, undefined);
    assert.equal(bare.seed, undefined);
    assert.equal(bare.recipe, undefined);
    const odd = checkpointSummary(
      checkpoint(2, '2026-01-01T00:00:00.000Z', {
        training: { options: { seed: 'x' } },
        report: { before: side({ goldRecall: Number.NaN }), after: side() },
        validation: { before: null, after: side() },
      }),
      false,
    );
    assert.equal(odd.before, undefined, 'a report with a NaN figure is left out whole');
    assert.equal(odd.after, undefined);
    assert.equal(odd.validation, undefined);
    assert.equal(odd.seed, undefined);
    assert.equal(trainingFigures(side({ decisionAccuracy: 1.0000001 }))?.decisionAccuracy, 1, 'shares are clamped to [0, 1]');
    const cv = checkpointSummary(checkpoint(3, '2026-01-01T00:00:00.000Z', { recipe: { selection: 'cross-validated', folds: 5, prunePairs: true, balanceRules: true, blend: 1, holdout: 0.2 } }), false);
    assert.equal(cv.recipe, 'cross-validated selection (5 folds), §10 + prune-sibling pairs, rules balanced, held back 0.2');
    assert.equal(validateHostToWebview(message({ checkpoints: [bare, odd] })).ok, true);
  });

  it('a run with scoring fits: both described in words, the held-back figures carried, and the report valid protocol', () => {
    const scoring: ScoringReport = {
      fusion: {
        adopted: true,
        reason: 'higher mean nDCG@10 on the 3 held-back question(s)',
        questions: { train: 9, heldBack: 3, unjudged: 0 },
        before: { kind: 'rrf', rrfK: 60 },
        after: { kind: 'linear', dense: 0.1, depth: 100 },
        trainNdcg: 0.9,
        heldBack: { questions: 3, before: 0.81, after: 0.93, beforeFusion: { kind: 'rrf', rrfK: 60 } },
      },
      nodeScore: {
        before: { dense: 1, lexical: 0 },
        after: { dense: 1, lexical: 0.5, model: 'coverage' },
        train: { before: side(), after: side({ evidenceTokens: 800 }) },
        heldBack: { before: side(), after: side({ evidenceTokens: 700, tokenShare: 0.35 }) },
        adopted: true,
        reason: 'better',
        candidates: 15,
      },
      profile: { file: '/ws/.canopy/index/retrieval-profile.json' },
    };
    const run = { questions: { total: 12, train: 9, validation: 0, heldOut: 3 }, annotations: { total: 12, corrupt: [], relocation: { unchanged: 12, moved: 0, context: 0, fuzzy: 0, lost: 0, unchecked: 0 } }, preferences: { train: prefs(), validation: prefs(), heldOut: prefs() }, prunePairs: { train: 0, validation: 0 }, scoring } as unknown as TrainRunReport;
    const r = trainingReport([], '', run);
    const s = r.lastRun!.scoring!;
    assert.deepEqual(s.fusion, { adopted: true, reason: scoring.fusion.reason, before: 'RRF k=60', after: 'BM25 + 0.1 × cosine (top 100 of each)', questions: { train: 9, heldBack: 3, unjudged: 0 }, heldBack: { questions: 3, before: 0.81, after: 0.93 } });
    assert.equal(s.nodeScore.before, 'dense cosine alone');
    assert.equal(s.nodeScore.after, '1 × dense + 0.5 × lexical (coverage)');
    assert.equal(s.nodeScore.heldBack!.after.evidenceTokens, 700);
    assert.equal(s.profileFile, scoring.profile!.file);
    assert.equal(validateHostToWebview({ kind: 'notify', method: 'inspector/showTraining', params: { report: r } }).ok, true);
    // Without a scoring fit the run summary has none.
    assert.equal(trainingReport([], '', { ...run, scoring: undefined } as TrainRunReport).lastRun!.scoring, undefined);
  });

  it('the protocol refuses malformed reports', () => {
    const good = trainingReport([{ file: '/a.json', checkpoint: checkpoint(1, '2026-01-01T00:00:00.000Z') }], '');
    assert.equal(validateHostToWebview(message(good)).ok, true);
    const bad = structuredClone(good);
    bad.checkpoints[0]!.before!.goldRecall = 1.5;
    assert.match((validateHostToWebview(message(bad)) as { error: { message: string } }).error.message, /goldRecall must be from 0 to 1/);
    assert.equal(validateHostToWebview(message({ checkpoints: 'none' })).ok, false);
    assert.equal(validateHostToWebview({ kind: 'notify', method: 'inspector/showTraining', params: { report: good, extra: 1 } }).ok, false);
  });
});
