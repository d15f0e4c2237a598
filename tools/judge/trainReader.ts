/**
 * Step 2 (`npm run train:judge -- reader`): the reader model, trained on the dumped questions of
 * every development set at once, and measured on each set's held-back half through the product's
 * own reader (src/core/read/extractiveReader.ts with the fitted model):
 *  - `[1] answers`: the first citation is a positive leaf (labels.ts), over questions where some
 *    quotable leaf of the evidence is one;
 *  - `answer holds it`: the answer's text holds an answer string, over questions with answer
 *    strings that the evidence holds;
 * each beside the same figures of a leave-one-dataset-out model (trained without that set).
 * Each question weighs the same within its set and each set the same in all, so no set is louder
 * for being larger. Writes the model file (src/core/judge/models/reader.json with --write) and a
 * JSON report. `--cross` adds the leave-one-dataset-out comparison cross-fitted over both halves
 * (each question read by models that did not see it), for sets too small for one half to measure.
 *
 *   node --import tsx tools/judge/trainReader.ts --dumps <dir> [--seed 1] [--l2 0.001] [--write] [--report <file>] [--drop <feature,…>] [--measure <set,…>] [--cross] [--unsure-quotes <n>]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LinearModel, JUDGE_MODEL_SCHEMA, JUDGE_MODEL_VERSION, type JudgeModelFile } from '../../src/core/judge/linearModel';
import { ExtractiveReader, type ExtractiveOptions } from '../../src/core/read/extractiveReader';
import { containsAnswer, normalizeAnswer } from '../../src/eval/answers';
import { calibrate, fitListwise } from '../../src/core/train/listwise';
import { answerBearing } from './labels';
import { questionRows, readDumps, type QuestionRows } from './readerData';

const repo = resolve(__dirname, '../..');

/** The product reader's other options where the command sets them (`--unsure-quotes 2`: the answer length before the unsure rule). */
let readerOptions: Pick<ExtractiveOptions, 'maxQuotesUnsure'> = {};

/** The share of [1]'s probability a further quote must reach: the reader's default (extractiveReader.ts). */
const SHARE = 0.5;

export interface SetFigures {
  questions: number;
  answerable: number;
  firstAnswers: number;
  withAnswers: number;
  answerHolds: number;
  lowConfidence: number;
  /** Some citation of the answer is a positive leaf. */
  someAnswers: number;
  /** Citations over all questions (their mean is the answer's length in quotes). */
  citations: number;
  /** Questions with gold leaves in the evidence, and those whose [1] is one (a gold sentence, row, paragraph or page). */
  withGold: number;
  firstOnGold: number;
}

/** Feature names in a stable order: those seen, general ones first as the feature table lists them. */
function featureNames(data: readonly QuestionRows[]): string[] {
  const seen = new Set<string>();
  for (const q of data) for (const r of q.rows) for (const k of Object.keys(r.features)) seen.add(k);
  return [...seen].sort((a, b) => Number(a.startsWith('filing_')) - Number(b.startsWith('filing_')) || a.localeCompare(b));
}

