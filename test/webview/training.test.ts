/**
 * Webview tier, the Training view: real adapter checkpoints trained by the real trainer on a small
 * fixture (dataset gold imported into a workspace, TrainingService.train with the built-in
 * encoder; the recall-guarded recipe with one validation split, which shows the report's
 * validation table — "Canopy: Train Node Adapter" runs the cross-validated default instead),
 * read back with listCheckpoints and turned into the protocol's `inspector/showTraining` report by
 * the extension's own code (views/trainingReport.ts), then rendered by the real inspector page in
 * headless Chromium. Asserts the figures on the page are the run's and the checkpoints' figures.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { importGold } from '../../src/core/annotate/importGold';
import { annotationsPath, AnnotationStore } from '../../src/core/annotate/store';
import type { TestServices } from '../helpers/services';
import { listCheckpoints } from '../../src/core/train/checkpoint';
import type { SideMetrics } from '../../src/contracts/training';
import type { TrainRunReport } from '../../src/core/train/run';
import type { AskTrace } from '../../src/contracts/trace';
import { describeFusion } from '../../src/core/app/scoringFit';
import { describeWeights } from '../../src/core/train/nodeScoreFit';
import { trainingReport } from '../../src/extension/views/trainingReport';
import { PROTOCOL_VERSION, type HostToWebviewMessage, type TrainingReport } from '../../src/protocol/messages';
import { validateHostToWebview } from '../../src/protocol/validate';
import { InspectorServer, keepScreenshot, closeBrowser, openBrowser, openInspector, postFromHost, repoRoot, stubRecord } from './harness';
import { openWorkspace } from './realTraces';

const hello: HostToWebviewMessage = { kind: 'notify', method: 'host/hello', params: { protocolVersion: PROTOCOL_VERSION, view: { title: 'Canopy Evidence Inspector', message: 'No question asked yet.' } } };
const showTraining = (report: TrainingReport): HostToWebviewMessage => ({ kind: 'notify', method: 'inspector/showTraining', params: { report } });

// The same formatting the view promises: shares with one decimal, tokens with thousands commas.
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const int = (x: number) => x.toLocaleString('en-US');
const expectedCells = (m: SideMetrics) => ({
  decisionAccuracy: `${pct(m.decisionAccuracy)} (${int(m.decisions)})`,
  pairAccuracy: `${pct(m.pairAccuracy)} (${int(m.pairs)})`,
  goldRecall: `${pct(m.goldRecall)} (${int(m.goldSpans)} spans)`,
  evidenceTokens: `${int(m.evidenceTokens)} (${pct(m.tokenShare)} of whole)`,
  prunedItemShare: `${pct(m.prunedItemShare)} (${int(m.items)} items)`,
});

describe('the Training view with real checkpoints', () => {
  let browser: Browser;
  let server: InspectorServer;
  let root: string;
  let ws: TestServices;
  let closeWs: () => Promise<void>;
  let outDir: string;
  /** The recall-guarded recipe (one validation split), seed 3; and plain §10 pairs by validation loss, seed 5. */
  let recipe: TrainRunReport;
  let plain: TrainRunReport;
  /** What the Train command runs (issue 36): fitted to and measured with the ask's configuration. */
  let asked: TrainRunReport;
  let trace: AskTrace;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'canopy-wv-train-'));
    // Four small HotpotQA-style questions: the fixture slice twice, under other ids.
    const src = readFileSync(join(repoRoot, 'test', 'fixtures', 'annotate', 'hotpot_slice.jsonl'), 'utf8').trim().split('\n');
    const rows = [...src, ...src.map((l) => JSON.stringify({ ...(JSON.parse(l) as object), _id: `${(JSON.parse(l) as { _id: string })._id}-b` }))];
    writeFileSync(join(root, 'slice.jsonl'), `${rows.join('\n')}\n`);
    const folder = join(root, 'ws');
    const imported = await importGold(join(root, 'slice.jsonl'), folder, { time: '2026-01-01T00:00:00.000Z' });
    await new AnnotationStore(annotationsPath(folder)).add(imported.annotations);
    ({ ws, close: closeWs } = await openWorkspace(folder));
    outDir = join(root, 'adapters');
    const common = { annotationsFile: annotationsPath(folder), outDir, holdout: 0.25 };
    recipe = await ws.training.train(ws.settings, { ...common, askFit: false, prunePairs: true, balanceRules: true, selection: 'recall-guard', blend: true, validation: 0.25, train: { seed: 3, rank: 4, epochs: 12, learningRate: 0.02, batchSize: 4 } });
    plain = await ws.training.train(ws.settings, { ...common, askFit: false, selection: 'loss', prunePairs: false, balanceRules: false, blend: false, train: { seed: 5, rank: 4, epochs: 12, learningRate: 0.02, batchSize: 4, patience: 12 } });
    asked = await ws.training.train(ws.settings, { ...common, outDir: join(root, 'adapters-ask'), scoringDryRun: true, train: { seed: 3, rank: 4, epochs: 12, learningRate: 0.02, batchSize: 4 } });
    trace = (await ws.ask.ask('Which city hosts the museum founded by Ada Byrne?', ws.settings)).trace;
    server = await InspectorServer.start();
    browser = await openBrowser();
  });

  after(async () => {
    await closeBrowser(browser);
    await server?.close();
    await closeWs?.();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** The report the extension sends after the recipe run, with the seed-3 checkpoint active. */
  async function report(o: { active?: string; run?: TrainRunReport | null } = {}): Promise<TrainingReport> {
    const run = o.run === null ? undefined : (o.run ?? recipe);
    return trainingReport(await listCheckpoints(outDir), o.active ?? recipe.checkpoint!.file, run);
  }

  async function open(): Promise<Page> {
    const page = await openInspector(browser, server.inspectorPage());
    await page.setViewportSize({ width: 1000, height: 900 });
    await postFromHost(page, hello);
    return page;
  }

  test('the report message is valid protocol and lists both checkpoints, newest first, with the active one', async () => {
    const r = await report();
    assert.equal(validateHostToWebview(showTraining(r)).ok, true);
    assert.deepEqual(
      r.checkpoints.map((c) => c.id),
      [plain.checkpoint!.id, recipe.checkpoint!.id],
    );
    const page = await open();
    try {
      await postFromHost(page, showTraining(r));
      assert.equal(await page.getAttribute('#app', 'data-state'), 'training');
      assert.equal(await page.textContent('#app h1'), 'Node adapter training');
      const ids = await page.$$eval('.canopy-checkpoint', (els) => els.map((e) => (e as HTMLElement).dataset.checkpointId));
      assert.deepEqual(ids, [plain.checkpoint!.id, recipe.checkpoint!.id]);
      assert.equal(await page.textContent('.canopy-training-active'), `Questions use the adapter ${recipe.checkpoint!.id}.`);
      const active = page.locator(`.canopy-checkpoint[data-checkpoint-id="${recipe.checkpoint!.id}"]`);
      assert.equal(await active.locator('.canopy-active-badge').count(), 1);
      assert.equal(await active.locator('.canopy-new-badge').count(), 1, 'the run just finished is marked');
      assert.equal(await page.locator(`.canopy-checkpoint[data-checkpoint-id="${plain.checkpoint!.id}"] .canopy-active-badge`).count(), 0);
      const { cspViolations } = await stubRecord(page);
      assert.deepEqual(cspViolations, []);
      assert.equal(await page.locator('.canopy-error').count(), 0);
      await keepScreenshot(page, 'training-report');
    } finally {
      await page.close();
    }
  });

  test('each checkpoint shows its held-back before/after figures, seed, rank, epoch and recipe as the trainer wrote them', async () => {
    const page = await open();
    try {
      await postFromHost(page, showTraining(await report()));
      for (const [run, seed] of [
        [recipe, 3],
        [plain, 5],
      ] as const) {
        const section = page.locator(`.canopy-checkpoint[data-checkpoint-id="${run.checkpoint!.id}"]`);
        const held = section.locator('table.canopy-heldout');
        for (const [side, metrics] of [
          ['before', run.report.before],
          ['after', run.report.after],
        ] as const) {
          const want = expectedCells(metrics);
          for (const [metric, text] of Object.entries(want)) {
            assert.equal(await held.locator(`tr[data-metric="${metric}"] td[data-side="${side}"]`).textContent(), text, `${run.checkpoint!.id} ${metric} ${side}`);
          }
        }
        const d = run.report.after.decisionAccuracy - run.report.before.decisionAccuracy;
        assert.equal(await held.locator('tr[data-metric="decisionAccuracy"] td[data-side="change"]').textContent(), `${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs(100 * d).toFixed(1)} pts`);
        assert.match((await held.locator('caption').textContent()) ?? '', new RegExp(`Held-back questions \\(${run.questions.heldOut}\\)`));
        assert.equal(await section.locator('dd[data-prop="seed"]').textContent(), String(seed));
        assert.equal(await section.locator('dd[data-prop="rank"]').textContent(), '4');
        const stored = (await listCheckpoints(outDir)).find((f) => f.checkpoint.id === run.checkpoint!.id)!.checkpoint;
        assert.equal(
          await section.locator('dd[data-prop="trained-on"]').textContent(),
          `${run.questions.train} questions, ${stored.trainedOn.annotations} annotations, ${stored.trainedOn.pairs} pairs (${stored.trainedOn.validationPairs} validation pairs)`,
        );
        assert.match((await section.locator('dd[data-prop="epoch"]').textContent()) ?? '', new RegExp(`^${run.training.bestEpoch}\\b.* of ${run.training.epochs.length}$`));
        assert.equal(await section.locator('dd[data-prop="held-back"]').textContent(), `${run.questions.heldOut} question${run.questions.heldOut === 1 ? '' : 's'}`);
      }
      const recipeSection = page.locator(`.canopy-checkpoint[data-checkpoint-id="${recipe.checkpoint!.id}"]`);
      const recipeText = (await recipeSection.locator('dd[data-prop="recipe"]').textContent()) ?? '';
      assert.match(recipeText, /recall-guarded selection/);
      assert.match(recipeText, /prune-sibling pairs/);
      assert.match(recipeText, /rules balanced/);
      // Recall-guarded selection keeps the validation figures that chose the epoch.
      const v = recipe.selection;
      assert.ok(v.baseline && v.chosen);
      assert.equal(await recipeSection.locator('table.canopy-validation tr[data-metric="goldRecall"] td[data-side="before"]').textContent(), expectedCells(v.baseline).goldRecall);
      assert.equal(await recipeSection.locator('table.canopy-validation tr[data-metric="goldRecall"] td[data-side="after"]').textContent(), expectedCells(v.chosen).goldRecall);
      const plainSection = page.locator(`.canopy-checkpoint[data-checkpoint-id="${plain.checkpoint!.id}"]`);
      assert.match((await plainSection.locator('dd[data-prop="recipe"]').textContent()) ?? '', /selection by validation loss, §10 pairs/);
      assert.equal(await plainSection.locator('table.canopy-validation').count(), 0);
    } finally {
      await page.close();
    }
  });

  test('the last run shows its split and the §10 preference counts per split', async () => {
    const page = await open();
    try {
      await postFromHost(page, showTraining(await report()));
      const split = (await page.textContent('.canopy-training-split')) ?? '';
      const q = recipe.questions;
      assert.ok(split.includes(`${recipe.annotations.total} annotations (${recipe.annotations.relocation.lost} lost, 0 corrupt lines)`), split);
      assert.ok(recipe.annotations.total > 1 && q.total > 1, 'plural figures in this fixture');
      assert.ok(split.includes(`${q.total} questions: ${q.train} training, ${q.validation} validation, ${q.heldOut} held back.`), split);
      assert.ok(split.includes(`Prune-sibling pairs added: ${recipe.prunePairs.train} training`), split);
      for (const [key, counts] of Object.entries(recipe.preferences)) {
        const row = page.locator(`table.canopy-training-preferences tr[data-split="${key}"]`);
        const cells = {
          pairs: counts.pairs,
          refine: counts.perRule.refine,
          keepWhole: counts.perRule['keep-whole'],
          identical: counts.identical,
          itemsWithGold: counts.itemsWithGold,
          itemsWithoutGold: counts.itemsWithoutGold,
        };
        for (const [k, n] of Object.entries(cells)) assert.equal(await row.locator(`td[data-count="${k}"]`).textContent(), int(n), `${key} ${k}`);
      }
      assert.ok(recipe.preferences.train.pairs > 0, 'the fixture gives training pairs');
    } finally {
      await page.close();
    }
  });

  test('the last run shows the retrieval fusion and node-score fits beside the adapter, in use vs fitted on the held-back questions', async () => {
    const s = recipe.scoring;
    assert.ok(s, 'the Train command fits the scoring weights too');
    const page = await open();
    try {
      await postFromHost(page, showTraining(await report()));
      const section = page.locator('.canopy-training-run .canopy-training-scoring');
      assert.equal(await section.count(), 1);
      // Fusion: what was in use and the verdict, with the reason the run gave (this fixture has too few questions to fit on).
      assert.equal(await section.locator('table.canopy-scoring-fusion tr[data-metric="fusion"] td[data-side="before"]').textContent(), describeFusion(s.fusion.before));
      assert.equal(await section.locator('[data-verdict="fusion"]').textContent(), `${s.fusion.adopted ? 'Adopted' : 'Not adopted'}: ${s.fusion.reason}.`);
      assert.equal(await section.locator('table.canopy-scoring-fusion tr[data-metric="ndcg"]').count(), s.fusion.heldBack ? 1 : 0);
      // Node scores: the weights in words and the report's figures for both on the held-back questions.
      assert.equal(await section.locator('dd[data-prop="node-before"]').textContent(), describeWeights(s.nodeScore.before));
      assert.equal(await section.locator('dd[data-prop="node-after"]').textContent(), describeWeights(s.nodeScore.after));
      const h = s.nodeScore.heldBack;
      const table = section.locator('table.canopy-scoring-node');
      assert.equal(await table.count(), h ? 1 : 0);
      if (h) {
        for (const [side, metrics] of [
          ['before', h.before],
          ['after', h.after],
        ] as const) {
          for (const [metric, text] of Object.entries(expectedCells(metrics))) assert.equal(await table.locator(`tr[data-metric="${metric}"] td[data-side="${side}"]`).textContent(), text, `${metric} ${side}`);
        }
      }
      assert.equal(await section.locator('[data-verdict="node-score"]').textContent(), `${s.nodeScore.adopted ? 'Adopted' : 'Not adopted'}: ${s.nodeScore.reason}.`);
      assert.match((await section.locator('.canopy-scoring-profile').textContent()) ?? '', s.profile ? /^Written to .*retrieval-profile\.json; later questions with this encoder use it\.$/ : /^The retrieval profile was not changed\.$/);
      await keepScreenshot(page, 'training-scoring');
    } finally {
      await page.close();
    }
  });

  test("the last run shows what the ask keeps: the configuration in use and fitted, measured the ask's way, the plain rule's figures beside, and the verdict", async () => {
    const a = asked.ask;
    assert.ok(a?.heldBack, 'the Train command measures the ask');
    const page = await open();
    try {
      await postFromHost(page, showTraining(await report({ run: asked })));
      const section = page.locator('.canopy-training-run .canopy-training-ask');
      assert.equal(await section.count(), 1);
      assert.equal(await section.locator('dd[data-prop="ask-before"]').textContent(), a.describe.before);
      assert.match(a.describe.before, /rank gate 0\.3 \(at least 4 items; items ≤ 800 characters whole\), glimpse 1/);
      assert.equal(await section.locator('dd[data-prop="ask-after"]').textContent(), `${a.describe.after}; adapter blend ${a.blend}`);
      for (const [cls, before, after] of [
        ['canopy-ask-heldout', a.heldBack.before, a.heldBack.after],
        ['canopy-ask-plain', a.heldBack.plain.before, a.heldBack.plain.after],
      ] as const) {
        const table = section.locator(`table.${cls}`);
        for (const [side, metrics] of [
          ['before', before],
          ['after', after],
        ] as const) {
          for (const [metric, text] of Object.entries(expectedCells(metrics))) assert.equal(await table.locator(`tr[data-metric="${metric}"] td[data-side="${side}"]`).textContent(), text, `${cls} ${metric} ${side}`);
        }
      }
      assert.equal(await section.locator('[data-verdict="ask"]').textContent(), `${a.adopted ? 'Adopted' : 'Not adopted'}: ${a.reason}.`);
      assert.equal(await section.locator('.canopy-ask-skipped').count(), asked.checkpointSkipped ? 1 : 0);
      await keepScreenshot(page, 'training-ask');
    } finally {
      await page.close();
    }
  });

  test('with the untrained encoder active and no run, nothing is marked; "Back to the answer" returns to the shown answer', async () => {
    const page = await open();
    try {
      await postFromHost(page, { kind: 'notify', method: 'inspector/showTrace', params: { trace } });
      assert.equal(await page.getAttribute('#app', 'data-state'), 'trace');
      await postFromHost(page, showTraining(await report({ active: '', run: null })));
      assert.equal(await page.textContent('.canopy-training-active'), 'Questions use the untrained encoder.');
      assert.equal(await page.locator('.canopy-active-badge, .canopy-new-badge, .canopy-training-run').count(), 0);
      await page.click('.canopy-training-back');
      assert.equal(await page.getAttribute('#app', 'data-state'), 'trace');
      assert.equal(await page.textContent('#app h1'), trace.question);
    } finally {
      await page.close();
    }
  });

  test('strings from a checkpoint file (a workspace may ship one) are rendered as text, never markup', async () => {
    const found = await listCheckpoints(outDir);
    const payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const evil = { ...found[0]!, checkpoint: { ...found[0]!.checkpoint, id: `adapter-${payload}`, baseEncoderId: payload, createdAt: `2099-01-01T00:00:00.000Z${payload}` } };
    const page = await open();
    try {
      await postFromHost(page, showTraining(trainingReport([evil], evil.file)));
      const section = page.locator('.canopy-checkpoint').first();
      assert.equal(await section.locator('h2').textContent(), `adapter-${payload}`);
      assert.equal(await section.locator('dd[data-prop="encoder"]').textContent(), payload);
      assert.equal(await page.locator('#app img, #app script').count(), 0);
      assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      assert.deepEqual((await stubRecord(page)).cspViolations, []);
    } finally {
      await page.close();
    }
  });

  test('no checkpoint yet: an empty state says how to get one; a malformed report is refused whole', async () => {
    const page = await open();
    try {
      await postFromHost(page, showTraining({ checkpoints: [] }));
      assert.match((await page.textContent('.canopy-empty')) ?? '', /No adapter trained yet/);
      const bad = await report();
      (bad.checkpoints[0]!.before as { goldRecall: number }).goldRecall = 7;
      await postFromHost(page, showTraining(bad));
      assert.match((await page.textContent('.canopy-error')) ?? '', /goldRecall must be from 0 to 1/);
      assert.equal(await page.locator('.canopy-checkpoint').count(), 0, 'nothing of the bad report is painted');
    } finally {
      await page.close();
    }
  });
});
