/**
 * Step 3 (`npm run train:judge -- critic`): the critic model. Its examples are the rounds of the
 * dumped open-pool questions where the model decides (judge/learnedCritic.ts `modelDecides`: the
 * rule critic would ask again for words, not for a next hop): the evidence after that round
 * (the regions the rounds up to it kept), the rule's verdict, and whether that evidence already
 * holds the answer — an answer-bearing leaf where the set has answer strings, every gold sentence
 * or paragraph where it has fine gold. The stop threshold is chosen on the training half for the
 * stated precision of a stop (`--precision`, default 0.9: of the rounds it ends early, at least
 * nine in ten already held the answer); the held-back half is replayed with it: each question's
 * rounds end at the first round the model stops, and the figures (answer and gold in the
 * evidence, rounds, tokens) are set beside the rule critic's own path.
 *
 *   node --import tsx tools/judge/trainCritic.ts --dumps <dir> [--seed 1] [--l2 0.001] [--precision 0.9] [--write] [--report <file>]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { leavesOf } from '../../src/core/compress/baselines';
import { bpeTokenCounter } from '../../src/core/compress/tokens';
import type { CriticVerdict, EvidenceView, KeptRegion } from '../../src/core/critic/critic';
import { criticFeatures } from '../../src/core/judge/criticFeatures';
import { modelDecides } from '../../src/core/judge/learnedCritic';
import { LinearModel, JUDGE_MODEL_SCHEMA, JUDGE_MODEL_VERSION, type JudgeModelFile } from '../../src/core/judge/linearModel';
import { builtinReaderModel } from '../../src/core/judge/models';
import { readQuestion } from '../../src/core/judge/questionReading';
import type { JudgeDumpRecord } from '../../src/eval/judgeDump';
import { deserializeRegion } from '../../src/eval/judgeDump';
import { fitLogistic } from '../../src/core/train/logistic';
import { answerBearing } from './labels';
import { readDumps, splitOf } from './readerData';

const repo = resolve(__dirname, '../..');

interface RoundState {
  round: number;
  features: Record<string, number>;
  /** The evidence after this round holds the answer. */
  holds: boolean;
  /** The rule would ask again (a follow-up query), so the model decides here. */
  decides: boolean;
  tokens: number;
  goldAll: boolean;
  answer: boolean;
}

interface QuestionStates {
  dataset: string;
  split: 'train' | 'test';
  states: RoundState[];
  /** Rounds the rule critic's path ran (a last round that retrieved nothing new has no verdict). */
  rounds: number;
}

function views(regions: readonly KeptRegion[]): EvidenceView[] {
  const byItem = new Map<string, EvidenceView>();
  for (const r of regions) {
    let v = byItem.get(r.itemId);
    if (!v) byItem.set(r.itemId, (v = { itemId: r.itemId, title: r.itemTitle, rank: r.rank ?? 0, round: r.round ?? 1, keptTexts: [], keptLeaves: [], regions: [] }));
    v.keptTexts.push(r.node.text);
    v.keptLeaves!.push(...leavesOf(r.node).map((l) => (l.header ? `${l.header}\n${l.text}` : l.text)));
    v.regions!.push(r);
  }
  return [...byItem.values()];
}

const tokens = bpeTokenCounter();


