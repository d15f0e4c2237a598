/**
 * FinanceBench evaluation of the MAGE controller (not a unit test: the data is not in the
 * repository). For every question it parses the question's PDF with Canopy's parser and compares
 * three ways of choosing evidence inside that one document:
 *   page top-k      the k best pages of page-level grounding (dense + BM25, RRF), k = 1, 3, 5
 *   CANOPY top-k    CANOPY projection over each of those pages' region trees
 *   controller      buildEvidenceSubgraph with the deterministic rule evaluator and the default
 *                   budgets (CANOPY projection inside opened nodes)
 * and reports, per method:
 *   evidence-page recall   share of evidence items (all questions pooled) whose 0-based
 *                          `evidence_page_num` holds at least one kept region
 *   all pages found        share of questions with every evidence page covered
 *   evidence word coverage share of each evidence text's lower-cased word tokens (with
 *                          multiplicity) found in the kept text, averaged over evidence items — a
 *                          stricter check than page recall: touching a page is not keeping the
 *                          evidence on it
 *   evidence tokens        cl100k_base tokens of the kept text (mean and median per question);
 *                          for the controller also the tokens of its XML rendering for the reader
 * plus the controller's trace statistics, split by whether all evidence pages were found (the
 * stand-in for "correct" without an LLM reader).
 *
 *   npx tsx tools/eval-financebench-controller.ts <questions.jsonl> [--json] [--verbose]
 *       [--cache <dir>] [--limit <n>] [--initial-pages <n>] [--iterations <n>]
 *       [--opened <n>] [--searches <n>] [--no-project]
 *
 * `pdf_file` in each question is relative to the folder of questions.jsonl. Embeddings are
 * cached (EmbeddingCache) and parsed documents too, under --cache (default .canopy/eval-cache in
 * the working directory), keyed by the PDF's bytes and a hash of the parser's source, so reruns
 * skip both. Run it from the repository root (the built-in model is read from models/use-lite).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { scoreNodes } from '../src/core/compress/nodeScorer';
import { nodeVectors } from '../src/core/encode/nodeVectors';
import { projectItem } from '../src/core/compress/projection';
import { routeQuestion } from '../src/core/compress/router';
import { bpeTokenCounter } from '../src/core/compress/tokens';
import { DocumentView } from '../src/core/controller/documentView';
import { groundPages } from '../src/core/controller/grounding';
import type { ControllerOptions } from '../src/core/controller/options';
import { RelevanceModel } from '../src/core/controller/relevance';
import { aggregateTraceStats } from '../src/core/controller/stats';
import { buildEvidenceSubgraph } from '../src/core/controller/subgraph';
import type { ControllerTrace } from '../src/core/controller/trace';
import { EmbeddingCache } from '../src/core/encode/cache';
import { createEncoder } from '../src/core/encode/createEncoder';
import { parseFile } from '../src/core/ingest/parseFile';
import type { ParsedDocument } from '../src/core/ingest/parsedDocument';
import type { RegionNode } from '../src/contracts/region';

interface Evidence {
  evidence_text: string;
  evidence_page_num: number;
}
interface Question {
  financebench_id?: string;
  question: string;
  pdf_file: string;
  evidence: Evidence[];
}

interface MethodResult {
  pages: Set<number>;
  text: string;
  tokens: number;
}

interface Tally {
  items: number;
  pageHits: number;
  allFound: number;
  questions: number;
  coverage: number;
  tokens: number[];
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Share of the evidence text's tokens found in `kept` (bag with multiplicity). */
function wordCoverage(evidence: string, kept: Map<string, number>): number {
  const ev = words(evidence);
  if (ev.length === 0) return 1;
  const bag = new Map(kept);
  let hit = 0;
  for (const t of ev) {
    const n = bag.get(t) ?? 0;
    if (n > 0) {
      hit++;
      bag.set(t, n - 1);
    }
  }
  return hit / ev.length;
}

function bagOf(text: string): Map<string, number> {
  const bag = new Map<string, number>();
  for (const t of words(text)) bag.set(t, (bag.get(t) ?? 0) + 1);
  return bag;
}

function regionText(node: RegionNode): string {
  return node.header ? `${node.header}\n${node.text}` : node.text;
}