export function trainModel(data: readonly QuestionRows[], features: readonly string[], l2: number, id: string, training: Record<string, unknown>): JudgeModelFile {
  const rows = data.flatMap((q) => q.rows.map((r) => ({ q, r })));
  // Centre and scale over the rows that have each feature; a missing value is the centre (no contribution).
  const center = features.map((f) => {
    const vs = rows.map(({ r }) => r.features[f]).filter((v): v is number => v !== undefined);
    return vs.length > 0 ? vs.reduce((a, b) => a + b, 0) / vs.length : 0;
  });
  const scale = features.map((f, i) => {
    const vs = rows.map(({ r }) => r.features[f]).filter((v): v is number => v !== undefined);
    const sd = vs.length > 1 ? Math.sqrt(vs.reduce((a, v) => a + (v - center[i]!) ** 2, 0) / vs.length) : 1;
    return sd > 1e-9 ? sd : 1;
  });
  const sets = new Map<string, number>();
  for (const q of data) if (q.rows.length > 0) sets.set(q.dataset, (sets.get(q.dataset) ?? 0) + 1);
  const z = (r: { features: Record<string, number> }) => features.map((f, i) => (r.features[f] === undefined ? 0 : (r.features[f]! - center[i]!) / scale[i]!));
  // Each question weighs 1 in its set, each set the same overall.
  const questionWeight = (q: QuestionRows) => data.length / (sets.size * sets.get(q.dataset)!);
  // The ranking direction, listwise: within a question, the softmax mass on its answering leaves.
  const groups = data.filter((q) => q.rows.length > 1 && q.answerable).map((q) => ({ x: q.rows.map(z), y: q.rows.map((r) => r.label), weight: questionWeight(q) }));
  const direction = fitListwise(groups, features.length, { l2 });
  // The probability: one scale and offset on the direction's score, fitted on every labelled row (each question weighing 1 in its set).
  const scores = rows.map(({ r }) => z(r).reduce((a, x, j) => a + x * direction[j]!, 0));
  const { scale: a, offset } = calibrate(
    scores,
    rows.map(({ r }) => r.label),
    rows.map(({ q }) => (questionWeight(q) * rows.length) / (data.length * q.rows.length)),
  );
  const fit = { weights: direction.map((w) => w * a), bias: offset, iterations: 400 };
  const y = rows.map(({ r }) => r.label);
  return {
    schema: JUDGE_MODEL_SCHEMA,
    version: JUDGE_MODEL_VERSION,
    id,
    kind: 'reader',
    features: [...features],
    center: center.map(round6),
    scale: scale.map(round6),
    weights: fit.weights.map(round6),
    bias: round6(fit.bias),
    training: { ...training, rows: rows.length, positives: y.filter((v) => v === 1).length, iterations: fit.iterations },
  };
}

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

/** The highest probability of [1] below which [1] answers less than a quarter of the time (at most 0.5). */
export function confidenceThreshold(p1: ReadonlyArray<{ p: number; right: boolean }>): number {
  const sorted = [...p1].sort((a, b) => a.p - b.p);
  let threshold = 0;
  let right = 0;
  sorted.forEach((x, i) => {
    if (x.right) right++;
    if (i >= 9 && right / (i + 1) < 0.25) threshold = x.p;
  });
  return Math.min(0.5, threshold);
}

/** The product reader with `model` on each held-back question: [1] a positive, the answer holding an answer string. */
export async function measure(model: LinearModel, data: readonly QuestionRows[], share = SHARE): Promise<{ figures: SetFigures; p1: Array<{ p: number; right: boolean }> }> {
  const reader = new ExtractiveReader({ model, relativeSupport: share, ...readerOptions });
  const figures: SetFigures = { questions: 0, answerable: 0, firstAnswers: 0, withAnswers: 0, answerHolds: 0, lowConfidence: 0, someAnswers: 0, citations: 0, withGold: 0, firstOnGold: 0 };
  const p1: Array<{ p: number; right: boolean }> = [];
  for (const q of data) {
    figures.questions++;
    const answer = await reader.answer(q.record.question, { text: '', tokens: 0, truncated: false, regions: q.regions });
    // [1] is the quote itself: a neighbour attached before it for reading (the antecedent of its pronoun) carries no judgment.
    const first = answer.citations.find((c) => c.judgment !== undefined) ?? answer.citations[0];
    if (q.answerable && answer.citations.some((c) => q.labels.get(c.nodeId) === 1)) figures.someAnswers++;
    const gold = new Set(q.record.gold.flatMap((g) => g.leafIds));
    if (q.regions.some((r) => anyLeaf(r.node, (l) => gold.has(l.id)))) {
      figures.withGold++;
      if (first && gold.has(first.nodeId)) figures.firstOnGold++;
    }
    if (answer.notes?.some((n) => n.startsWith('low confidence'))) figures.lowConfidence++;
    figures.citations += answer.citations.length;
    if (q.answerable) {
      figures.answerable++;
      const right = first !== undefined && q.labels.get(first.nodeId) === 1;
      if (right) figures.firstAnswers++;
      if (first?.judgment) p1.push({ p: first.judgment.probability, right });
    }
    const answers = q.record.answers.map(normalizeAnswer).filter((a) => a && a !== 'yes' && a !== 'no');
    const evidenceHolds = q.regions.some((r) => leavesHold(q, r.node));
    if (answers.length > 0 && evidenceHolds) {
      figures.withAnswers++;
      const text = normalizeAnswer(answer.citations.map((c) => c.text).join(' '));
      if (answers.some((a) => containsAnswer(text, a)) || answer.citations.some((c) => answerBearing(q.record, { ...leafOf(q, c.nodeId) }))) figures.answerHolds++;
    }
  }
  return { figures, p1 };
}

