/**
 * Page grounding inside long PDFs, measured on its own: for every FinanceBench question, every
 * page of the question's own PDF is ranked by each recipe below, and the recipe's evidence-page
 * recall@k (k = 1, 3, 5) and the reciprocal rank of the first evidence page are reported with
 * paired bootstrap intervals against the controller's grounding (`groundPages`, the product).
 * Only pages are ranked — no controller, no CANOPY — so a run over the 33 development questions
 * takes minutes once the PDFs are parsed and their leaves encoded (both cached under --cache).
 *
 * Signals per page:
 *   dense        cosine of the page's vector (normalised sum of its children's) with the question
 *   page-bm25    BM25 over the whole page texts
 *   head-bm25    BM25 over the page heads (grounding.ts `pageHead`: the page's title lines)
 *   el-bm25      the best BM25 score of one of the page's elements (BM25 over all elements)
 *   el-dense     the best cosine of one of the page's elements
 *   leaf-dense   the best cosine of one of the page's leaves (sentence, table row with header)
 * and fusions of them: `rrf` (equal-weight RRF of dense and page-bm25, k = 60: the grounding
 * before this tool), the retriever's score-level fusion of the same two (`linear`: min-max
 * normalised BM25 + 0.2 × cosine), and `product` (grounding.ts `fusePageSignals`: head-share +
 * ½ el-bm25 + 0.05 dense, each min-max normalised) with variants; `cov` uses idf-weighted term
 * shares for head and elements instead of BM25, `maxnorm` divides by the maximum only, `head-share` weights each head's BM25 by the
 * idf-weighted share of the question's terms it holds.
 *
 *   node --import tsx tools/eval-page-grounding.ts <financebench questions.jsonl> [--cache <dir>] [--limit N] [--out f.json]
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { RegionNode } from '../src/contracts/region';
import { PARSER_VERSION } from '../src/core/app/indexService';
import { DocumentView } from '../src/core/controller/documentView';
import { bestPerPage, fusePageSignals, groundPages, pageHead, pageSignals, sortPages } from '../src/core/controller/grounding';
import { Bm25Index } from '../src/core/index/bm25';
import { RelevanceModel } from '../src/core/controller/relevance';
import { encodedText } from '../src/core/encode/nodeVectors';
import { contentTerms } from '../src/core/text/terms';
import type { ParsedDocument } from '../src/core/ingest/parsedDocument';
import { parseFile } from '../src/core/ingest/parseFile';
import { reciprocalRankFusion, type Ranked } from '../src/core/retrieve/fusion';
import { linearFusion } from '../src/core/retrieve/hybrid';
import { BootstrapPlan, type Ratio } from '../src/eval/bootstrap';
import { openEvalEmbeddings } from '../src/eval/embeddings';
import { defaultOutDir } from './convert-use/main';

interface Question {
  financebench_id: string;
  question: string;
  doc_name: string;
  evidence: Array<{ evidence_page_num: number }>;
}

const KS = [1, 3, 5];

function leavesOf(n: RegionNode): RegionNode[] {
  return n.children.length === 0 ? [n] : n.children.flatMap(leavesOf);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** head coverage + ½ best element coverage + 0.05 cosine: idf-weighted shares of the question's terms (absolute, 0–1). */
function coverageRanking(view: DocumentView, relevance: RelevanceModel): Ranked[] {
  const out: Ranked[] = [];
  for (const p of view.pages) {
    const headCov = coverageShare(relevance, pageHead(view, p.id));
    let el = 0;
    for (const e of view.elementsOn(p.id)) el = Math.max(el, relevance.lexical(e.id));
    out.push({ id: p.id, score: headCov + 0.5 * el + 0.05 * Math.max(0, relevance.dense(p.id) ?? 0) });
  }
  return sortPages(view, out);
}

/** Idf-weighted share of the question's terms in a text (0–1). */
function coverageShare(relevance: RelevanceModel, text: string): number {
  const total = relevance.questionTerms.reduce((a, t) => a + t.idf, 0) || 1;
  const set = new Set(contentTerms(text));
  return relevance.questionTerms.reduce((a, t) => a + (set.has(t.term) ? t.idf : 0), 0) / total;
}

