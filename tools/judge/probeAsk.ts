/**
 * A diagnosis probe for the reader on real documents: asks questions of a real-document
 * benchmark report (`canopy bench realdocs --out report.json`) warm, in this process, over that
 * run's corpus and index, and records what the reader was given (every kept region, as the judge
 * dumps serialise it, with the gold pages' or paragraph's leaves as gold). Then, for each
 * question, the reader model's ranking: [1], the best leaf on the gold, and the features that
 * put one above the other (each feature's contribution, weight × standardised value).
 *
 *   node --import tsx tools/judge/probeAsk.ts --report <report.json> --work <realdocs work dir> \
 *     [--source financebench|docs|all] [--dump <out.jsonl>] [--from <dump.jsonl>] [--top 5]
 *
 * `--source docs` asks the documentation folder's questions (the report's `docsFolder`) over its
 * own corpus and index.
 *
 * `--from` re-reads a dump this probe wrote (no asks): the reader model alone, on the same inputs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AskService } from '../../src/core/app/askService';
import { resolveSettings } from '../../src/core/config/settings';
import { AdapterCheckpoints } from '../../src/core/app/adapters';
import { Embeddings } from '../../src/core/app/embeddings';
import { IndexService } from '../../src/core/app/indexService';
import { IndexStores } from '../../src/core/app/indexStores';
import { ParseWorkers } from '../../src/core/app/parseWorkers';
import type { KeptRegion } from '../../src/core/critic/critic';
import { readQuestion } from '../../src/core/judge/questionReading';
import { readerCandidates } from '../../src/core/judge/readerFeatures';
import { builtinReaderModel } from '../../src/core/judge/models';
import { ExtractiveReader } from '../../src/core/read/extractiveReader';
import type { ReaderInput } from '../../src/core/read/reader';
import type { RegionNode } from '../../src/contracts/region';
import { deserializeRegion, JUDGE_DUMP_SCHEMA, serializeRegion, type JudgeDumpRecord } from '../../src/eval/judgeDump';
import { answerHasGoldString, onGold } from '../../src/eval/bench/realDocsScore';
import { leafText } from './labels';
import type { RealDocsGold } from '../../src/eval/bench/realDocsCorpus';

interface ReportRow {
  id: string;
  source: string;
  question: string;
  answers: string[];
  gold: RealDocsGold;
}

const leavesOf = (n: RegionNode): RegionNode[] => (n.children.length === 0 ? [n] : n.children.flatMap(leavesOf));

async function ask(rows: ReportRow[], work: string): Promise<JudgeDumpRecord[]> {
  const corpus = join(work, 'corpus');
  const indexDir = join(work, 'index');
  const settings = resolveSettings({});
  const stores = new IndexStores(indexDir);
  const embeddings = new Embeddings({ store: () => stores.get(settings.store), encoder: () => ({ kind: 'builtin' }), builtinModelDir: resolve(__dirname, '../../models/use-lite'), baseDir: corpus });
  const parseWorkers = new ParseWorkers();
  const indexService = new IndexService({ root: corpus, indexDir, embeddings, parseWorkers, storeFor: stores.storeFor });
  const asker = new AskService({ index: indexService, embeddings, adapters: new AdapterCheckpoints(corpus) });
  // The reader's input, as it is given: the last answer() call of each ask.
  let captured: KeptRegion[] | undefined;
  const answer = ExtractiveReader.prototype.answer;
  ExtractiveReader.prototype.answer = function (this: ExtractiveReader, asked: string, input: ReaderInput) {
    captured = [...input.regions];
    return answer.call(this, asked, input);
  };
  const out: JudgeDumpRecord[] = [];
  try {
    for (const row of rows) {
      captured = [];
      const { trace } = await asker.ask(row.question, settings, {});
      const regions: KeptRegion[] = captured ?? [];
      const gold = regions.flatMap((r) => leavesOf(r.node).filter((l) => onGold({ ...l.anchor, file: r.file }, row.gold) || onGold(l.anchor, row.gold)).map((l) => l.id));
      out.push({
        schema: JUDGE_DUMP_SCHEMA,
        dataset: row.source,
        questionId: row.id,
        question: row.question,
        answers: row.answers,
        gold: [{ leafIds: gold, mode: 'any' }],
        retrieval: true,
        regions: regions.map(serializeRegion),
        rounds: trace.rounds.map((r) => ({ round: r.round, query: r.query, added: [] })),
      });
      process.stderr.write(`probe: ${row.id} ${regions.length} regions, ${gold.length} gold leaves, ${trace.rounds.length} round(s)\n`);
    }
  } finally {
    ExtractiveReader.prototype.answer = answer;
    await parseWorkers.close();
    await embeddings.dispose();
    await stores.close();
  }
  return out;
}

function explainDiff(a: Record<string, number>, b: Record<string, number>): string {
  const model = builtinReaderModel();
  const ca = model.explain(a, 100).contributions;
  const cb = model.explain(b, 100).contributions;
  const get = (cs: typeof ca, f: string) => cs.find((c) => c.feature === f)?.contribution ?? 0;
  const names = [...new Set([...ca.map((c) => c.feature), ...cb.map((c) => c.feature)])];
  return names
    .map((f) => ({ f, d: get(ca, f) - get(cb, f) }))
    .filter((x) => Math.abs(x.d) > 0.05)
    .sort((x, y) => y.d - x.d)
    .map((x) => `${x.f} ${x.d >= 0 ? '+' : ''}${x.d.toFixed(2)} (${(a[x.f] ?? NaN).toFixed(2)} vs ${(b[x.f] ?? NaN).toFixed(2)})`)
    .join(', ');
}

function report(records: JudgeDumpRecord[], top: number): void {
  const model = builtinReaderModel();
  let onGoldFirst = 0;
  for (const rec of records) {
    const strip = process.env.PROBE_STRIP?.split(',') ?? [];
    const carried = process.env.PROBE_CARRIED;
    const own = (id: string) => id.slice(0, id.lastIndexOf('/'));
    const regions = rec.regions
      .map(deserializeRegion)
      .map((r) => (r.file.endsWith('.pdf') && strip.length > 0 ? { ...r, ...Object.fromEntries(strip.map((k) => [k, undefined])) } : r))
      .map((r) => (carried && r.file.endsWith('.pdf') && own(r.node.id) !== r.itemId ? { ...r, rank: carried === 'none' ? undefined : Number(carried), retrieval: undefined } : r));
    const reading = readerCandidates(readQuestion(rec.question), regions);
    // PROBE_ANSWER_GOLD=1: the gold are the leaves whose text holds an answer string, by the
    // real-document benchmark's own test of "answered" (a folder question's gold is its whole file).
    const gold = process.env.PROBE_ANSWER_GOLD
      ? new Set(regions.flatMap((r) => leavesOf(r.node)).filter((l) => answerHasGoldString(rec.answers, leafText(l))).map((l) => l.id))
      : new Set(rec.gold.flatMap((g) => g.leafIds));
    const ranked = reading.candidates
      .filter((c) => c.quotable)
      .map((c) => ({ c, p: model.predict(c.features).probability }))
      .sort((x, y) => y.p - x.p || x.c.order - y.c.order);
    const where = (c: (typeof ranked)[number]['c']) => `${c.region.file.split('/').pop()} p${c.leaf.anchor.page ?? '?'} ${c.leaf.kind}${c.filing ? ' F' : ''} r${c.region.round ?? '?'}#${c.region.rank ?? '?'}`;
    const firstGold = ranked.findIndex((x) => gold.has(x.c.leaf.id));
    if (firstGold === 0) onGoldFirst++;
    const goldPages = new Set(regions.flatMap((r) => leavesOf(r.node).filter((l) => gold.has(l.id)).map((l) => l.anchor.page)));
    process.stdout.write(`\n## ${rec.questionId}: ${rec.question}\n`);
    // Where the best gold leaf would rank by each strongest signal alone (0 = first).
    const byFeature = (f: string) => [...ranked].sort((x, y) => (y.c.features[f] ?? 0) - (x.c.features[f] ?? 0)).findIndex((x) => gold.has(x.c.leaf.id));
    const alone = ['dense', 'lex_own', 'support_own', 'node_score'].map((f) => `${f} ${byFeature(f)}`).join(', ');
    process.stdout.write(`gold leaves kept ${gold.size} (pages ${[...goldPages].join(',')}); quotable ${ranked.length}; best gold rank ${firstGold} (alone: ${alone})\n`);
    ranked.slice(0, top).forEach((x, i) => {
      process.stdout.write(`  ${i}${gold.has(x.c.leaf.id) ? '*' : ' '} ${x.p.toFixed(3)} ${where(x.c)} | ${x.c.leaf.text.replace(/\s+/g, ' ').slice(0, process.env.PROBE_WIDE ? 400 : 110)}\n`);
      if (process.env.PROBE_EXPLAIN) process.stdout.write(`      ${model.explain(x.c.features, 14).contributions.map((c) => `${c.feature}=${c.value} ${c.contribution >= 0 ? '+' : ''}${c.contribution.toFixed(2)}`).join(', ')}\n`);
    });
    if (firstGold > 0) {
      const g = ranked[firstGold]!;
      process.stdout.write(`  gold ${firstGold} ${g.p.toFixed(3)} ${where(g.c)} | ${g.c.leaf.text.replace(/\s+/g, ' ').slice(0, 110)}\n`);
      process.stdout.write(`  [1] over gold: ${explainDiff(ranked[0]!.c.features, g.c.features)}\n`);
    }
  }
  process.stdout.write(`\n[1] on gold: ${onGoldFirst} of ${records.length}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { report: { type: 'string' }, work: { type: 'string' }, source: { type: 'string' }, dump: { type: 'string' }, from: { type: 'string' }, top: { type: 'string' } } });
  let records: JudgeDumpRecord[];
  if (values.from) {
    records = readFileSync(resolve(values.from), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as JudgeDumpRecord);
  } else {
    if (!values.report || !values.work) throw new Error('usage: probeAsk.ts --report <report.json> --work <dir> [--source financebench] [--dump <out.jsonl>] | --from <dump.jsonl>');
    const rep = JSON.parse(readFileSync(resolve(values.report), 'utf8')) as { questions: ReportRow[]; docsFolder?: { questions: ReportRow[] } };
    const source = values.source ?? 'financebench';
    // The documentation folder's questions are asked over its own corpus and index (<work>/docs-folder).
    records =
      source === 'docs'
        ? await ask(rep.docsFolder?.questions ?? [], join(resolve(values.work), 'docs-folder'))
        : await ask(rep.questions.filter((r) => source === 'all' || r.source === source), resolve(values.work));
    if (values.dump) writeFileSync(resolve(values.dump), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
  report(records, Number(values.top ?? 5));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