function leafOf(q: QuestionRows, id: string) {
  for (const r of q.regions) {
    const stack = [r.node];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.id === id) return n;
      stack.push(...n.children);
    }
  }
  return { id, kind: 'sentence' as const, modality: 'text' as const, text: '', anchor: { file: '' }, children: [] };
}

function anyLeaf(node: QuestionRows['regions'][number]['node'], test: (leaf: QuestionRows['regions'][number]['node']) => boolean): boolean {
  return node.children.length === 0 ? test(node) : node.children.some((c) => anyLeaf(c, test));
}

function leavesHold(q: QuestionRows, node: QuestionRows['regions'][number]['node']): boolean {
  if (node.children.length === 0) return answerBearing(q.record, node);
  return node.children.some((c) => leavesHold(q, c));
}

/** Two sets of figures added, field by field. */
function addFigures(a: SetFigures, b: SetFigures): SetFigures {
  const out = { ...a };
  for (const k of Object.keys(out) as Array<keyof SetFigures>) out[k] = a[k] + b[k];
  return out;
}

const pct = (a: number, b: number) => (b > 0 ? `${((100 * a) / b).toFixed(1)}%` : '—');

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dumps: { type: 'string' }, seed: { type: 'string' }, l2: { type: 'string' }, write: { type: 'boolean' }, report: { type: 'string' }, lodo: { type: 'string' }, baseline: { type: 'string' }, share: { type: 'string' }, drop: { type: 'string' }, measure: { type: 'string' }, cross: { type: 'boolean' }, 'unsure-quotes': { type: 'string' } } });
  if (values['unsure-quotes'] !== undefined) readerOptions = { maxQuotesUnsure: Number(values['unsure-quotes']) };
  // Sets only measured, never trained on: every question of theirs is held back (`--measure docs`: the documentation set, read by a model of the development sets alone).
  const measureOnly = new Set((values.measure ?? '').split(',').filter(Boolean));
  // Features left out of the model (an ablation: `--drop row,code`).
  const drop = new Set((values.drop ?? '').split(',').filter(Boolean));
  const namesOf = (data: readonly QuestionRows[]) => featureNames(data).filter((f) => !drop.has(f));
  const share = values.share !== undefined ? Number(values.share) : SHARE;
  // Another reader's answers on the same dumps ({dataset, questionId, first, cited, text}[]), measured beside the model.
  const baseline = values.baseline
    ? new Map((JSON.parse(readFileSync(resolve(values.baseline), 'utf8')) as Array<{ dataset: string; questionId: string; first?: string; cited: string[]; text: string }>).map((b) => [`${b.dataset}\u0000${b.questionId}`, b]))
    : undefined;
  if (!values.dumps) throw new Error('usage: trainReader.ts --dumps <dir> [--seed 1] [--l2 0.001] [--write] [--report <file>] [--lodo squad,nq,hotpotqa,financebench]');
  const seed = Number(values.seed ?? 1);
  const l2 = Number(values.l2 ?? 0.001);
  const records = readDumps(resolve(values.dumps));
  process.stderr.write(`reader: ${records.length} questions from ${values.dumps}\n`);
  const all = records.map((r) => questionRows(r, seed));
  const train = all.filter((q) => q.split === 'train' && !measureOnly.has(q.dataset));
  const test = all.filter((q) => q.split === 'test' || measureOnly.has(q.dataset));
  const features = namesOf(train);
  const datasets = [...new Set(all.map((q) => q.dataset))].sort();
  const trainedSets = datasets.filter((d) => !measureOnly.has(d));
  const stamp = new Date().toISOString().slice(0, 10);
  const command = `node --import tsx tools/judge/trainReader.ts --dumps <dumps> --seed ${seed} --l2 ${l2}`;
  const file = trainModel(train, features, l2, `reader-${stamp}`, { data: trainedSets, seed, l2, split: 'half of each set by a seeded hash of the question id', command });
  // The confidence threshold, chosen on the training half (confidenceThreshold).
  file.threshold = round6(confidenceThreshold((await measure(LinearModel.from(file, 'trained model'), train)).p1));
  const model = LinearModel.from(file, 'trained model');
  const report: Record<string, unknown> = { seed, l2, features, weights: Object.fromEntries(features.map((f, i) => [f, file.weights[i]])), sets: {} };
  const lodo = new Set((values.lodo ?? 'squad,nq,hotpotqa,financebench').split(','));
  const lines: string[] = ['| set | held-back questions | [1] answers (all sets) | [1] answers (without this set) | a quote answers | answer holds it (all) | answer holds it (without) | low confidence | [1] on gold (all) | [1] on gold (without) | [1] answers (rule reader) | a quote answers (rule reader) | answer holds it (rule reader) | [1] on gold (rule reader) |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
  // The held-back half's figures with and without each set, reused as the cross-fitted table's first half.
  const heldFigures = new Map<string, { with: SetFigures; without: SetFigures }>();
  for (const d of datasets) {
    const held = test.filter((q) => q.dataset === d);
    const withIt = await measure(model, held, share);
    let without: SetFigures | undefined;
    if (lodo.has(d) && !measureOnly.has(d)) {
      const others = train.filter((q) => q.dataset !== d);
      const m = LinearModel.from(trainModel(others, namesOf(others), l2, `reader-without-${d}`, {}), `model without ${d}`);
      without = (await measure(m, held, share)).figures;
      heldFigures.set(d, { with: withIt.figures, without });
    }
    const f = withIt.figures;
    let base = '— | — | — | —';
    if (baseline) {
      let first = 0;
      let holds = 0;
      let some = 0;
      let onGold = 0;
      for (const q of held) {
        const b = baseline.get(`${q.dataset}\u0000${q.record.questionId}`);
        if (!b) continue;
        if (q.answerable && b.first !== undefined && q.labels.get(b.first) === 1) first++;
        if (q.answerable && b.cited.some((id) => q.labels.get(id) === 1)) some++;
        const gold = new Set(q.record.gold.flatMap((g) => g.leafIds));
        if (b.first !== undefined && gold.has(b.first) && q.regions.some((r) => anyLeaf(r.node, (l) => gold.has(l.id)))) onGold++;
        const answers = q.record.answers.map(normalizeAnswer).filter((a) => a && a !== 'yes' && a !== 'no');
        if (answers.length > 0 && q.regions.some((r) => leavesHold(q, r.node))) {
          const text = normalizeAnswer(b.cited.map((id) => leafOf(q, id).text).join(' '));
          if (answers.some((a) => containsAnswer(text, a)) || b.cited.some((id) => answerBearing(q.record, leafOf(q, id)))) holds++;
        }
      }
      base = `${pct(first, f.answerable)} | ${pct(some, f.answerable)} | ${pct(holds, f.withAnswers)} | ${pct(onGold, f.withGold)}`;
      (report.sets as Record<string, unknown>)[`${d} baseline`] = { firstAnswers: first, someAnswers: some, answerHolds: holds };
    }
    (report.sets as Record<string, unknown>)[d] = { withIt: f, ...(without ? { without } : {}) };
    lines.push(`| ${d} | ${f.questions} | ${pct(f.firstAnswers, f.answerable)} (${f.firstAnswers}/${f.answerable}) | ${without ? `${pct(without.firstAnswers, without.answerable)}` : '—'} | ${pct(f.someAnswers, f.answerable)} (${(f.citations / Math.max(1, f.questions)).toFixed(2)} cited) | ${pct(f.answerHolds, f.withAnswers)} (${f.answerHolds}/${f.withAnswers}) | ${without ? pct(without.answerHolds, without.withAnswers) : '—'} | ${f.lowConfidence} | ${pct(f.firstOnGold, f.withGold)} (${f.firstOnGold}/${f.withGold}) | ${without ? pct(without.firstOnGold, without.withGold) : '—'} | ${base} |`);
  }
  report.threshold = file.threshold;
  if (values.cross) {
    // Cross-fitted leave-one-dataset-out: the halves swap, so every question of a set is read once by a
    // model that saw all sets but not that question, and once by a model that never saw its set.
    // (A set of 33 questions, as FinanceBench is, has about 15 answerable ones in a half: one half
    // alone moves its figure by 7 points a question.)
    lines.push('', '| set (cross-fitted: both halves) | questions | [1] answers (all sets) | [1] answers (without this set) | difference | answer holds it (all) | answer holds it (without) |', '|---|---:|---:|---:|---:|---:|---:|');
    const halves = (held: 'train' | 'test') => ({ fit: all.filter((q) => q.split !== held && !measureOnly.has(q.dataset)), held: all.filter((q) => q.split === held) });
    const cross: Record<string, { with: SetFigures; without: SetFigures }> = {};
    for (const held of ['test', 'train'] as const) {
      const { fit, held: heldQs } = halves(held);
      // Holding the test half back is the table above: its figures are reused, only the swapped half trains anew.
      const withModel = held === 'test' ? model : LinearModel.from(trainModel(fit, namesOf(fit), l2, 'reader-cross', {}), 'cross model');
      for (const d of trainedSets.filter((x) => lodo.has(x))) {
        let half = held === 'test' ? heldFigures.get(d) : undefined;
        if (!half) {
          const others = fit.filter((q) => q.dataset !== d);
          const without = LinearModel.from(trainModel(others, namesOf(others), l2, `reader-cross-without-${d}`, {}), `cross model without ${d}`);
          const qs = heldQs.filter((q) => q.dataset === d);
          half = { with: (await measure(withModel, qs, share)).figures, without: (await measure(without, qs, share)).figures };
        }
        const sum = cross[d];
        cross[d] = sum ? { with: addFigures(sum.with, half.with), without: addFigures(sum.without, half.without) } : half;
      }
    }
    for (const [d, { with: w, without: o }] of Object.entries(cross)) {
      const diff = w.answerable > 0 ? (100 * (o.firstAnswers - w.firstAnswers)) / w.answerable : 0;
      lines.push(`| ${d} | ${w.questions} | ${pct(w.firstAnswers, w.answerable)} (${w.firstAnswers}/${w.answerable}) | ${pct(o.firstAnswers, o.answerable)} (${o.firstAnswers}/${o.answerable}) | ${diff >= 0 ? '+' : ''}${diff.toFixed(1)} | ${pct(w.answerHolds, w.withAnswers)} | ${pct(o.answerHolds, o.withAnswers)} |`);
    }
    report.cross = cross;
  }
  for (const l of lines) process.stdout.write(`${l}\n`);
  process.stdout.write(`threshold ${file.threshold}\nweights:\n${features.map((f, i) => `  ${f.padEnd(22)} ${file.weights[i]!.toFixed(3)}`).join('\n')}\nbias ${file.bias.toFixed(3)}\n`);
  if (values.report) writeFileSync(resolve(values.report), `${JSON.stringify(report, null, 1)}\n`);
  if (values.write) {
    // The shipped model: the same recipe on every development question (both halves); its threshold chosen the same way on them.
    const everything = all.filter((q) => !measureOnly.has(q.dataset));
    const shipped = trainModel(everything, namesOf(everything), l2, `reader-${stamp}`, { data: trainedSets, seed, l2, questions: everything.length, heldBack: 'figures in docs/evaluation.md are of the model trained on the training half', command: `node --import tsx tools/judge/trainReader.ts --dumps <dumps> --seed ${seed} --l2 ${l2} --write` });
    shipped.threshold = round6(confidenceThreshold((await measure(LinearModel.from(shipped, 'shipped model'), everything)).p1));
    const out = resolve(repo, 'src/core/judge/models/reader.json');
    writeFileSync(out, `${JSON.stringify(shipped, null, 1)}\n`);
    process.stderr.write(`reader: wrote ${out} (${everything.length} questions, threshold ${shipped.threshold})\n`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