function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A hash of the parser's source, so parsed documents are re-parsed when ingestion changes. */
function parserHash(root: string): string {
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) h.update(name).update(readFileSync(p));
    }
  };
  walk(join(root, 'src/core/ingest'));
  return h.digest('hex').slice(0, 16);
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function intFlag(args: string[], name: string): number | undefined {
  const v = flag(args, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name} needs an integer, not ${v}`);
  return n;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const verbose = args.includes('--verbose');
  const valued = new Set(['--cache', '--limit', '--initial-pages', '--iterations', '--opened', '--searches']);
  const positional = args.filter((a, i) => !a.startsWith('--') && !valued.has(args[i - 1] ?? ''));
  const questionsPath = positional[0];
  if (!questionsPath) {
    console.error('usage: eval-financebench-controller.ts <questions.jsonl> [--json] [--verbose] [--cache <dir>] [--limit <n>] [--initial-pages <n>] [--iterations <n>] [--opened <n>] [--searches <n>] [--no-project]');
    process.exit(2);
  }
  const base = dirname(resolve(questionsPath));
  const cacheDir = resolve(flag(args, '--cache') ?? '.canopy/eval-cache');
  const limit = intFlag(args, '--limit');
  const overrides: Partial<ControllerOptions> = {
    initialPages: intFlag(args, '--initial-pages'),
    maxIterations: intFlag(args, '--iterations'),
    maxOpenedNodes: intFlag(args, '--opened'),
    maxSearches: intFlag(args, '--searches'),
    ...(args.includes('--no-project') ? { project: false } : {}),
  };
  let questions: Question[] = readFileSync(questionsPath, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Question);
  if (limit !== undefined) questions = questions.slice(0, limit);

  const log = (line: string) => {
    if (!json) console.log(line);
  };
  const encoder = await createEncoder({ kind: 'builtin' }, { builtinModelDir: resolve('models/use-lite') });
  const cache = await EmbeddingCache.open({ dir: join(cacheDir, 'embeddings'), encoder });
  const embedTexts = (texts: string[], signal?: AbortSignal) => cache.getOrEncode(texts, encoder, signal);
  const embedQuery = async (text: string, signal?: AbortSignal) => (await cache.getOrEncode([text], encoder, signal))[0]!;
  const tokens = bpeTokenCounter();
  const parsedDir = join(cacheDir, 'parsed');
  mkdirSync(parsedDir, { recursive: true });
  const parser = parserHash(process.cwd());

  const docs = new Map<string, ParsedDocument>();
  const document = async (rel: string): Promise<ParsedDocument> => {
    const hit = docs.get(rel);
    if (hit) return hit;
    const bytes = readFileSync(resolve(base, rel));
    const key = createHash('sha256').update(bytes).update(parser).digest('hex').slice(0, 32);
    const file = join(parsedDir, `${key}.json`);
    let doc: ParsedDocument;
    try {
      doc = JSON.parse(readFileSync(file, 'utf8')) as ParsedDocument;
    } catch {
      const started = Date.now();
      doc = await parseFile(rel, bytes, { embed: embedTexts });
      writeFileSync(file, JSON.stringify(doc));
      await cache.save();
      log(`parsed ${rel}: ${doc.pages?.length ?? 0} pages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    docs.set(rel, doc);
    return doc;
  };

  const methods = ['page top-1', 'page top-3', 'page top-5', 'CANOPY top-1', 'CANOPY top-3', 'CANOPY top-5', 'controller'];
  const tally = new Map<string, Tally>(methods.map((m) => [m, { items: 0, pageHits: 0, allFound: 0, questions: 0, coverage: 0, tokens: [] }]));
  const runs: Array<{ trace: ControllerTrace; correct: boolean }> = [];
  const xmlTokens: number[] = [];
  const perQuestion: Array<Record<string, unknown>> = [];
  const started = Date.now();

  for (const [qi, q] of questions.entries()) {
    const doc = await document(q.pdf_file);
    const view = await DocumentView.of(doc);
    const relevance = await RelevanceModel.create(q.question, view, { embedQuery, embedTexts });
    const ranking = groundPages(view, relevance);
    const aggregate = routeQuestion(q.question).aggregate;
    const results = new Map<string, MethodResult>();
    for (const k of [1, 3, 5]) {
      const top = ranking.slice(0, k);
      const pageTexts = top.map((g) => view.node(g.pageId)!.text);
      results.set(`page top-${k}`, { pages: new Set(top.map((g) => g.page)), text: pageTexts.join('\n\n'), tokens: pageTexts.reduce((s, t) => s + tokens.count(t), 0) });
      const kept: RegionNode[] = [];
      for (const g of top) {
        const region = view.node(g.pageId)?.regionId ? view.region(view.node(g.pageId)!.regionId!) : undefined;
        if (!region) continue;
        const scores = scoreNodes(relevance.queryVector, await nodeVectors(region, embedTexts));
        kept.push(...projectItem(region, (n) => scores.get(n.id) ?? Number.NEGATIVE_INFINITY, { keepTablesWhole: aggregate }).kept);
      }
      results.set(`CANOPY top-${k}`, {
        pages: new Set(kept.map((r) => r.anchor.page!).filter((p) => p !== undefined)),
        text: kept.map(regionText).join('\n\n'),
        tokens: kept.reduce((s, r) => s + tokens.count(regionText(r)), 0),
      });
    }
    const sub = await buildEvidenceSubgraph(q.question, doc, { embedQuery, embedTexts, tokens }, overrides);
    const ctlPages = new Set<number>();
    for (const r of sub.regions) for (let p = r.anchor.page ?? r.page; p <= (r.anchor.pageEnd ?? r.anchor.page ?? r.page); p++) ctlPages.add(p);
    results.set('controller', { pages: ctlPages, text: sub.regions.map((r) => regionText(r.node)).join('\n\n'), tokens: sub.tokens });

    const row: Record<string, unknown> = { id: q.financebench_id, pdf: q.pdf_file, evidencePages: q.evidence.map((e) => e.evidence_page_num) };
    for (const m of methods) {
      const r = results.get(m)!;
      const t = tally.get(m)!;
      const bag = bagOf(r.text);
      let hits = 0;
      for (const e of q.evidence) {
        t.items++;
        if (r.pages.has(e.evidence_page_num)) hits++;
        t.coverage += wordCoverage(e.evidence_text, bag);
      }
      t.pageHits += hits;
      t.questions++;
      if (hits === q.evidence.length) t.allFound++;
      t.tokens.push(r.tokens);
      row[m] = { recall: q.evidence.length ? hits / q.evidence.length : 1, tokens: r.tokens };
    }
    const correct = (row.controller as { recall: number }).recall === 1;
    runs.push({ trace: sub.trace, correct });
    xmlTokens.push(sub.trace.totals.xmlTokens);
    row.controllerStop = sub.trace.stop.reason;
    row.controllerPages = [...ctlPages].sort((a, b) => a - b);
    perQuestion.push(row);
    await cache.save();
    if (verbose) {
      log(
        `${qi + 1}/${questions.length} ${q.financebench_id ?? ''} ${q.pdf_file} evidence p.${q.evidence.map((e) => e.evidence_page_num).join(',')} | top-5 ${ranking
          .slice(0, 5)
          .map((g) => g.page)
          .join(',')} | controller ${[...ctlPages].sort((a, b) => a - b).join(',')} (${sub.tokens} tok, ${sub.trace.stop.reason})`,
      );
    }
  }

  const summary = methods.map((m) => {
    const t = tally.get(m)!;
    return {
      method: m,
      evidencePageRecall: t.items ? t.pageHits / t.items : 0,
      allPagesFound: t.questions ? t.allFound / t.questions : 0,
      evidenceWordCoverage: t.items ? t.coverage / t.items : 0,
      meanTokens: t.tokens.length ? t.tokens.reduce((a, b) => a + b, 0) / t.tokens.length : 0,
      medianTokens: median(t.tokens),
    };
  });
  const stats = aggregateTraceStats(runs);
  const result = {
    questions: questions.length,
    evidenceItems: tally.get('controller')!.items,
    budgets: runs[0]?.trace.budgets,
    tokenizer: tokens.name,
    encoder: encoder.id,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    summary,
    controllerXmlTokens: { mean: xmlTokens.reduce((a, b) => a + b, 0) / Math.max(1, xmlTokens.length), median: median(xmlTokens) },
    controllerStats: stats,
    perQuestion,
  };
  if (json) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    console.log(`\n${questions.length} questions, ${result.evidenceItems} evidence items; budgets ${JSON.stringify(result.budgets)}; ${result.seconds} s`);
    console.log('method          page recall  all pages  word coverage  mean tokens  median tokens');
    for (const s of summary) {
      console.log(
        `${s.method.padEnd(15)} ${pct(s.evidencePageRecall).padStart(11)} ${pct(s.allPagesFound).padStart(10)} ${pct(s.evidenceWordCoverage).padStart(14)} ${s.meanTokens.toFixed(0).padStart(12)} ${s.medianTokens.toFixed(0).padStart(14)}`,
      );
    }
    console.log(`controller as reader XML (tags, summaries, boxes included): mean ${result.controllerXmlTokens.mean.toFixed(0)}, median ${result.controllerXmlTokens.median.toFixed(0)} tokens`);
    for (const [name, g] of Object.entries(stats)) {
      console.log(
        `controller ${name} (${g.runs} runs): actions ${g.mean.actions}, opened ${g.mean.opened}, pruned ${g.mean.pruned}, pages activated ${g.mean.activatedPages}, iterations ${g.mean.iterations}, searches ${g.mean.searches}, invalid ${g.mean.invalidActions}; stops ${JSON.stringify(g.stopReasons)}`,
      );
    }
  }
  await encoder.dispose();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
