/**
 * `canopy eval` on FinanceBench (given mode, the default comparison): evidence chosen inside each
 * question's own PDF by
 *   page top-k (k = 1, 3, 5)   the k best pages of the controller's page-level grounding
 *                               (`groundPages`: page heads + best element), each page kept whole;
 *   CANOPY over page top-k      CANOPY projection (the pipeline's `projectItem`) inside each of
 *                               those pages — CANOPY alone, without the controller;
 *   controller                  `buildEvidenceSubgraph` (the MAGE controller, design §7) with its
 *                               default budgets, CANOPY projection inside the opened elements —
 *                               the LLM evaluator when an LLM is given, the rule otherwise.
 * Every method yields kept regions of the same parsed document, scored by the harness's own
 * `evaluateKept` (evidence pages, tokens, answer-bearing), so the report machinery and its paired
 * bootstrap apply unchanged. The controller's traces give MAGE-RAG's trace statistics, split by
 * whether the run was correct (see `correctDefinition`).
 *
 * Parsed documents (with their graph) are cached under `<cache>/parsed/`, keyed by the PDF's
 * bytes, the parser version, B and the encoder (the graph's semantic edges depend on it); they
 * are parsed with a 20-minute per-file limit so a busy machine does not cut a 10-K short.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { PARSER_VERSION } from '../core/app/indexService';
import { scoreNodes } from '../core/compress/nodeScorer';
import { nodeVectors } from '../core/encode/nodeVectors';
import { projectItem } from '../core/compress/projection';
import { routeQuestion } from '../core/compress/router';
import type { TokenCounter } from '../core/compress/tokens';
import { DocumentView } from '../core/controller/documentView';
import { groundPages } from '../core/controller/grounding';
import type { ControllerOptions } from '../core/controller/options';
import { RelevanceModel } from '../core/controller/relevance';
import { aggregateTraceStats, traceStats, type ControllerStatsSplit } from '../core/controller/stats';
import { buildEvidenceSubgraph } from '../core/controller/subgraph';
import type { ControllerTrace } from '../core/controller/trace';
import { CanopyError, ErrorCodes, throwIfCancelled } from '../core/errors';
import type { ParsedDocument } from '../core/ingest/parsedDocument';
import { parseFile } from '../core/ingest/parseFile';
import type { ChatModel } from '../core/llm/llm';
import type { RegionNode } from '../contracts/region';
import { buildReaderInput, type EvidenceRegion, type ReaderInput } from '../core/read/reader';
import { JUDGE_DUMP_SCHEMA, serializeRegion, type JudgeDumpWriter } from './judgeDump';
import { bestAnswerScores, normalizeAnswer } from './answers';
import type { BootstrapPlan, Interval } from './bootstrap';
import type { RunConfig } from './configs';
import type { EvalQuestion } from './datasets/types';
import type { EvalEmbeddings } from './embeddings';
import { resolveGold } from './gold';
import { eligibleAnswers, evaluateKept, regionText, type Outcome } from './outcome';
import type { MetricSpec } from './report';

/** Per-PDF parse limit for the evaluation (the indexer's default is 120 s). */
const PARSE_TIME_LIMIT_MS = 20 * 60_000;

export const PAGE_KS: readonly number[] = [1, 3, 5];

/** What "correct" means in the trace statistics of a run. */
export function correctDefinition(withReader: boolean): string {
  return withReader
    ? 'correct = the LLM reader\'s answer from the controller\'s evidence has token F1 ≥ 0.5 against the reference answer'
    : 'correct = every evidence page of the question holds a region the controller kept (no LLM reader: a stand-in for a correct answer)';
}