export function questionStates(record: JudgeDumpRecord, seed: number, reader: LinearModel): QuestionStates | undefined {
  if (!record.retrieval || record.rounds.length === 0) return undefined;
  const question = readQuestion(record.question);
  const regions = record.regions.map(deserializeRegion);
  const fine = record.gold.filter((g) => g.mode === 'all');
  const hasAnswers = record.answers.some((a) => a.trim() && !/^(yes|no)$/i.test(a.trim()));
  if (!hasAnswers && fine.length === 0 && record.gold.length === 0) return undefined;
  const states: RoundState[] = [];
  for (const round of record.rounds) {
    if (!round.critic) continue;
    const upTo = regions.filter((r) => (r.round ?? 1) <= round.round);
    const leaves = upTo.flatMap((r) => leavesOf(r.node));
    const kept = new Set(leaves.map((l) => l.id));
    const answer = hasAnswers && leaves.some((l) => answerBearing(record, l));
    const goldAll = record.gold.length > 0 && record.gold.every((g) => (g.mode === 'all' ? g.leafIds.every((id) => kept.has(id)) : g.leafIds.some((id) => kept.has(id))));
    const holds = (hasAnswers ? answer : true) && (fine.length > 0 || !hasAnswers ? goldAll : true);
    const rule = round.critic as unknown as CriticVerdict;
    const reading = criticFeatures(question, views(upTo), round.round, reader, rule);
    states.push({
      round: round.round,
      features: reading.features,
      holds,
      decides: modelDecides(rule),
      tokens: upTo.reduce((a, r) => a + tokens.count(r.node.text), 0),
      goldAll,
      answer,
    });
  }
  return { dataset: record.dataset, split: splitOf(`${record.dataset}\u0000${record.questionId}`, seed), states, rounds: record.rounds.length };
}

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

function trainCritic(data: readonly QuestionStates[], l2: number, training: Record<string, unknown>): JudgeModelFile {
  const rows = data.flatMap((q) => q.states.filter((s) => s.decides).map((s) => ({ q, s })));
  const names = [...new Set(rows.flatMap(({ s }) => Object.keys(s.features)))].sort();
  const center = names.map((f) => rows.reduce((a, { s }) => a + (s.features[f] ?? 0), 0) / Math.max(1, rows.length));
  const scale = names.map((f, i) => {
    const sd = Math.sqrt(rows.reduce((a, { s }) => a + ((s.features[f] ?? 0) - center[i]!) ** 2, 0) / Math.max(1, rows.length));
    return sd > 1e-9 ? sd : 1;
  });
  const sets = new Map<string, number>();
  for (const { q } of rows) sets.set(q.dataset, (sets.get(q.dataset) ?? 0) + 1);
  const x = rows.map(({ s }) => names.map((f, i) => ((s.features[f] ?? center[i]!) - center[i]!) / scale[i]!));
  const y = rows.map(({ s }) => (s.holds ? 1 : 0));
  const w = rows.map(({ q }) => rows.length / (sets.size * sets.get(q.dataset)!));
  const fit = fitLogistic(x, y, w, { l2 });
  return {
    schema: JUDGE_MODEL_SCHEMA,
    version: JUDGE_MODEL_VERSION,
    id: `critic-${new Date().toISOString().slice(0, 10)}`,
    kind: 'critic',
    features: names,
    center: center.map(round6),
    scale: scale.map(round6),
    weights: fit.weights.map(round6),
    bias: round6(fit.bias),
    training: { ...training, rows: rows.length, positives: y.filter((v) => v === 1).length, iterations: fit.iterations },
  };
}