/** As the product, but each signal divided by its maximum (no shift by the minimum). */
function maxNormRanking(view: DocumentView, s: ReturnType<typeof pageSignals>): Ranked[] {
  const norm = (l: Ranked[]) => {
    const hi = Math.max(0, ...l.map((r) => r.score));
    return new Map(l.map((r) => [r.id, hi > 0 ? r.score / hi : 0]));
  };
  const h = norm(s.head);
  const e = norm(s.element);
  const d = norm(s.dense);
  return sortPages(view, view.pages.map((p) => ({ id: p.id, score: (h.get(p.id) ?? 0) + 0.5 * (e.get(p.id) ?? 0) + 0.05 * (d.get(p.id) ?? 0) })));
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { cache: { type: 'string' }, limit: { type: 'string' }, out: { type: 'string' } } });
  const file = resolve(positionals[0] ?? '');
  const cache = resolve(values.cache ?? join(process.env.HOME ?? '.', '.cache', 'canopy-eval'));
  const log = (m: string) => process.stderr.write(`${m}\n`);
  let questions = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Question);
  if (values.limit) questions = questions.slice(0, Number(values.limit));
  const embeddings = await openEvalEmbeddings({ encoder: { kind: 'builtin' }, builtinModelDir: defaultOutDir, cacheDir: join(cache, 'embeddings') });
  const parsedDir = join(cache, 'grounding-parsed');
  mkdirSync(parsedDir, { recursive: true });
  const started = Date.now();

  let current: { name: string; view: DocumentView; leafVectors: Map<string, Array<{ text: string; v: Float32Array }>> } | undefined;
  const load = async (name: string) => {
    if (current?.name === name) return current;
    const abs = resolve(dirname(file), 'pdfs', `${name}.pdf`);
    const bytes = new Uint8Array(readFileSync(abs));
    const key = createHash('sha256').update(bytes).update(`\0${PARSER_VERSION}`).digest('hex').slice(0, 24);
    const cached = join(parsedDir, `${key}.json`);
    let doc: ParsedDocument;
    if (existsSync(cached)) doc = JSON.parse(readFileSync(cached, 'utf8')) as ParsedDocument;
    else {
      const t0 = Date.now();
      doc = await parseFile(`${name}.pdf`, bytes, { graph: false, timeLimitMs: 20 * 60_000 });
      writeFileSync(cached, JSON.stringify(doc));
      log(`parsed ${name}: ${doc.pages?.length ?? 0} pages in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    const view = await DocumentView.of(doc);
    // Leaves per page (sentences, rows with their header) for the leaf-level signal.
    const leafVectors = new Map<string, Array<{ text: string; v: Float32Array }>>();
    for (const p of view.pages) {
      const region = p.regionId ? view.region(p.regionId) : undefined;
      if (!region) continue;
      const leaves = leavesOf(region).filter((l) => l.text.trim());
      const vs = await embeddings.embedTexts(leaves.map(encodedText));
      leafVectors.set(p.id, leaves.map((l, i) => ({ text: l.text, v: vs[i]! })));
    }
    await embeddings.save();
    current = { name, view, leafVectors };
    return current;
  };

  const recipes = ['rrf', 'linear', 'dense', 'page-bm25', 'el-dense', 'el-bm25', 'leaf-dense', 'head-bm25', 'rrf-head-el', 'head+el', 'head+el+0.25dense', 'product', 'cov', 'maxnorm', 'head-share'] as const;
  type Recipe = (typeof recipes)[number];
  const acc = new Map<Recipe, { recall: Ratio[][]; rr: Ratio[] }>(recipes.map((r) => [r, { recall: KS.map(() => [] as Ratio[]), rr: [] as Ratio[] }]));
  const perQuestion: Array<{ id: string; doc: string; pages: number; gold: number[]; firstGoldRank: Record<string, number> }> = [];
  for (const [qi, q] of questions.entries()) {
    const d = await load(q.doc_name);
    const view = d.view;
    const relevance = await RelevanceModel.create(q.question, view, { embedQuery: embeddings.embedQuery, embedTexts: embeddings.embedTexts });
    const s = pageSignals(view, relevance);
    const pageBm25 = Bm25Index.build(view.pages.filter((p) => p.text.trim()).map((p) => ({ id: p.id, title: '', text: p.text, modality: 'text' }))).query(q.question, view.pages.length);
    const headBm25 = Bm25Index.build(view.pages.flatMap((p) => {
      const head = pageHead(view, p.id);
      return head ? [{ id: p.id, title: '', text: head, modality: 'text' }] : [];
    })).query(q.question, view.pages.length);
    const elementCosines = view.elements.flatMap((e) => {
      const c = relevance.dense(e.id);
      return c === undefined ? [] : [{ id: e.id, score: c }];
    });
    const leafDense: Ranked[] = [];
    for (const [pageId, leaves] of d.leafVectors) if (leaves.length > 0) leafDense.push({ id: pageId, score: Math.max(...leaves.map((l) => dot(l.v, relevance.queryVector))) });
    const ids = (list: Array<{ id: string }>) => list.map((x) => x.id);
    const rankings: Record<Recipe, string[]> = {
      rrf: ids(reciprocalRankFusion([s.dense, pageBm25], 60)),
      linear: ids(linearFusion(s.dense, pageBm25, 0.2)),
      dense: ids(s.dense),
      'page-bm25': ids(pageBm25),
      'el-dense': ids(bestPerPage(view, elementCosines)),
      'el-bm25': ids(s.element),
      'leaf-dense': ids(sortPages(view, leafDense)),
      'head-bm25': ids(headBm25),
      'rrf-head-el': ids(reciprocalRankFusion([s.head, s.element], 60)),
      'head+el': ids(fusePageSignals(view, s, { element: 0.5, dense: 0 })),
      'head+el+0.25dense': ids(fusePageSignals(view, s, { element: 0.5, dense: 0.25 })),
      product: ids(fusePageSignals(view, s)),
      cov: ids(coverageRanking(view, relevance)),
      maxnorm: ids(maxNormRanking(view, s)),
      'head-share': ids(fusePageSignals(view, { ...s, head: sortPages(view, headBm25.map((h) => ({ id: h.id, score: h.score * coverageShare(relevance, pageHead(view, h.id)) }))) })),
    };
    const gold = new Set(q.evidence.map((e) => e.evidence_page_num));
    const row = { id: q.financebench_id, doc: q.doc_name, pages: view.pages.length, gold: [...gold], firstGoldRank: {} as Record<string, number> };
    for (const r of recipes) {
      const ranked = [...rankings[r]];
      // Pages the recipe did not rank follow in page order (as groundPages does).
      const seen = new Set(ranked);
      for (const p of view.pages) if (!seen.has(p.id)) ranked.push(p.id);
      const pages = ranked.map((id) => view.node(id)!.page);
      const a = acc.get(r)!;
      KS.forEach((k, ki) => a.recall[ki]!.push({ num: pages.slice(0, k).filter((p) => gold.has(p)).length, den: gold.size }));
      const first = pages.findIndex((p) => gold.has(p));
      a.rr.push({ num: first < 0 ? 0 : 1 / (first + 1), den: 1 });
      row.firstGoldRank[r] = first < 0 ? -1 : first + 1;
    }
    // groundPages (what the controller uses) must rank as the `product` recipe measured here.
    const grounded = groundPages(view, relevance).map((g) => g.pageId);
    if (grounded.slice(0, 5).join() !== rankings.product.slice(0, 5).join()) throw new Error(`groundPages differs from the product recipe on ${q.financebench_id}`);
    perQuestion.push(row);
    log(`${qi + 1}/${questions.length} ${q.doc_name} (${((Date.now() - started) / 1000).toFixed(0)} s) first gold rank: ${Object.entries(row.firstGoldRank).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  }
  await embeddings.dispose();

  const plan = new BootstrapPlan(questions.length, 1000, 1);
  const fmt = (i: { value: number; lo: number; hi: number }, scale = 100, dgt = 1) => `${(scale * i.value).toFixed(dgt)} [${(scale * i.lo).toFixed(dgt)}, ${(scale * i.hi).toFixed(dgt)}]`;
  const base = acc.get('rrf')!;
  // Differences are against `rrf`, the grounding before this tool.
  const rows = recipes.map((r) => {
    const a = acc.get(r)!;
    return {
      recipe: r,
      recall: KS.map((k, ki) => ({ k, ...plan.interval(a.recall[ki]!) })),
      mrr: plan.interval(a.rr),
      minusRrf: { recall: KS.map((k, ki) => ({ k, ...plan.differenceInterval(a.recall[ki]!, base.recall[ki]!) })), mrr: plan.differenceInterval(a.rr, base.rr) },
    };
  });
  const lines = [
    `page grounding on ${questions.length} FinanceBench questions (${((Date.now() - started) / 1000).toFixed(0)} s)`,
    '| recipe | recall@1 | recall@3 | recall@5 | MRR | recall@5 − rrf | MRR − rrf |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.recipe} | ${r.recall.map((x) => fmt(x)).join(' | ')} | ${fmt(r.mrr, 1, 3)} | ${fmt(r.minusRrf.recall[2]!)} | ${fmt(r.minusRrf.mrr, 1, 3)} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (values.out) writeFileSync(values.out, JSON.stringify({ questions: questions.length, rows, perQuestion }, null, 2));
}

void main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