/** The configurations of the comparison, in report order. */
export function documentConfigs(branching: number, topK: number): RunConfig[] {
  const base = { groupVectors: 'mean' as const, branching, rounds: 1, critic: 'none' as const, topK };
  const out: RunConfig[] = [];
  for (const k of PAGE_KS) out.push({ id: `page top-${k}`, compressor: { name: 'document', method: 'pages', k }, ...base });
  for (const k of PAGE_KS) out.push({ id: `CANOPY over page top-${k}`, compressor: { name: 'document', method: 'canopy-pages', k }, ...base });
  out.push({ id: 'controller', compressor: { name: 'document', method: 'controller' }, ...base });
  return out;
}

/** The metrics of the comparison (a subset of the harness's, with FinanceBench's names). */
export const documentMetrics: MetricSpec[] = [
  { key: 'goldRecall', label: 'evidence-page recall', percent: true, value: (o) => (o.gold.total > 0 ? { num: o.gold.kept, den: o.gold.total } : undefined) },
  { key: 'allPages', label: 'questions with every evidence page', percent: true, value: (o) => (o.gold.total > 0 ? { num: o.gold.kept === o.gold.total ? 1 : 0, den: 1 } : undefined) },
  { key: 'answerBearing', label: 'answer-bearing recall', percent: true, value: (o) => (o.answerKept === undefined ? undefined : { num: o.answerKept ? 1 : 0, den: 1 }) },
  { key: 'tokens', label: 'evidence tokens', percent: false, value: (o) => ({ num: o.tokens, den: 1 }) },
  { key: 'readerTokens', label: 'reader input tokens', percent: false, value: (o) => (o.readerTokens === undefined ? undefined : { num: o.readerTokens, den: 1 }) },
  { key: 'regions', label: 'kept regions', percent: false, value: (o) => ({ num: o.regions, den: 1 }) },
  { key: 'em', label: 'EM', percent: true, value: (o) => (o.reader ? { num: o.reader.em, den: 1 } : undefined) },
  { key: 'f1', label: 'F1', percent: true, value: (o) => (o.reader ? { num: o.reader.f1, den: 1 } : undefined) },
];

/** One question's controller run, as the report lists it. */
export interface ControllerQuestionRow {
  id: string;
  file: string;
  evidencePages: number[];
  controllerPages: number[];
  correct: boolean;
  actions: number;
  byType: Record<string, number>;
  opened: number;
  pruned: number;
  iterations: number;
  searches: number;
  invalidActions: number;
  stop: string;
  evidenceTokens: number;
}

/** The controller against each other method, paired on the same questions. */
export interface DocumentVersus {
  config: string;
  against: string;
  /** Controller recall − the other's (evidence pages). */
  recallDiff: Interval;
  /** Controller tokens − the other's (mean per question). */
  tokensDiff: Interval;
  /** Controller reader-input tokens (the subgraph XML) − the other's (its flat blocks). */
  readerTokensDiff: Interval;
}

export interface DocumentComparison {
  correctDefinition: string;
  versus: DocumentVersus[];
  controllerStats: ControllerStatsSplit;
  perQuestion: ControllerQuestionRow[];
  controllerXmlTokens: number;
  budgets: ControllerTrace['budgets'] | undefined;
}

export interface DocumentRunDeps {
  embeddings: EvalEmbeddings;
  tokens: TokenCounter;
  /** Folder of the parsed-document cache. */
  cacheDir: string;
  branching: number;
  /** Controller options beyond the defaults (experiments). */
  controller?: Partial<ControllerOptions>;
  /** The controller's LLM evaluator (absent: the rule). */
  llm?: ChatModel;
  /** An LLM reader's short answer from the reader input of the kept regions (EM/F1, and "correct" for the trace statistics). */
  read?: (question: string, input: ReaderInput) => Promise<string>;
  onQuestion?: (done: number, total: number) => void;
  log?: (message: string) => void;
  signal?: AbortSignal;
  /** Write the controller's reader input and the gold pages per question (`--dump-judge`, judgeDump.ts). */
  dump?: { writer: JudgeDumpWriter; dataset: string };
}

/** Parsed PDFs with their graph, on disk, keyed by bytes, parser version, B and encoder. */
export class ParsedDocumentCache {
  private readonly memory = new Map<string, ParsedDocument>();

