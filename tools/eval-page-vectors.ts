/**
 * Node-vector recipes on deep hierarchies: how well each recipe's **page vectors** find the
 * evidence pages of FinanceBench questions inside their own PDF (dense page ranking only — the
 * signal the controller's grounding takes from node vectors). The given-items evaluation
 * (docs/evaluation.md) has two-level items (paragraph → sentences, table → rows) where the
 * derived recipes coincide; PDFs (page → section → paragraph → sentences, tables → rows) are
 * where they differ. Recipes:
 *   text      every region encoded from its own whole text (the recipe before leaf-derived vectors)
 *   prefix    a page encoded from its first 128-piece window
 *   children  leaves encoded, every other region (tables too) the normalised sum of its children's
 *             vectors, groups looked through
 *   leaves    every region the normalised sum of all the leaf vectors under it
 *   tables    as `children`, but tables encoded from their own text — the product's recipe
 *             (src/core/encode/nodeVectors.ts)
 * Per question: recall@k (k = 1, 3, 5) of its evidence pages among the k best pages by cosine,
 * and the reciprocal rank of the first; paired bootstrap intervals against `tables` (the product).
 *
 *   node --import tsx tools/eval-page-vectors.ts <financebench questions.jsonl> [--cache <dir>] [--limit N] [--json]
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { RegionNode } from '../src/contracts/region';
import { encodedText, nodeVectors } from '../src/core/encode/nodeVectors';
import { l2NormalizeInPlace } from '../src/core/encode/encoder';
import type { ParsedDocument } from '../src/core/ingest/parsedDocument';
import { parseFile } from '../src/core/ingest/parseFile';
import { BootstrapPlan, type Ratio } from '../src/eval/bootstrap';
import { openEvalEmbeddings } from '../src/eval/embeddings';
import { nodeVectorsChildren, prefixWindow } from '../src/eval/variants';
import { defaultOutDir } from './convert-use/main';

interface Question {
  question: string;
  pdf_file: string;
  evidence: Array<{ evidence_page_num: number }>;
}

const RECIPES = ['text', 'prefix', 'children', 'leaves', 'tables'] as const;
type Recipe = (typeof RECIPES)[number];
const KS = [1, 3, 5];

function pagesOf(doc: ParsedDocument): RegionNode[] {
  const out: RegionNode[] = [];
  const walk = (n: RegionNode) => {
    if (n.kind === 'page' && n.anchor.page !== undefined) out.push(n);
    else n.children.forEach(walk);
  };
  doc.items.forEach((it) => walk(it.root));
  return out;
}

function leavesOf(n: RegionNode): RegionNode[] {
  return n.children.length === 0 ? [n] : n.children.flatMap(leavesOf);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { cache: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } } });
  const file = resolve(positionals[0] ?? '');
  const cache = resolve(values.cache ?? join(process.env.HOME ?? '.', '.cache', 'canopy-eval'));
  const log = (m: string) => process.stderr.write(`${m}\n`);
  let questions = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Question);
  if (values.limit) questions = questions.slice(0, Number(values.limit));
  const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: defaultOutDir, cacheDir: join(cache, 'embeddings') });
  const parsedDir = join(cache, 'page-vectors-parsed');
  mkdirSync(parsedDir, { recursive: true });
  const started = Date.now();

  const docs = new Map<string, { pages: RegionNode[]; vectors: Map<Recipe, Map<number, Float32Array>> }>();
  const load = async (rel: string) => {
    const have = docs.get(rel);
    if (have) return have;
    const abs = resolve(dirname(file), rel);
    const bytes = new Uint8Array(readFileSync(abs));
    const key = createHash('sha256').update(bytes).digest('hex').slice(0, 24);
    const cached = join(parsedDir, `${key}.json`);
    let doc: ParsedDocument;
    if (existsSync(cached)) doc = JSON.parse(readFileSync(cached, 'utf8')) as ParsedDocument;
    else {
      const t0 = Date.now();
      doc = await parseFile(rel, bytes, { graph: false, timeLimitMs: 20 * 60_000 });
      writeFileSync(cached, JSON.stringify(doc));
      log(`parsed ${rel}: ${doc.pages?.length ?? 0} pages in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    const pages = pagesOf(doc);
    const vectors = new Map<Recipe, Map<number, Float32Array>>();
    const t1 = Date.now();
    // children (the product) and leaves: from the leaf vectors only.
    const children = new Map<number, Float32Array>();
    const leaves = new Map<number, Float32Array>();
    for (const page of pages) {
      const v = await nodeVectorsChildren(page, embeddings.embedTexts);
      children.set(page.anchor.page!, v.get(page.id)!);
      const sum = new Float32Array(embeddings.dim);
      for (const leaf of leavesOf(page)) {
        const lv = v.get(leaf.id)!;
        for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + lv[i]!;
      }
      leaves.set(page.anchor.page!, l2NormalizeInPlace(sum));
    }
    vectors.set('children', children);
    vectors.set('leaves', leaves);
    const tables = new Map<number, Float32Array>();
    for (const page of pages) tables.set(page.anchor.page!, (await nodeVectors(page, embeddings.embedTexts)).get(page.id)!);
    vectors.set('tables', tables);
    const texts = await embeddings.embedTexts(pages.map(encodedText));
    vectors.set('text', new Map(pages.map((p, i) => [p.anchor.page!, texts[i]!])));
    const prefixes = await embeddings.embedTexts(pages.map((p) => prefixWindow(embeddings.encoder, encodedText(p))));
    vectors.set('prefix', new Map(pages.map((p, i) => [p.anchor.page!, prefixes[i]!])));
    log(`vectors of ${rel}: ${pages.length} pages in ${((Date.now() - t1) / 1000).toFixed(1)} s (${embeddings.encoded} texts encoded so far)`);
    await embeddings.save();
    const entry = { pages, vectors };
    docs.set(rel, entry);
    return entry;
  };

  const perRecipe = new Map<Recipe, { recall: Array<Ratio[]>; rr: Ratio[] }>(RECIPES.map((r) => [r, { recall: KS.map(() => []), rr: [] }]));
  for (const [qi, q] of questions.entries()) {
    const d = await load(q.pdf_file);
    const gold = new Set(q.evidence.map((e) => e.evidence_page_num));
    const query = await embeddings.embedQuery(q.question);
    for (const r of RECIPES) {
      const ranked = [...d.vectors.get(r)!.entries()].map(([page, v]) => ({ page, s: dot(query, v) })).sort((a, b) => b.s - a.s || a.page - b.page);
      const acc = perRecipe.get(r)!;
      KS.forEach((k, ki) => acc.recall[ki]!.push({ num: ranked.slice(0, k).filter((x) => gold.has(x.page)).length, den: gold.size }));
      const first = ranked.findIndex((x) => gold.has(x.page));
      acc.rr.push({ num: first < 0 ? 0 : 1 / (first + 1), den: 1 });
    }
    log(`${qi + 1}/${questions.length} questions (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  await embeddings.dispose();

  const plan = new BootstrapPlan(questions.length, 1000, 1);
  const pct = (x: number) => (100 * x).toFixed(1);
  const fmt = (i: { value: number; lo: number; hi: number }, scale = 100, d = 1) => `${(scale * i.value).toFixed(d)} [${(scale * i.lo).toFixed(d)}, ${(scale * i.hi).toFixed(d)}]`;
  const base = perRecipe.get('tables')!;
  const rows = RECIPES.map((r) => {
    const acc = perRecipe.get(r)!;
    return {
      recipe: r,
      recall: KS.map((k, ki) => ({ k, ...plan.interval(acc.recall[ki]!) })),
      mrr: plan.interval(acc.rr),
      minusProduct: r === 'tables' ? undefined : { recall: KS.map((k, ki) => ({ k, ...plan.differenceInterval(acc.recall[ki]!, base.recall[ki]!) })), mrr: plan.differenceInterval(acc.rr, base.rr) },
    };
  });
  const result = { file, questions: questions.length, pdfs: docs.size, encoder: embeddings.id, seconds: (Date.now() - started) / 1000, rows };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  console.log(`${questions.length} questions over ${docs.size} PDFs; dense page ranking by each recipe's page vectors; ${result.seconds.toFixed(0)} s`);
  console.log(`| recipe | ${KS.map((k) => `evidence-page recall@${k}`).join(' | ')} | MRR |`);
  console.log(`|---|${KS.map(() => '---:').join('|')}|---:|`);
  for (const row of rows) console.log(`| ${row.recipe} | ${row.recall.map((x) => `${fmt(x)}%`).join(' | ')} | ${fmt(row.mrr, 1, 3)} |`);
  console.log('');
  for (const row of rows) {
    if (!row.minusProduct) continue;
    console.log(`${row.recipe} − tables (paired): ${row.minusProduct.recall.map((x) => `@${x.k} ${pct(x.value)} [${pct(x.lo)}, ${pct(x.hi)}]`).join(', ')}; MRR ${fmt(row.minusProduct.mrr, 1, 3)}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`eval-page-vectors: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