/** Each question's rounds replayed: they end at the first round where the rule would ask again and the model stops. */
function replay(model: LinearModel | undefined, threshold: number, data: readonly QuestionStates[]) {
  let answer = 0;
  let goldAll = 0;
  let rounds = 0;
  let tokensSum = 0;
  let stoppedEarly = 0;
  for (const q of data) {
    let end = q.states[q.states.length - 1]!;
    let roundsUsed = q.rounds;
    for (const s of q.states) {
      if (model && s.decides && model.predict(s.features).probability >= threshold) {
        end = s;
        roundsUsed = s.round;
        if (s !== q.states[q.states.length - 1]) stoppedEarly++;
        break;
      }
    }
    answer += Number(end.answer);
    goldAll += Number(end.goldAll);
    rounds += roundsUsed;
    tokensSum += end.tokens;
  }
  const n = Math.max(1, data.length);
  return { questions: data.length, answer: answer / n, goldAll: goldAll / n, rounds: rounds / n, tokens: tokensSum / n, stoppedEarly };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { dumps: { type: 'string' }, seed: { type: 'string' }, l2: { type: 'string' }, precision: { type: 'string' }, write: { type: 'boolean' }, report: { type: 'string' }, reader: { type: 'string' } } });
  if (!values.dumps) throw new Error('usage: trainCritic.ts --dumps <dir> [--seed 1] [--l2 0.001] [--precision 0.9] [--write] [--report <file>] [--reader <model.json>]');
  const seed = Number(values.seed ?? 1);
  const l2 = Number(values.l2 ?? 0.001);
  const precision = Number(values.precision ?? 0.9);
  const reader = values.reader ? LinearModel.from(JSON.parse(readFileSync(resolve(values.reader), 'utf8')), values.reader) : builtinReaderModel();
  const data = readDumps(resolve(values.dumps))
    .map((r) => questionStates(r, seed, reader))
    .filter((q): q is QuestionStates => q !== undefined && q.states.length > 0);
  const train = data.filter((q) => q.split === 'train');
  const test = data.filter((q) => q.split === 'test');
  const datasets = [...new Set(data.map((q) => q.dataset))].sort();
  const file = trainCritic(train, l2, { data: datasets, seed, l2, reader: reader.id, precision, command: `node --import tsx tools/judge/trainCritic.ts --dumps <dumps> --seed ${seed} --l2 ${l2} --precision ${precision}` });
  const model = LinearModel.from(file, 'trained critic');
  // The threshold: the lowest probability at which the stops it makes on the training half reach the precision.
  const decided = train.flatMap((q) => q.states.filter((s) => s.decides)).map((s) => ({ p: model.predict(s.features).probability, holds: s.holds })).sort((a, b) => b.p - a.p);
  let threshold = 1;
  let right = 0;
  decided.forEach((d, i) => {
    if (d.holds) right++;
    if (i >= 19 && right / (i + 1) >= precision) threshold = d.p;
  });
  file.threshold = round6(Math.min(0.999, Math.max(0.5, threshold)));
  const tuned = LinearModel.from(file, 'trained critic');
  const lines = ['| set | held-back questions | answer in evidence: rule → learned | all gold in evidence: rule → learned | rounds: rule → learned | tokens: rule → learned | stopped early |', '|---|---:|---:|---:|---:|---:|---:|'];
  const report: Record<string, unknown> = { threshold: file.threshold, precision, weights: Object.fromEntries(file.features.map((f, i) => [f, file.weights[i]])), sets: {} };
  const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
  for (const d of datasets) {
    const held = test.filter((q) => q.dataset === d);
    const before = replay(undefined, 1, held);
    const after = replay(tuned, file.threshold, held);
    (report.sets as Record<string, unknown>)[d] = { rule: before, learned: after };
    lines.push(`| ${d} | ${held.length} | ${pct(before.answer)} → ${pct(after.answer)} | ${pct(before.goldAll)} → ${pct(after.goldAll)} | ${before.rounds.toFixed(2)} → ${after.rounds.toFixed(2)} | ${before.tokens.toFixed(0)} → ${after.tokens.toFixed(0)} | ${after.stoppedEarly} |`);
  }
  for (const l of lines) process.stdout.write(`${l}\n`);
  process.stdout.write(`threshold ${file.threshold} (precision ${precision} on the training half's ${decided.length} decisions)\n${file.features.map((f, i) => `  ${f.padEnd(22)} ${file.weights[i]!.toFixed(3)}`).join('\n')}\nbias ${file.bias.toFixed(3)}\n`);
  if (values.report) writeFileSync(resolve(values.report), `${JSON.stringify(report, null, 1)}\n`);
  if (values.write) {
    const out = resolve(repo, 'src/core/judge/models/critic.json');
    writeFileSync(out, `${JSON.stringify(file, null, 1)}\n`);
    process.stderr.write(`critic: wrote ${out}\n`);
  }
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
