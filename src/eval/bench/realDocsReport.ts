/**
 * The real-document benchmark's figures: per-source summaries of the question rows, the Markdown
 * section for BENCHMARKS.md (between its own markers, so `npm run bench` can rewrite it without
 * touching the other sections), and a before → after comparison of two JSON reports.
 */
import { canopyCompressor, defaultSettings } from '../../core/config/settings';
import { BUILTIN_PROFILE } from '../../core/retrieve/profile';
import { percentile } from './measure';
import { BM25_TABLE_K } from './realDocsBm25';
import type { RealDocsFolderReport, RealDocsNqReport, RealDocsReport, RealDocsRow, RealDocsSampleReport } from './realDocs';
import { ANSWER_OUTCOMES, answerOutcome, type AnswerMetrics, type AnswerOutcome } from './realDocsScore';

export const REALDOCS_BEGIN = '<!-- canopy-bench-realdocs:begin (written by `canopy bench realdocs --markdown` or `npm run bench`; edit src/eval/bench/realDocsReport.ts, not this text) -->';
export const REALDOCS_END = '<!-- canopy-bench-realdocs:end -->';

export interface Spread {
  p50: number;
  p95: number;
  max: number;
  mean: number;
}

export interface RealDocsSummary {
  questions: number;
  /** Seconds of the whole `canopy ask` process. */
  cli?: Spread;
  /** Seconds of a warm in-process ask. */
  warm?: Spread;
  /** CPU seconds (user + system, all threads) of the same, where measured. */
  cliCpu?: Spread;
  warmCpu?: Spread;
  failed: { cli: number; warm: number };
  /** Rows whose quality figures were scored (from the CLI run; the warm run where the CLI was not run). */
  scored: number;
  meanRounds: number;
  stops: Record<string, number>;
  meanItems: number;
  meanEvidenceTokens: number;
  readerTruncated: number;
  answerHasGold: number;
  cited1Gold: number;
  citedAnyGold: number;
  goldInEvidence: number;
  goldInEvidenceRound1: number;
  /** Of the scored rows whose answers are strings to find (not FinanceBench): how many, an answer string in the kept evidence, the gold's file retrieved. */
  stringScored?: number;
  answerInEvidence?: number;
  goldFileRetrieved?: number;
  /** Rows per answer outcome (answerOutcome: answered, or where the answer was lost). */
  outcomes?: Partial<Record<AnswerOutcome, number>>;
  /**
   * The critic's verdicts (every round it judged) against "the gold is already in the kept
   * evidence": true positive = said sufficient and the gold was there; false positive = said
   * sufficient without it; false negative = said insufficient with the gold there.
   */
  critic: { verdicts: number; tp: number; fp: number; fn: number; tn: number };
  /** Rows with both runs whose answers are the same text. */
  warmSameAsCli?: { same: number; of: number };
}