  constructor(
    private readonly dir: string,
    private readonly embeddings: EvalEmbeddings,
    private readonly branching: number,
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  async get(path: string, relPath: string, signal?: AbortSignal): Promise<ParsedDocument> {
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(path);
    } catch (err) {
      throw new CanopyError(ErrorCodes.badInput, `${path}: cannot read the question's PDF (${(err as Error).message})`, { file: path, cause: err });
    }
    const key = createHash('sha256').update(bytes).update(`\0${PARSER_VERSION}\0B=${this.branching}\0${this.embeddings.id}`).digest('hex').slice(0, 32);
    const hit = this.memory.get(key);
    if (hit) return hit;
    const file = join(this.dir, `${key}.json`);
    let doc: ParsedDocument | undefined;
    try {
      doc = JSON.parse(await fs.readFile(file, 'utf8')) as ParsedDocument;
    } catch {
      doc = undefined;
    }
    if (!doc || !Array.isArray(doc.items)) {
      const started = Date.now();
      doc = await parseFile(relPath, bytes, {
        branchingFactor: this.branching,
        // A benchmark needs whole documents: a 10-K on a busy machine must not be cut at the indexer's per-file limit.
        timeLimitMs: PARSE_TIME_LIMIT_MS,
        embed: (texts) => this.embeddings.embedTexts(texts, signal),
        ...(signal ? { signal } : {}),
      });
      await fs.mkdir(this.dir, { recursive: true });
      await fs.writeFile(file, JSON.stringify(doc));
      await this.embeddings.save();
      this.log(`parsed ${relPath}: ${doc.pages?.length ?? 0} pages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    if (doc.warnings.some((w) => w.code === 'timeLimit')) this.log(`${relPath}: parsed only in part (${doc.pages?.length ?? 0} pages) within ${PARSE_TIME_LIMIT_MS / 60_000} minutes`);
    if (doc.format !== 'pdf' || !doc.pages || doc.pages.length === 0) throw new CanopyError(ErrorCodes.badInput, `${path}: not a PDF with pages (parsed as ${doc.format})`, { file: path });
    this.memory.set(key, doc);
    // A 10-K's parsed tree is large: keep a few documents in memory (questions are grouped by file).
    if (this.memory.size > 3) this.memory.delete(this.memory.keys().next().value!);
    return doc;
  }
}

function keptByItem(nodes: Array<{ itemId: string; node: RegionNode }>): Map<string, RegionNode[]> {
  const out = new Map<string, RegionNode[]>();
  for (const { itemId, node } of nodes) {
    const list = out.get(itemId) ?? [];
    list.push(node);
    out.set(itemId, list);
  }
  return out;
}

function pagesOf(nodes: Iterable<RegionNode>): number[] {
  const pages = new Set<number>();
  for (const n of nodes) {
    if (n.anchor.page === undefined) continue;
    for (let p = n.anchor.page; p <= (n.anchor.pageEnd ?? n.anchor.page); p++) pages.add(p);
  }
  return [...pages].sort((a, b) => a - b);
}

/**
 * Runs every method on every question. Outcomes are indexed [config][question] like the other
 * runners'; questions whose PDF yields no resolvable evidence page still count for tokens.
 */
export async function runDocumentComparison(
  questions: EvalQuestion[],
  configs: RunConfig[],
  deps: DocumentRunDeps,
): Promise<{ outcomes: Outcome[][]; runs: Array<{ trace: ControllerTrace; correct: boolean }>; perQuestion: ControllerQuestionRow[]; unresolvedGold: number; xmlTokens: number[] }> {
  const cache = new ParsedDocumentCache(join(deps.cacheDir, 'parsed'), deps.embeddings, deps.branching, deps.log);
  const outcomes: Outcome[][] = configs.map(() => []);
  const runs: Array<{ trace: ControllerTrace; correct: boolean }> = [];
  const perQuestion: ControllerQuestionRow[] = [];
  const xmlTokens: number[] = [];
  let unresolvedGold = 0;
  const contextText = new Map<string, string>();
  const embedQuery = deps.embeddings.embedQuery;
  const embedTexts = deps.embeddings.embedTexts;

  for (let qi = 0; qi < questions.length; qi++) {
    throwIfCancelled(deps.signal);
    const q = questions[qi]!;
    const source = q.context.find((c) => c.kind === 'file');
    if (!source || source.kind !== 'file') throw new CanopyError(ErrorCodes.badInput, `question ${q.id} (line ${q.line}) names no PDF`);
    const doc = await cache.get(source.path, source.relPath, deps.signal);
    const items = doc.items;
    const itemById = new Map(items.map((it) => [it.id, it]));
    const { gold, unresolved } = resolveGold(q.gold, [{ key: source.key, items, leafByIndex: new Map() }]);
    unresolvedGold += unresolved;
    let normalized = contextText.get(source.path);
    if (normalized === undefined) {
      normalized = normalizeAnswer(items.map((it) => regionText(it.root)).join('\n'));
      contextText.clear();
      contextText.set(source.path, normalized);
    }
    const answers = eligibleAnswers(q.answers, q.answersAllRequired ?? false, normalized);
    const view = await DocumentView.of(doc);
    const relevance = await RelevanceModel.create(q.question, view, { embedQuery, embedTexts }, deps.signal);
    const ranking = groundPages(view, relevance);
    const aggregate = routeQuestion(q.question).aggregate;
    const pageRegion = (pageId: string): { itemId: string; node: RegionNode } | undefined => {
      const n = view.node(pageId);
      const region = n?.regionId ? view.region(n.regionId) : undefined;
      return region && n?.itemId ? { itemId: n.itemId, node: region } : undefined;
    };

    for (const [ci, config] of configs.entries()) {
      throwIfCancelled(deps.signal);
      const c = config.compressor;
      if (c.name !== 'document') throw new Error(`not a document configuration: ${config.id}`);
      let kept: Array<{ itemId: string; node: RegionNode }> = [];
      const scores = new Map<string, number>();
      // What the reader would be sent: flat numbered blocks of the kept regions, or the controller's subgraph XML.
      let readerRegions: EvidenceRegion[] | undefined;
      if (c.method === 'pages' || c.method === 'canopy-pages') {
        const pages = ranking
          .slice(0, c.k)
          .map((g) => pageRegion(g.pageId))
          .filter((p): p is { itemId: string; node: RegionNode } => p !== undefined);
        if (c.method === 'pages') kept = pages;
        else {
          for (const p of pages) {
            const s = scoreNodes(relevance.queryVector, await nodeVectors(p.node, embedTexts, deps.signal));
            for (const [id, v] of s) scores.set(id, v);
            for (const node of projectItem(p.node, (n) => s.get(n.id) ?? Number.NEGATIVE_INFINITY, { keepTablesWhole: aggregate }).kept) kept.push({ itemId: p.itemId, node });
          }
        }
      } else {
        const sub = await buildEvidenceSubgraph(q.question, doc, { embedQuery, embedTexts, tokens: deps.tokens, ...(deps.llm ? { llm: deps.llm } : {}) }, deps.controller ?? {}, deps.signal);
        kept = sub.regions.map((r) => ({ itemId: r.itemId, node: r.node }));
        readerRegions = sub.regions;
        for (const r of sub.regions) scores.set(r.node.id, r.score);
        xmlTokens.push(sub.trace.totals.xmlTokens);
        runs.push({ trace: sub.trace, correct: false });
      }
      const outcome = evaluateKept({ items, kept: keptByItem(kept), gold, answers, answersAllRequired: q.answersAllRequired ?? false, tokens: deps.tokens });
      readerRegions ??= kept.map(({ itemId, node }) => ({ itemId, itemTitle: itemById.get(itemId)!.title, file: doc.file, node, score: scores.get(node.id) ?? 0 }));
      const readerInput = buildReaderInput(readerRegions, deps.tokens, Number.MAX_SAFE_INTEGER);
      if (deps.dump && c.method === 'controller') {
        const capped = buildReaderInput(readerRegions, deps.tokens, 16000);
        deps.dump.writer.write({
          schema: JUDGE_DUMP_SCHEMA,
          dataset: deps.dump.dataset,
          questionId: q.id,
          question: q.question,
          // The reference answer as written ("$1577.00"): the labels read its figures.
          answers: q.answers,
          gold: gold.map((g) => ({ leafIds: g.leafIds, mode: g.mode })),
          retrieval: false,
          regions: capped.regions.map(serializeRegion),
          rounds: [],
          ...(capped.truncated ? { truncated: true } : {}),
        });
      }
      outcome.readerTokens = readerInput.tokens;
      if (deps.read && q.answers.length > 0) outcome.reader = bestAnswerScores(await deps.read(q.question, readerInput), q.answers);
      outcomes[ci]![qi] = outcome;
      if (c.method === 'controller') {
        const run = runs[runs.length - 1]!;
        run.correct = deps.read ? (outcome.reader?.f1 ?? 0) >= 0.5 : outcome.gold.total > 0 && outcome.gold.kept === outcome.gold.total;
        const st = traceStats(run.trace);
        perQuestion.push({
          id: q.id,
          file: source.relPath,
          evidencePages: [...new Set(q.gold.flatMap((g) => (g.granularity === 'page' ? [g.index] : [])))],
          controllerPages: pagesOf(kept.map((k) => k.node)),
          correct: run.correct,
          actions: st.actions,
          byType: { ...st.byType },
          opened: st.opened,
          pruned: st.pruned,
          iterations: st.iterations,
          searches: st.searches,
          invalidActions: st.invalidActions,
          stop: st.stopReason,
          evidenceTokens: st.evidenceTokens,
        });
      }
    }
    deps.onQuestion?.(qi + 1, questions.length);
  }
  return { outcomes, runs, perQuestion, unresolvedGold, xmlTokens };
}

/** The controller against every other configuration: paired bootstrap differences of recall and tokens. */
export function documentVersus(questions: EvalQuestion[], configs: RunConfig[], outcomes: Outcome[][], plan: BootstrapPlan): DocumentVersus[] {
  const ctl = configs.findIndex((c) => c.compressor.name === 'document' && c.compressor.method === 'controller');
  if (ctl < 0) return [];
  const recall = documentMetrics.find((m) => m.key === 'goldRecall')!;
  const tokens = documentMetrics.find((m) => m.key === 'tokens')!;
  const readerTokens = documentMetrics.find((m) => m.key === 'readerTokens')!;
  const values = (c: number, spec: MetricSpec) => questions.map((q, qi) => (outcomes[c]![qi] ? spec.value(outcomes[c]![qi]!, q) : undefined));
  return configs.flatMap((c, i) =>
    i === ctl
      ? []
      : [
          {
            config: configs[ctl]!.id,
            against: c.id,
            recallDiff: plan.differenceInterval(values(ctl, recall), values(i, recall)),
            tokensDiff: plan.differenceInterval(values(ctl, tokens), values(i, tokens)),
            readerTokensDiff: plan.differenceInterval(values(ctl, readerTokens), values(i, readerTokens)),
          },
        ],
  );
}

export function documentComparison(
  run: Awaited<ReturnType<typeof runDocumentComparison>>,
  versus: DocumentVersus[],
  withReader: boolean,
): DocumentComparison {
  return {
    correctDefinition: correctDefinition(withReader),
    versus,
    controllerStats: aggregateTraceStats(run.runs),
    perQuestion: run.perQuestion,
    controllerXmlTokens: run.xmlTokens.length ? run.xmlTokens.reduce((a, b) => a + b, 0) / run.xmlTokens.length : 0,
    budgets: run.runs[0]?.trace.budgets,
  };
}
