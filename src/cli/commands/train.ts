/**
 * `canopy train --annotations <file>`: trains the node-encoder adapter on a workspace's gold
 * annotations, prints the held-back before/after report and writes a checkpoint. Node and query
 * vectors come through the workspace's embedding cache (`<dir>/.canopy/index/embeddings`), the
 * same one `canopy index` fills, so an indexed corpus is never encoded again.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { resolveSettings } from '../../core/config/settings';
import { listCheckpoints } from '../../core/train/checkpoint';
import { formatScoring } from '../../core/app/scoringFit';
import { formatBeforeAfter } from '../../core/train/report';
import { formatAskFit } from '../../core/train/askFit';
import type { TrainSelection } from '../../core/train/run';
import { type CliIO, UsageError } from '../io';
import { cliServices, requireFolder } from '../runtime';

export const trainHelp = `Usage: canopy train --annotations <file> [options]
       canopy train --list [--dir <dir>] [--out <dir>] [--json]

Train the node-encoder adapter (W = I + A·B, query encoder frozen) on gold annotations and
report refinement-decision accuracy, gold recall, evidence tokens and pruned items on
held-back questions, untrained vs trained. On the same split it also fits the retrieval fusion
(BM25 + w × cosine or RRF, by nDCG@10 over the index) and the CANOPY rule's node-score weights
(dense cosine + lexical evidence), reports each before/after on the held-back questions, and
writes the ones that are better there into <index>/retrieval-profile.json, which later questions
with this encoder use (a fit that is not better is reported and not adopted).

Options:
  --annotations <file>   annotations JSONL (e.g. <dir>/.canopy/annotations.jsonl)
  --dir <dir>            the workspace the annotations' paths are relative to (default .)
  --index <dir>          the index whose embedding cache is used (default <dir>/.canopy/index)
  --out <dir>            checkpoint folder (default <dir>/.canopy/adapters)
  --seed <n>             seed for the split, initialisation and shuffling (default 1)
  --rank <n>             adapter rank (default 16)
  --epochs <n>           most epochs (default 30; early stopping on a validation split)
  --lr <x>               learning rate (default 0.003)
  --holdout <share>      share of questions held back for the report (default 0.2)
  --branching <B>        branching factor for the trees (default: the setting, 2)
  --select <how>         how the epoch and blend are chosen, on training questions only:
                         cross-validated (default: k folds; the candidate with the surest gold-recall
                         gain among those with higher decision accuracy, fewer tokens and no lower
                         recall than untrained; then a refit on all training questions),
                         recall-guard (one validation split) or loss (validation ranking loss)
  --folds <k>            folds for cross-validated selection (default 4)
  --validation <share>   share of the training questions carved off for recall-guard / loss
                         selection (default 0.1)
  --no-prune-pairs       train on the §10 pairs only (default: also prune-sibling pairs, a partly
                         gold parent over each of its gold-free children; see docs/annotations.md)
  --no-balance-rules     do not weight pairs so each rule (refine, keep-whole, prune-sibling)
                         carries an equal share of the loss (default: balanced)
  --no-blend             do not choose a blend weight α ∈ {0.25, 0.5, 0.75, 1} between the
                         untrained and the trained node vectors (default: chosen, except with
                         --select loss)
  --prune-pairs, --balance-rules, --blend
                         the defaults, accepted for older command lines
  --no-fit-scoring       train the adapter only (no fusion or node-score fit)
  --list                 list the checkpoints in the checkpoint folder, newest first, with their
                         held-back figures (pick one — or an earlier one, to roll back — with
                         canopy ask/eval --adapter <file>, or the canopy.adapter.checkpoint setting)
  --json                 print the whole report as one JSON object`;

function num(value: string | undefined, flag: string, check: (n: number) => boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || !check(n)) throw new UsageError(`${flag} has an invalid value "${value}"`);
  return n;
}

export async function runTrain(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      annotations: { type: 'string' },
      dir: { type: 'string' },
      index: { type: 'string' },
      out: { type: 'string' },
      seed: { type: 'string' },
      rank: { type: 'string' },
      epochs: { type: 'string' },
      lr: { type: 'string' },
      holdout: { type: 'string' },
      branching: { type: 'string' },
      select: { type: 'string' },
      'balance-rules': { type: 'boolean' },
      'prune-pairs': { type: 'boolean' },
      blend: { type: 'boolean' },
      'no-balance-rules': { type: 'boolean' },
      'no-prune-pairs': { type: 'boolean' },
      'no-blend': { type: 'boolean' },
      folds: { type: 'string' },
      validation: { type: 'string' },
      json: { type: 'boolean' },
      list: { type: 'boolean' },
      'no-fit-scoring': { type: 'boolean' },
    },
  });
  if (values.list) {
    const root = path.resolve(io.cwd, values.dir ?? '.');
    return listAdapters(values.out ? path.resolve(io.cwd, values.out) : path.join(root, '.canopy', 'adapters'), values.json ?? false, io);
  }
  if (!values.annotations) throw new UsageError('--annotations <file> is required');
  const root = requireFolder(values.dir ?? '.', io);
  const seed = num(values.seed, '--seed', Number.isInteger);
  const rank = num(values.rank, '--rank', (n) => Number.isInteger(n) && n >= 1 && n <= 256);
  const epochs = num(values.epochs, '--epochs', (n) => Number.isInteger(n) && n >= 1);
  const lr = num(values.lr, '--lr', (n) => n > 0);
  const holdout = num(values.holdout, '--holdout', (n) => n > 0 && n < 1);
  const validation = num(values.validation, '--validation', (n) => n >= 0 && n < 1);
  const folds = num(values.folds, '--folds', (n) => Number.isInteger(n) && n >= 2 && n <= 20);
  const branching = num(values.branching, '--branching', (n) => Number.isInteger(n) && n >= 2 && n <= 4);
  const selectValues: readonly TrainSelection[] = ['cross-validated', 'recall-guard', 'loss'];
  if (values.select !== undefined && !selectValues.includes(values.select as TrainSelection)) throw new UsageError('--select must be cross-validated, recall-guard or loss');
  const selection = values.select as TrainSelection | undefined;
  for (const flag of ['prune-pairs', 'balance-rules', 'blend'] as const) {
    if (values[flag] && values[`no-${flag}`]) throw new UsageError(`--${flag} and --no-${flag} contradict each other`);
  }
  if (values.blend && selection === 'loss') throw new UsageError('--blend needs --select cross-validated or recall-guard');
  if (folds !== undefined && selection !== undefined && selection !== 'cross-validated') throw new UsageError('--folds is for --select cross-validated');
  if (validation !== undefined && (selection ?? 'cross-validated') === 'cross-validated') throw new UsageError('--validation is for --select recall-guard or loss (cross-validation uses every training question)');
  const services = cliServices(root, values.index, io);
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  try {
    const result = await services.training.train(resolveSettings(branching !== undefined ? { branchingFactor: branching } : {}), {
      annotationsFile: path.resolve(io.cwd, values.annotations),
      outDir: values.out ? path.resolve(io.cwd, values.out) : path.join(root, '.canopy', 'adapters'),
      ...(holdout !== undefined ? { holdout } : {}),
      ...(selection ? { selection } : {}),
      ...(folds !== undefined ? { folds } : {}),
      ...(values['no-balance-rules'] ? { balanceRules: false } : {}),
      ...(values['no-prune-pairs'] ? { prunePairs: false } : {}),
      ...(values['no-blend'] ? { blend: false } : {}),
      ...(validation !== undefined ? { validation } : {}),
      ...(values['no-fit-scoring'] ? { fitScoring: false } : {}),
      train: { ...(seed !== undefined ? { seed } : {}), ...(rank !== undefined ? { rank } : {}), ...(epochs !== undefined ? { epochs } : {}), ...(lr !== undefined ? { learningRate: lr } : {}) },
      signal: abort.signal,
      progress: { report: ({ done, total, message }) => io.isTTY && io.err(`  ${message ?? ''} ${done}/${total}`) },
    });
    if (values.json) io.out(JSON.stringify(result));
    else {
      const r = result;
      io.out(`annotations: ${r.annotations.total} (${r.annotations.relocation.lost} lost, ${r.annotations.corrupt.length} corrupt line(s))`);
      io.out(`questions: ${r.questions.train} train, ${r.questions.validation} validation, ${r.questions.heldOut} held back`);
      io.out(`pairs: ${r.preferences.train.pairs} train (refine ${r.preferences.train.perRule.refine}, keep-whole ${r.preferences.train.perRule['keep-whole']}), ${r.preferences.validation.pairs} validation`);
      if (r.prunePairs.train > 0) io.out(`prune-sibling pairs: ${r.prunePairs.train} train, ${r.prunePairs.validation} validation`);
      const cv = r.selection.crossValidation;
      if (cv) {
        const v = (m: typeof cv.baseline) => `decision acc ${(100 * m.decisionAccuracy).toFixed(1)}%, gold recall ${(100 * m.goldRecall).toFixed(1)}%, tokens ${m.evidenceTokens}`;
        const c = cv.chosen;
        io.out(
          `selection (${cv.folds}-fold cross-validation over ${cv.questions} training questions, ${cv.epochsRun} epochs): untrained ${v(cv.baseline)}; ` +
            (c
              ? `chosen epoch ${c.epoch}${c.blend !== 1 ? `, blend ${c.blend}` : ''}: ${v(c.metrics)}, recall gain ≥ ${(100 * c.recallGainLowerBound).toFixed(1)} points (95 %); refit on all for ${c.steps} steps`
              : 'no epoch had higher decision accuracy, fewer tokens and no lower recall: the untrained encoder is kept'),
        );
      } else if (r.selection.baseline && r.selection.chosen) {
        const v = (m: typeof r.selection.baseline) => `decision acc ${(100 * m.decisionAccuracy).toFixed(1)}%, gold recall ${(100 * m.goldRecall).toFixed(1)}%, tokens ${m.evidenceTokens}`;
        io.out(`selection (${r.questions.validation} validation questions): untrained ${v(r.selection.baseline)}; chosen epoch ${r.training.bestEpoch}${r.selection.blend !== 1 ? `, blend ${r.selection.blend}` : ''}: ${v(r.selection.chosen)}`);
      }
      if (cv) io.out(`loss: ${r.training.initialTrainLoss.toFixed(4)} → ${r.training.finalTrainLoss.toFixed(4)} (refit on all training questions, ${r.training.steps} steps)`);
      else io.out(`loss: ${r.training.initialTrainLoss.toFixed(4)} → ${r.training.finalTrainLoss.toFixed(4)} (validation ${r.training.initialValidationLoss.toFixed(4)} → ${r.training.finalValidationLoss.toFixed(4)}, best epoch ${r.training.bestEpoch})`);
      if (r.ask) for (const line of formatAskFit(r.ask)) io.out(line);
      else {
        io.out(`held back (${r.report.before.questions} questions):`);
        for (const line of formatBeforeAfter(r.report)) io.out(`  ${line}`);
      }
      if (r.scoring) for (const line of formatScoring(r.scoring)) io.out(line);
      if (r.reader) {
        const f = r.reader;
        io.out(`reader model (${f.base}, fine-tuned on ${f.questions.train} question(s)): [1] on a gold span, held back ${f.before.firstOnGold}${f.after ? ` → ${f.after.firstOnGold}` : ''} of ${f.before.questions}; ${f.written ? `written to ${f.written.file}` : 'not written'} — ${f.reason}`);
      }
      if (r.checkpoint) io.out(`checkpoint: ${r.checkpoint.file}${r.ask ? ' (use it with --adapter, or the canopy.adapter.checkpoint setting)' : ''}`);
      else if (r.checkpointSkipped) io.out(r.checkpointSkipped);
    }
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
    await services.close();
  }
}

async function listAdapters(dir: string, json: boolean, io: CliIO): Promise<number> {
  const found = await listCheckpoints(dir);
  const rows = found.map(({ file, checkpoint: c }) => {
    const r = (c.metrics.report ?? {}) as { before?: Record<string, number>; after?: Record<string, number> };
    return { id: c.id, file, createdAt: c.createdAt, baseEncoderId: c.baseEncoderId, trainedOn: c.trainedOn, recipe: c.metrics.recipe, heldOut: { before: r.before, after: r.after } };
  });
  if (json) {
    io.out(JSON.stringify({ dir, checkpoints: rows }));
    return 0;
  }
  if (rows.length === 0) {
    io.out(`no adapter checkpoints in ${dir}`);
    return 0;
  }
  const pct = (x: number | undefined) => (typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '?');
  for (const r of rows) {
    const b = r.heldOut.before;
    const a = r.heldOut.after;
    io.out(`${r.id}  ${r.createdAt}  ${r.trainedOn.questions} questions`);
    io.out(`  held back: decision acc ${pct(b?.decisionAccuracy)} → ${pct(a?.decisionAccuracy)}, gold recall ${pct(b?.goldRecall)} → ${pct(a?.goldRecall)}, tokens ${b?.evidenceTokens ?? '?'} → ${a?.evidenceTokens ?? '?'}`);
    io.out(`  ${r.file}`);
  }
  return 0;
}