function spread(ms: number[]): Spread | undefined {
  if (ms.length === 0) return undefined;
  const s = ms.map((x) => x / 1000);
  return { p50: percentile(s, 0.5), p95: percentile(s, 0.95), max: Math.max(...s), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

function criticCounts(metrics: readonly AnswerMetrics[]): RealDocsSummary['critic'] {
  const c = { verdicts: 0, tp: 0, fp: 0, fn: 0, tn: 0 };
  // Reports written before the critic's verdicts were recorded have none.
  for (const v of metrics.flatMap((m) => m.criticVerdicts ?? [])) {
    c.verdicts++;
    if (v.sufficient) c[v.goldKept ? 'tp' : 'fp']++;
    else c[v.goldKept ? 'fn' : 'tn']++;
  }
  return c;
}

/** "precision p/q, recall r/s" of the critic's "sufficient" against "gold already kept". */
export function criticText(c: RealDocsSummary['critic'] | undefined): string {
  if (!c || c.verdicts === 0) return '—';
  const pct = (n: number, of: number) => (of === 0 ? '—' : `${Math.round((100 * n) / of)}%`);
  return `precision ${pct(c.tp, c.tp + c.fp)} (${c.tp}/${c.tp + c.fp}), recall ${pct(c.tp, c.tp + c.fn)} (${c.tp}/${c.tp + c.fn}); ${c.verdicts} verdicts`;
}

const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * The metrics a row is scored by: the CLI run's (the warm run's where the CLI did not run), or —
 * `prefer: 'warm'`, for samples asked warm in full and cold in part — the warm run's (the CLI
 * run's where the warm did not run). A run that failed scores nothing.
 */
export function preferredMetrics(r: RealDocsRow, prefer: 'cli' | 'warm' = 'cli'): AnswerMetrics | undefined {
  return prefer === 'cli' ? (r.cli?.metrics ?? (r.cli ? undefined : r.warm?.metrics)) : (r.warm?.metrics ?? (r.warm ? undefined : r.cli?.metrics));
}

export function summarise(rows: readonly RealDocsRow[], prefer: 'cli' | 'warm' = 'cli'): RealDocsSummary {
  const scoredRows = rows.map((r) => ({ r, m: preferredMetrics(r, prefer) })).filter((x): x is { r: RealDocsRow; m: AnswerMetrics } => x.m !== undefined);
  const metrics: AnswerMetrics[] = scoredRows.map((x) => x.m);
  const count = (pred: (m: AnswerMetrics) => boolean) => metrics.filter(pred).length;
  const stops: Record<string, number> = {};
  for (const m of metrics) stops[m.stop] = (stops[m.stop] ?? 0) + 1;
  const both = rows.filter((r) => r.cli?.metrics && r.warm?.metrics);
  const cli = spread(rows.filter((r) => r.cli && r.cli.exitCode === 0).map((r) => r.cli!.ms));
  const warm = spread(rows.filter((r) => r.warm && !r.warm.error).map((r) => r.warm!.ms));
  const cliCpu = spread(rows.filter((r) => r.cli && r.cli.exitCode === 0 && r.cli.cpuMs !== undefined).map((r) => r.cli!.cpuMs!));
  const warmCpu = spread(rows.filter((r) => r.warm && !r.warm.error && r.warm.cpuMs !== undefined).map((r) => r.warm!.cpuMs!));
  return {
    questions: rows.length,
    ...(cli ? { cli } : {}),
    ...(warm ? { warm } : {}),
    ...(cliCpu ? { cliCpu } : {}),
    ...(warmCpu ? { warmCpu } : {}),
    failed: { cli: rows.filter((r) => r.cli && r.cli.exitCode !== 0).length, warm: rows.filter((r) => r.warm?.error).length },
    scored: metrics.length,
    meanRounds: mean(metrics.map((m) => m.rounds)),
    stops,
    meanItems: mean(metrics.map((m) => m.items)),
    meanEvidenceTokens: mean(metrics.map((m) => m.evidenceTokens)),
    readerTruncated: count((m) => m.readerTruncated),
    answerHasGold: count((m) => m.answerHasGold),
    cited1Gold: count((m) => m.cited1Gold),
    citedAnyGold: count((m) => m.citedAnyGold),
    goldInEvidence: count((m) => m.goldInEvidence),
    goldInEvidenceRound1: count((m) => m.goldInEvidenceRound1),
    critic: criticCounts(metrics),
    ...stringFigures(scoredRows),
    ...(both.length > 0 ? { warmSameAsCli: { same: both.filter((r) => r.cli!.metrics!.answer === r.warm!.metrics!.answer).length, of: both.length } } : {}),
  };
}

/** The answer-string figures of the rows scored by strings (none for FinanceBench, or for reports written before them). */
function stringFigures(scored: ReadonlyArray<{ r: RealDocsRow; m: AnswerMetrics }>): Pick<RealDocsSummary, 'stringScored' | 'answerInEvidence' | 'goldFileRetrieved' | 'outcomes'> {
  const withStrings = scored.filter((x) => x.m.answerInEvidence !== undefined);
  if (withStrings.length === 0) return {};
  const outcomes: Partial<Record<AnswerOutcome, number>> = {};
  for (const { r, m } of withStrings) {
    const o = answerOutcome(m, r.goldHoldsAnswer)!;
    outcomes[o] = (outcomes[o] ?? 0) + 1;
  }
  return {
    stringScored: withStrings.length,
    answerInEvidence: withStrings.filter((x) => x.m.answerInEvidence).length,
    goldFileRetrieved: withStrings.filter((x) => x.m.goldFileRetrieved).length,
    outcomes,
  };
}

const s1 = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const spreadText = (s: Spread | undefined) => (s ? `${s1(s.p50)} / ${s1(s.p95)} / ${s1(s.max)} s` : '—');
const frac = (n: number, of: number) => (of === 0 ? '—' : `${n}/${of}`);
const num = (x: number, digits = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '—');

function stopsText(s: RealDocsSummary): string {
  const e = Object.entries(s.stops).sort((a, b) => b[1] - a[1]);
  return e.length === 0 ? '—' : e.map(([k, v]) => `${k} ${v}`).join(', ');
}

/** The metric rows of the summary table: label and a formatter per summary. */
const tableRows: Array<[string, (s: RealDocsSummary) => string]> = [
  ['`canopy ask` process (model load included), p50 / p95 / max', (s) => spreadText(s.cli)],
  ['`canopy ask` process CPU time (user + system)', (s) => spreadText(s.cliCpu)],
  ['warm in-process ask (one workspace, as the extension), p50 / p95 / max', (s) => spreadText(s.warm)],
  ['warm ask CPU time (user + system)', (s) => spreadText(s.warmCpu)],
  ['rounds, mean', (s) => num(s.meanRounds, 2)],
  ['stop reasons', stopsText],
  ['items per question, mean', (s) => num(s.meanItems, 1)],
  ['kept (evidence) tokens per question, mean', (s) => num(s.meanEvidenceTokens)],
  ['reader input cut at the token cap', (s) => frac(s.readerTruncated, s.scored)],
  ['gold answer string in the printed answer (FinanceBench: key fact)', (s) => frac(s.answerHasGold, s.scored)],
  ['citation [1] on the gold paragraph / page', (s) => frac(s.cited1Gold, s.scored)],
  ['any citation on the gold paragraph / page', (s) => frac(s.citedAnyGold, s.scored)],
  ['gold paragraph / page in the kept evidence', (s) => frac(s.goldInEvidence, s.scored)],
  ['… already after round 1', (s) => frac(s.goldInEvidenceRound1, s.scored)],
  ['critic "sufficient" vs gold already kept (every verdict)', (s) => criticText(s.critic)],
  ['warm answer identical to the CLI answer', (s) => (s.warmSameAsCli ? frac(s.warmSameAsCli.same, s.warmSameAsCli.of) : '—')],
  ['failed asks (CLI / warm)', (s) => `${s.failed.cli} / ${s.failed.warm}`],
];

function settingsText(s: RealDocsReport['settings']): string {
  // Reports written before the settings were recorded ran with these defaults.
  const v: Omit<NonNullable<RealDocsReport['settings']>, 'retrievalFusion'> & { retrievalFusion?: string } = s ?? { topK: 10, maxRounds: 3, readerTokenCap: 16000, controllerEnabled: true, controllerMinPages: 8 };
  const fusion = v.retrievalFusion === 'profile' ? "retrieval fused by the encoder's profile" : v.retrievalFusion === 'rrf' ? 'retrieval fused by RRF' : undefined;
  return [
    `k = ${v.topK}`,
    `up to ${v.maxRounds} rounds`,
    'rule critic',
    `extractive reader, input capped at ${num(v.readerTokenCap)} tokens`,
    v.controllerEnabled ? `MAGE controller for PDFs of ${v.controllerMinPages}+ pages` : 'no MAGE controller',
    ...(fusion ? [fusion] : []),
    ...(v.compressor ? [compressorText(v.compressor)] : []),
    ...(v.nodeScore ? [nodeScoreText(v.nodeScore)] : []),
  ].join(', ');
}

/** Whether the asks ran CANOPY as the default settings shape it (reports without the record did). */
function isDefaultCanopy(s: RealDocsReport['settings']): boolean {
  if (!s?.compressor) return true;
  return JSON.stringify(s.compressor) === JSON.stringify(canopyCompressor(defaultSettings)) && (s.nodeScore ?? defaultSettings.nodeScore) === defaultSettings.nodeScore;
}

/** CANOPY as the settings shaped it: "CANOPY" alone, or with its rank gate and glimpse. */
function compressorText(c: NonNullable<NonNullable<RealDocsReport['settings']>['compressor']>): string {
  if (c.name !== 'canopy') return c.name;
  const parts = [
    ...(c.items !== undefined ? [`rank gate ${c.items}${c.minItems !== undefined ? ` (at least ${c.minItems} items)` : ''}${c.wholeBelow !== undefined ? `, items ≤ ${num(c.wholeBelow)} characters kept whole` : ''}`] : []),
    ...(c.glimpse !== undefined ? [`glimpse ${c.glimpse}`] : []),
  ];
  return parts.length ? `CANOPY with ${parts.join(', ')}` : 'CANOPY';
}

function nodeScoreText(n: NonNullable<NonNullable<RealDocsReport['settings']>['nodeScore']>): string {
  if (n === 'dense') return 'node score: the dense cosine';
  // The benchmark's index is built fresh, so no tuned profile: the built-in encoder's weights.
  if (n === 'profile') return `node score: the encoder profile's${BUILTIN_PROFILE.nodeScore ? ` (the built-in one's: ${weightsText(BUILTIN_PROFILE.nodeScore)})` : ''}`;
  return `node score ${weightsText(n)}`;
}

function weightsText(n: { dense: number; lexical: number; model?: string | undefined }): string {
  return `dense ${n.dense} + lexical ${n.lexical}${n.model ? ` (${n.model})` : ''}`;
}

export function renderRealDocsMarkdown(r: RealDocsReport): string {
  const out: string[] = [];
  const m = r.machine;
  const la = (xs: number[] | undefined) => (xs ? xs.map((x) => x.toFixed(2)).join(' / ') : '—');
  out.push('## Real documents (issue 16)');
  out.push('');
  out.push(`**Command**: \`${r.command}\` (run ${r.createdAt.slice(0, 10)}). JSON report with per-question rows: \`--out\`; compare two runs with \`--compare before.json\`.`);
  out.push('');
  out.push(
    `**Machine**: ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}. Load average (1 / 5 / 15 min) at the start ${la(m.loadAverage.start)}, after indexing ${la(m.loadAverage.afterIndex)}, at the end ${la(m.loadAverage.end)}.`,
  );
  out.push('');
  if (r.questions.length > 0) renderMainSample(r, out);
  else out.push('**SQuAD and FinanceBench**: not asked in this run.');
  if (r.demo) {
    const d = r.demo;
    out.push('');
    out.push(
      d.error
        ? `**\`npm run demo\`**: failed — ${d.error}`
        : `**\`npm run demo\`** (its folder and question, through the CLI): ${d.rounds} round(s), ${d.items} items, ${num(d.evidenceTokens ?? Number.NaN)} kept tokens, stop \`${d.stop}\`, ${s1(d.ms / 1000)} s; ` +
            (d.partsAnswered ? `parts of the question answered: ${d.partsAnswered.filter(Boolean).length} of ${d.partsAnswered.length}.` : 'parts not checked (question unknown to the benchmark).'),
    );
  }
  if (r.notes.length > 0) {
    out.push('');
    for (const n of r.notes) out.push(`- ${n}`);
  }
  if (r.nq) out.push('', renderNqMarkdown(r.nq));
  if (r.docsFolder) out.push('', renderFolderMarkdown(r.docsFolder));
  return out.join('\n');
}

/** The main sample's corpus, summary table, PDF table and Markdown index time. */
function renderMainSample(r: RealDocsReport, out: string[]): void {
  const { all, squad, financebench } = r.summary;
  const pdfs = r.index.files.filter((f) => f.kind === 'pdf');
  const nodes = r.index.files.reduce((a, f) => a + f.nodes, 0);
  out.push(
    `**Corpus**: ${r.corpus.files} files, ${num(nodes)} nodes — ${r.corpus.pdfs} FinanceBench PDF${r.corpus.pdfs === 1 ? '' : 's'} (${pdfs.map((f) => `${f.pages ?? '?'} pages`).join(', ')}), ${r.corpus.squadArticles} SQuAD articles written as Markdown, ${r.corpus.docs} of Canopy's own docs. ` +
      `**Questions**: ${squad.questions} SQuAD + ${financebench.questions} FinanceBench (seed ${r.sampling.seed}). FinanceBench questions are grouped by PDF, the groups ordered by size (ties in seeded order) and the first ${r.sampling.financebenchQuestions} taken; the corpus holds every PDF they need. SQuAD: ${r.sampling.squadArticles} seeded articles, ${r.sampling.squadQuestions} seeded questions on them. Built-in encoder, no LLM, ${isDefaultCanopy(r.settings) ? 'default settings' : 'settings'} (${settingsText(r.settings)}).`,
  );
  out.push('');
  out.push(`| what | all (${all.questions}) | SQuAD (${squad.questions}) | FinanceBench (${financebench.questions}) |`);
  out.push('|---|---:|---:|---:|');
  for (const [label, f] of tableRows) out.push(`| ${label} | ${f(all)} | ${f(squad)} | ${f(financebench)} |`);
  out.push('');
  if (r.index.reused) out.push('**Indexing**: not measured in this run (the index of an earlier run was reused).');
  else {
    const s = r.index.summary;
    out.push(
      `**Indexing** (one \`canopy index\` process, cold embedding cache): ${s1(r.index.seconds ?? Number.NaN)} s${r.index.cpuSeconds !== undefined ? ` (${s1(r.index.cpuSeconds)} s CPU)` : ''} for ${s?.files ?? '?'} files (${num(s?.nodes ?? Number.NaN)} nodes, ${s?.errors.length ?? 0} errors). Per file: the time between its parsed document being written and the previous one's (parse + node vectors + write; the first file's time also holds the process start and the model load); parse alone from the document's own stats.`,
    );
  }
  out.push('');
  const byFile = new Map<string, RealDocsRow[]>();
  for (const q of r.questions) byFile.set(q.gold.file, [...(byFile.get(q.gold.file) ?? []), q]);
  out.push('| PDF | pages | nodes | index s (parse s) | questions | key fact | [1] on a gold page | gold page kept |');
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const f of pdfs) {
    const qs = (byFile.get(f.file) ?? []).map((q) => q.cli?.metrics ?? q.warm?.metrics).filter((x): x is AnswerMetrics => x !== undefined);
    const n = (byFile.get(f.file) ?? []).length;
    const c = (p: (x: AnswerMetrics) => boolean) => frac(qs.filter(p).length, qs.length);
    out.push(
      `| ${f.file.replace(/^financebench\//, '')} | ${f.pages ?? '?'} | ${num(f.nodes)} | ${f.seconds !== undefined ? s1(f.seconds) : '—'} (${f.parseSeconds !== undefined ? s1(f.parseSeconds) : '—'}) | ${n} | ${c((x) => x.answerHasGold)} | ${c((x) => x.cited1Gold)} | ${c((x) => x.goldInEvidence)} |`,
    );
  }
  const others = r.index.files.filter((f) => f.kind !== 'pdf' && f.seconds !== undefined);
  if (others.length > 0) {
    const sum = others.reduce((a, f) => a + f.seconds!, 0);
    out.push('');
    out.push(`The ${others.length} Markdown files took ${s1(sum)} s together (slowest ${s1(Math.max(...others.map((f) => f.seconds!)))} s).`);
  }
}

const pct = (n: number, of: number) => (of === 0 ? '—' : `${((100 * n) / of).toFixed(1)}%`);
const fracPct = (n: number | undefined, of: number) => (n === undefined ? '—' : `${num(n)}/${num(of)} (${pct(n, of)})`);

/** The rows of a separate sample's table (NQ, the documentation folder): quality, then time. */
function sampleRows(s: RealDocsSummary, answerTarget: string): Array<[string, string]> {
  return [
    [`answer string in the printed answer (target ${answerTarget})`, fracPct(s.answerHasGold, s.scored)],
    ['answer string in the kept evidence', fracPct(s.answerInEvidence, s.stringScored ?? s.scored)],
    ['kept (evidence) tokens per question, mean', num(s.meanEvidenceTokens)],
    ['gold passage / file in the kept evidence (after round 1)', `${fracPct(s.goldInEvidence, s.scored)} (${num(s.goldInEvidenceRound1)})`],
    ["an item of the gold's file retrieved (any round)", fracPct(s.goldFileRetrieved, s.stringScored ?? s.scored)],
    ['citation [1] / any citation on the gold passage / file', `${fracPct(s.cited1Gold, s.scored)} / ${fracPct(s.citedAnyGold, s.scored)}`],
    ['rounds, mean', num(s.meanRounds, 2)],
    ['stop reasons', stopsText(s)],
    ['items per question, mean', num(s.meanItems, 1)],
    ['critic "sufficient" vs gold already kept (every verdict)', criticText(s.critic)],
    ['`canopy ask` process (model load included), p50 / p95 / max', spreadText(s.cli)],
    ['`canopy ask` process CPU time (user + system)', spreadText(s.cliCpu)],
    ['warm in-process ask, p50 / p95 / max', spreadText(s.warm)],
    ['warm ask CPU time (user + system)', spreadText(s.warmCpu)],
    ['warm answer identical to the CLI answer', s.warmSameAsCli ? frac(s.warmSameAsCli.same, s.warmSameAsCli.of) : '—'],
    ['failed asks (CLI / warm)', `${s.failed.cli} / ${s.failed.warm}`],
  ];
}

function indexText(x: RealDocsSampleReport): string {
  if (x.index.reused) return 'the index of an earlier run was reused (no index time)';
  const s = x.index.summary;
  return `one \`canopy index\` process: ${s1(x.index.seconds ?? Number.NaN)} s${x.index.cpuSeconds !== undefined ? ` (${s1(x.index.cpuSeconds)} s CPU)` : ''} for ${num(s?.files ?? Number.NaN)} files, ${num(s?.nodes ?? Number.NaN)} nodes, ${s?.errors.length ?? 0} errors`;
}

/** Where the answers were lost (answerOutcome), one row per outcome. */
function outcomesTable(s: RealDocsSummary): string[] {
  const n = s.stringScored ?? 0;
  if (!s.outcomes || n === 0) return [];
  const out = ['| outcome | questions |', '|---|---:|'];
  for (const o of ANSWER_OUTCOMES) if (s.outcomes[o]) out.push(`| ${o} | ${fracPct(s.outcomes[o], n)} |`);
  return out;
}

/**
 * The NQ sample: its corpus and questions, the summary table (quality from the warm asks of every
 * question, the CLI's time on its seeded subset), BM25's top-k curve, the ask's evidence against
 * that curve at equal tokens, and where the answers were lost.
 */
export function renderNqMarkdown(x: RealDocsNqReport): string {
  const s = x.summary;
  const sampled = x.sampling.of !== undefined ? x.sampling.questions < x.sampling.of : x.sampling.asked !== undefined;
  const out: string[] = [];
  out.push('### NQ development half: every passage a file (issue 32)');
  out.push('');
  out.push(
    `**Corpus**: the ${num(x.corpus.files)} passages of \`${x.inputs.passages ?? '?'}\`, each one Markdown file (the title as a \`#\` heading, then the passage), in a corpus and index of their own (${indexText(x)}). ` +
      `**Questions**: ${num(x.sampling.questions)}${x.sampling.of !== undefined ? ` of the ${num(x.sampling.of)}` : ''} of \`${x.inputs.questions}\`${sampled ? ` (a seeded sample, seed ${x.sampling.seed})` : ' (all)'}, each asked as written (lower case, no question mark) over all the passages, warm in one in-process workspace; ${num(x.sampling.cliQuestions)} of them (seeded, seed ${x.sampling.seed}) also through a \`canopy ask\` process. The quality figures are the warm asks'; settings as above.`,
  );
  out.push('');
  out.push(`| what | NQ (${num(s.questions)}) |`);
  out.push('|---|---:|');
  for (const [label, v] of sampleRows(s, '≥ 80%')) out.push(`| ${label} | ${v} |`);
  out.push('');
  const b = x.bm25;
  const shown = b.curve.filter((p) => p.k <= BM25_TABLE_K);
  out.push(`**Flat BM25 over the same passages** (${b.scoring}; a passage holds the answer when an answer string is in its file's text, by the rule of the printed answer; tokens: cl100k_base of each passage's file): the share of questions whose top-k passages hold an answer string, and their tokens.`);
  out.push('');
  out.push(`| k | ${shown.map((p) => p.k).join(' | ')} |`);
  out.push(`|---|${shown.map(() => '---:').join('|')}|`);
  out.push(`| answer string in the top k | ${shown.map((p) => `${(100 * p.share).toFixed(1)}%`).join(' | ')} |`);
  out.push(`| tokens, mean | ${shown.map((p) => num(p.meanTokens)).join(' | ')} |`);
  out.push('');
  const e = b.atAskTokens;
  const at = e.bm25Share;
  const bracket = b.curve.find((p) => p.meanTokens >= e.askTokens);
  out.push(
    `**At equal tokens**: the ask's kept evidence holds an answer string for ${(100 * e.askShare).toFixed(1)}% of the ${num(e.questions)} questions at ${num(e.askTokens)} tokens on average; ` +
      (at === undefined
        ? `BM25's curve ends at k = ${b.depth} (${num(b.curve[b.curve.length - 1]?.meanTokens ?? Number.NaN)} tokens), below the ask's tokens: no reading at equal tokens.`
        : `BM25's curve at that many tokens (read between k = ${Math.max(0, (bracket?.k ?? 1) - 1)} and k = ${bracket?.k ?? '?'}) holds one for ${(100 * at).toFixed(1)}% — the ask is ${(100 * (e.askShare - at)).toFixed(1)} points ${e.askShare >= at ? 'at or above' : 'below'} the curve.`) +
      ` BM25's top passages that fit whole in each question's own evidence tokens hold one for ${(100 * e.bm25OwnTokensShare).toFixed(1)}%.`,
  );
  const outcomes = outcomesTable(s);
  if (outcomes.length > 0) out.push('', 'Where the answers were lost (warm asks; the first that applies):', '', ...outcomes);
  if (x.notes.length > 0) out.push('', ...x.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

/** The documentation folder: its corpus, the summary table and one row per question. */
export function renderFolderMarkdown(x: RealDocsFolderReport): string {
  const s = x.summary;
  const out: string[] = [];
  out.push('### A documentation folder (issue 32)');
  out.push('');
  out.push(
    `**Corpus**: \`${x.inputs.folder ?? '?'}\` copied as it is (${num(x.corpus.files)} files of the formats Canopy reads), in a corpus and index of its own (${indexText(x)}). ` +
      `**Questions**: the ${num(s.questions)} of \`${x.inputs.questions}\`, each through a \`canopy ask\` process and warm; answered = an answer string (any, normalised) in the printed answer, from the CLI asks. Settings as above.`,
  );
  out.push('');
  out.push(`| what | documentation folder (${num(s.questions)}) |`);
  out.push('|---|---:|');
  for (const [label, v] of sampleRows(s, '≥ 13 of 15')) out.push(`| ${label} | ${v} |`);
  out.push('');
  out.push('| # | question | answer strings (any) | file | answered | file cited | answer in evidence | outcome | printed answer |');
  out.push('|---:|---|---|---|:---:|:---:|:---:|---|---|');
  x.questions.forEach((q, i) => {
    const m = preferredMetrics(q);
    const mark = (b: boolean | undefined) => (b === undefined ? '—' : b ? '✓' : '✗');
    out.push(
      `| ${i + 1} | ${cell(q.question)} | ${q.answers.map((a) => `\`${cell(a)}\``).join(', ')} | ${cell(q.gold.file)} | ${mark(m?.answerHasGold)} | ${mark(m?.citedAnyGold)} | ${mark(m?.answerInEvidence)} | ${m ? (answerOutcome(m, q.goldHoldsAnswer) ?? '—') : `failed: ${cell(q.cli?.error ?? q.warm?.error ?? '?')}`} | ${m ? cell(m.answer.slice(0, 200)) : '—'} |`,
    );
  });
  const outcomes = outcomesTable(s);
  if (outcomes.length > 0) out.push('', 'Where the answers were lost (the first that applies):', '', ...outcomes);
  if (x.notes.length > 0) out.push('', ...x.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

const where = (c: { file: string; page?: number; pageEnd?: number; startLine?: number; endLine?: number }) =>
  c.page !== undefined ? `${c.file} p.${c.page + 1}${c.pageEnd !== undefined && c.pageEnd !== c.page ? `–${c.pageEnd + 1}` : ''}` : `${c.file}${c.startLine !== undefined ? `:${c.startLine}${c.endLine !== undefined && c.endLine !== c.startLine ? `–${c.endLine}` : ''}` : ''}`;
const cell = (t: string) => t.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/**
 * One row per question (the CLI run's outcome, else the warm run's; NQ: the warm run's): gold and
 * where it is, the printed answer, citation [1] (where, its region kind and text), rounds with the
 * critic's verdicts, and the flags — the material for reading the failures one by one. The main
 * sample first, then the documentation folder and NQ, each under its own header. Pages are
 * printed 1-based, as a person reads them.
 */
export function renderRealDocsQuestions(r: RealDocsReport): string {
  const out: string[] = [];
  const table = (rows: readonly RealDocsRow[], prefer: 'cli' | 'warm') => {
    out.push('| id | question | gold (where) | answer | [1] (kind: text) | rounds: critic verdicts | flags |', '|---|---|---|---|---|---|---|');
    for (const q of rows) out.push(questionRow(q, prefer));
  };
  if (r.questions.length > 0) table(r.questions, 'cli');
  if (r.docsFolder) {
    out.push(...(out.length > 0 ? [''] : []), 'Documentation folder:', '');
    table(r.docsFolder.questions, 'cli');
  }
  if (r.nq) {
    out.push(...(out.length > 0 ? [''] : []), 'NQ (warm asks; BM25: the rank of the first passage holding an answer string):', '');
    table(r.nq.questions, 'warm');
  }
  out.push('', 'Critic verdicts: round:S (sufficient) or I (insufficient), + when the gold was already in the evidence kept by that round, − when not.');
  return out.join('\n');
}

function questionRow(q: RealDocsRow, prefer: 'cli' | 'warm'): string {
  const m = prefer === 'cli' ? (q.cli?.metrics ?? q.warm?.metrics) : (q.warm?.metrics ?? q.cli?.metrics);
  const gold = q.gold.kind === 'pages' ? `${q.gold.file} p.${q.gold.pages.map((p) => p + 1).join(',')}` : q.gold.kind === 'file' ? q.gold.file : `${q.gold.file}:${q.gold.startLine}`;
  if (!m) return `| ${q.source} ${q.id} | ${cell(q.question)} | ${cell(q.answers[0] ?? '')} (${gold}) | — | — | — | failed: ${cell(q.cli?.error ?? q.warm?.error ?? '?')} |`;
  const c1 = m.citations.find((c) => c.marker === 1);
  const verdicts = (m.criticVerdicts ?? []).map((v) => `${v.round}:${v.sufficient ? 'S' : 'I'}${v.goldKept ? '+' : '−'}`).join(' ');
  const outcome = answerOutcome(m, q.goldHoldsAnswer);
  const flags = [
    m.answerHasGold ? 'answer ✓' : 'answer ✗',
    m.cited1Gold ? '[1] ✓' : m.citedAnyGold ? '[1] ✗ (other ✓)' : '[1] ✗',
    m.goldInEvidence ? `kept ✓${m.goldInEvidenceRound1 ? '' : ' (after r1)'}` : 'kept ✗',
    ...(m.readerTruncated ? ['cap'] : []),
    ...(outcome && outcome !== 'answered' ? [outcome] : []),
    ...(q.bm25 ? [`BM25 ${q.bm25.firstAnswerRank ?? '—'}`] : []),
  ].join(', ');
  return `| ${q.source} ${q.id} | ${cell(q.question)} | ${cell(q.answers[0] ?? '')} (${gold}) | ${cell(m.answer.slice(0, 220))} | ${c1 ? `${where(c1)} (${c1.kind ?? '?'}: ${cell(c1.text.slice(0, 100))})` : '—'} | ${m.rounds}, ${m.stop}: ${verdicts} | ${flags} |`;
}

/** Replaces (or inserts, before the first `## Encoder` heading, else at the end) the real-document section of BENCHMARKS.md. */
export function replaceRealDocsSection(doc: string, section: string): string {
  const block = `${REALDOCS_BEGIN}\n\n${section.trim()}\n\n${REALDOCS_END}`;
  const a = doc.indexOf('<!-- canopy-bench-realdocs:begin');
  const b = doc.indexOf(REALDOCS_END);
  if (a >= 0 && b > a) return `${doc.slice(0, a)}${block}${doc.slice(b + REALDOCS_END.length)}`;
  const at = doc.search(/^## Encoder/m);
  if (at >= 0) return `${doc.slice(0, at)}${block}\n\n${doc.slice(at)}`;
  return `${doc.trimEnd()}\n\n${block}\n`;
}

/**
 * Before → after of a separate sample's figures (appended to `out`), and its questions whose
 * answer flipped (all of them for the documentation folder; for NQ, the count each way and the
 * first ten).
 */
function compareSample(name: string, before: RealDocsSampleReport | undefined, after: RealDocsSampleReport | undefined, out: string[], prefer: 'cli' | 'warm'): string[] {
  if (!before || !after) return [];
  const b = sampleRows(before.summary, '');
  const a = sampleRows(after.summary, '');
  a.forEach(([label, y], i) => {
    const x = b[i]![1];
    out.push(`| ${name}: ${label.replace(/ \(target \)$/, '')} | ${x} | ${y}${x === y ? '' : ' ◀'} |`);
  });
  const bm = (r: RealDocsSampleReport) => ('bm25' in r ? (r as RealDocsNqReport).bm25.atAskTokens : undefined);
  const eb = bm(before);
  const ea = bm(after);
  if (eb && ea) {
    const t = (e: RealDocsNqReport['bm25']['atAskTokens']) => `${(100 * e.askShare).toFixed(1)}% at ${num(e.askTokens)} tokens vs BM25 ${e.bm25Share === undefined ? '—' : `${(100 * e.bm25Share).toFixed(1)}%`}`;
    out.push(`| ${name}: answer in evidence vs BM25 at equal tokens | ${t(eb)} | ${t(ea)} |`);
  }
  const prior = new Map(before.questions.map((q) => [q.id, q]));
  const flips: string[] = [];
  for (const q of after.questions) {
    const p = prior.get(q.id);
    const am = preferredMetrics(q, prefer);
    const bm = p ? preferredMetrics(p, prefer) : undefined;
    if (!am || !bm || am.answerHasGold === bm.answerHasGold) continue;
    flips.push(`- ${name} ${q.id} "${q.question.slice(0, 80)}": answer string ${bm.answerHasGold ? 'yes' : 'no'} → ${am.answerHasGold ? 'yes' : 'no'}`);
  }
  if (name === 'NQ' && flips.length > 10) {
    const gained = flips.filter((f) => f.endsWith('no → yes')).length;
    return [`- NQ: ${flips.length} answers flipped (${gained} gained, ${flips.length - gained} lost); the first ten:`, ...flips.slice(0, 10)];
  }
  return flips;
}

/** Before → after of every summary figure, the index and the demo, and the questions whose outcome changed. */
export function compareRealDocs(before: RealDocsReport, after: RealDocsReport): string {
  const out: string[] = ['| metric | before | after |', '|---|---:|---:|'];
  // A run without the main sample (NQ or the folder alone) has no main figures to compare.
  const mainSources = before.questions.length > 0 || after.questions.length > 0 ? (['all', 'squad', 'financebench'] as const) : [];
  for (const src of mainSources) {
    const b = before.summary[src];
    const a = after.summary[src];
    for (const [label, f] of tableRows) {
      const x = f(b);
      const y = f(a);
      out.push(`| ${src}: ${label} | ${x} | ${y}${x === y ? '' : ' ◀'} |`);
    }
  }
  const idx = (r: RealDocsReport) => (r.index.seconds !== undefined ? `${s1(r.index.seconds)} s` : '—');
  out.push(`| index: whole corpus (canopy index process) | ${idx(before)} | ${idx(after)} |`);
  const cpu = (r: RealDocsReport) => (r.index.cpuSeconds !== undefined ? `${s1(r.index.cpuSeconds)} s` : '—');
  out.push(`| index: its CPU time | ${cpu(before)} | ${cpu(after)} |`);
  const pdfTimes = new Map<string, [string, string]>();
  for (const f of before.index.files) if (f.kind === 'pdf') pdfTimes.set(f.file, [f.seconds !== undefined ? `${s1(f.seconds)} s` : '—', '—']);
  for (const f of after.index.files) if (f.kind === 'pdf') pdfTimes.set(f.file, [pdfTimes.get(f.file)?.[0] ?? '—', f.seconds !== undefined ? `${s1(f.seconds)} s` : '—']);
  for (const [file, [x, y]] of pdfTimes) out.push(`| index: ${file} | ${x} | ${y} |`);
  const demo = (r: RealDocsReport) => (r.demo ? (r.demo.error ? 'failed' : `${r.demo.rounds} rounds, ${r.demo.stop}, parts ${r.demo.partsAnswered ? `${r.demo.partsAnswered.filter(Boolean).length}/${r.demo.partsAnswered.length}` : '?'}`) : '—');
  out.push(`| demo | ${demo(before)} | ${demo(after)} |`);
  const flips: string[] = [];
  const prior = new Map(before.questions.map((q) => [q.id, q]));
  const keys: Array<[keyof AnswerMetrics, string]> = [
    ['answerHasGold', 'gold answer'],
    ['cited1Gold', '[1] on gold'],
    ['goldInEvidence', 'gold kept'],
  ];
  for (const q of after.questions) {
    const p = prior.get(q.id);
    const am = q.cli?.metrics ?? q.warm?.metrics;
    const bm = p?.cli?.metrics ?? p?.warm?.metrics;
    if (!am || !bm) continue;
    const changed = keys.filter(([k]) => am[k] !== bm[k]).map(([k, label]) => `${label} ${bm[k] ? 'yes' : 'no'} → ${am[k] ? 'yes' : 'no'}`);
    if (am.rounds !== bm.rounds) changed.push(`rounds ${bm.rounds} → ${am.rounds}`);
    if (changed.length > 0) flips.push(`- ${q.source} ${q.id} "${q.question.slice(0, 80)}": ${changed.join('; ')}`);
  }
  flips.push(...compareSample('NQ', before.nq, after.nq, out, 'warm'), ...compareSample('documentation folder', before.docsFolder, after.docsFolder, out, 'cli'));
  const missing = after.questions.filter((q) => !prior.has(q.id)).length;
  if (missing > 0) out.push('', `${missing} question(s) of the new run are not in the old one (another sample): compare runs made with the same data, seed and sizes.`);
  if (flips.length > 0) out.push('', 'Questions whose outcome changed:', ...flips);
  return out.join('\n');
}
