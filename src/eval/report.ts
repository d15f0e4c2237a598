/**
 * Turns per-question outcomes into the tables a person reads: every metric of design §12 per
 * configuration with a paired bootstrap 95% interval, plus the comparisons the issue asks for —
 * each configuration against flat top-m *at equal tokens* (the flat sweep interpolated, per
 * resample, at that configuration's token count) and against the uncompressed baseline.
 */
import { allGoldAtK, ieAtK, ndcgAtK, precisionAtK, recallAtK } from '../core/retrieve/metrics';
import { BootstrapPlan, percentiles, type Interval, type Ratio } from './bootstrap';
import { variantBase, type RunConfig } from './configs';
import type { EvalQuestion } from './datasets/types';
import type { Outcome } from './outcome';

export interface MetricSpec {
  key: string;
  label: string;
  /** Shown as a percentage. */
  percent: boolean;
  value(o: Outcome, q: EvalQuestion): Ratio | undefined;
}

const r = (num: number, den = 1): Ratio => ({ num, den });
const defined = (x: number): Ratio | undefined => (Number.isNaN(x) ? undefined : r(x));
const goldSet = (q: EvalQuestion) => new Set([...q.goldDocs.entries()].filter(([, g]) => g > 0).map(([d]) => d));

export const compressionMetrics: MetricSpec[] = [
  { key: 'goldRecall', label: 'gold-evidence recall', percent: true, value: (o) => (o.gold.total > 0 ? r(o.gold.kept, o.gold.total) : undefined) },
  { key: 'paragraphRecall', label: 'gold-paragraph recall', percent: true, value: (o) => (o.paragraphs.total > 0 ? r(o.paragraphs.kept, o.paragraphs.total) : undefined) },
  { key: 'answerBearing', label: 'answer-bearing recall', percent: true, value: (o) => (o.answerKept === undefined ? undefined : r(o.answerKept ? 1 : 0)) },
  { key: 'tokens', label: 'evidence tokens', percent: false, value: (o) => r(o.tokens) },
  { key: 'tokenShare', label: 'tokens kept vs none', percent: true, value: (o) => (o.tokensNone > 0 ? r(o.tokens, o.tokensNone) : undefined) },
  { key: 'regions', label: 'kept regions', percent: false, value: (o) => r(o.regions) },
  { key: 'wholeItems', label: 'items kept whole', percent: true, value: (o) => (o.items > 0 ? r(o.wholeItems, o.items) : undefined) },
  { key: 'refinement', label: 'refinement-decision accuracy', percent: true, value: (o) => (o.decisions && o.decisions.total > 0 ? r(o.decisions.agree, o.decisions.total) : undefined) },
  { key: 'em', label: 'EM', percent: true, value: (o) => (o.reader ? r(o.reader.em) : undefined) },
  { key: 'f1', label: 'F1', percent: true, value: (o) => (o.reader ? r(o.reader.f1) : undefined) },
];

export function retrievalMetrics(topK: number, maxRounds: number): MetricSpec[] {
  const ret = (f: (ranked: string[], gold: Set<string>) => number) => (o: Outcome, q: EvalQuestion) => (o.retrieval && q.goldDocs.size > 0 ? defined(f(o.retrieval.ranked, goldSet(q))) : undefined);
  const allGoldIn = (docs: string[], gold: Set<string>) => ([...gold].every((g) => docs.includes(g)) ? 1 : 0);
  const byRound = (round: number) => (o: Outcome, q: EvalQuestion) => {
    if (!o.retrieval || q.goldDocs.size === 0) return undefined;
    const e = o.retrieval.evidenceByRound;
    const docs = e[Math.min(round, e.length) - 1] ?? [];
    return r(allGoldIn(docs, goldSet(q)));
  };
  const specs: MetricSpec[] = [
    { key: `recall@${topK}`, label: `recall@${topK}`, percent: true, value: ret((x, g) => recallAtK(x, g, topK)) },
    { key: `allGold@${topK}`, label: `all-gold recall@${topK}`, percent: true, value: ret((x, g) => allGoldAtK(x, g, topK)) },
    { key: `allGold@${2 * topK}`, label: `all-gold recall@${2 * topK} (one round)`, percent: true, value: ret((x, g) => allGoldAtK(x, g, 2 * topK)) },
    { key: 'ndcg@10', label: 'nDCG@10', percent: false, value: ret((x, g) => ndcgAtK(x, new Map([...g].map((d) => [d, 1])), 10)) },
    { key: 'IE@1', label: 'IE@1', percent: false, value: ret((x, g) => ieAtK(x, g, 1)) },
    { key: 'IE@3', label: 'IE@3', percent: false, value: ret((x, g) => ieAtK(x, g, 3)) },
    { key: 'IE@5', label: 'IE@5', percent: false, value: ret((x, g) => ieAtK(x, g, 5)) },
    ...[1, 3, 5].flatMap((k): MetricSpec[] => [
      { key: `P@${k}`, label: `precision@${k}`, percent: false, value: ret((x, g) => precisionAtK(x, g, k)) },
      { key: `R@${k}`, label: `recall@${k} (gold share)`, percent: false, value: ret((x, g) => recallAtK(x, g, k)) },
    ]),
  ];
  for (let round = 1; round <= maxRounds; round++) {
    specs.push({ key: `allGoldEvidence.r${round}`, label: `all-gold in evidence after round ${round}`, percent: true, value: byRound(round) });
  }
  specs.push({
    key: 'allGoldEvidence.final',
    label: 'all-gold in evidence, final',
    percent: true,
    value: (o, q) => (o.retrieval && q.goldDocs.size > 0 ? r(allGoldIn(o.retrieval.evidenceByRound[o.retrieval.evidenceByRound.length - 1] ?? [], goldSet(q))) : undefined),
  });
  specs.push({ key: 'rounds', label: 'rounds used', percent: false, value: (o) => (o.retrieval ? r(o.retrieval.rounds) : undefined) });
  // The critic's "sufficient" against the truth "every gold document is already in the evidence",
  // over every round it judged: precision (of its stops) and recall (of the rounds it could have stopped).
  const verdicts = (o: Outcome, q: EvalQuestion) => {
    const said = o.retrieval?.sufficientByRound;
    if (!said || q.goldDocs.size === 0) return undefined;
    const gold = goldSet(q);
    return said.map((s, i) => ({ said: s, truth: allGoldIn(o.retrieval!.evidenceByRound[i] ?? [], gold) === 1 }));
  };
  specs.push({
    key: 'critic.precision',
    label: 'critic "sufficient": precision',
    percent: true,
    value: (o, q) => {
      const v = verdicts(o, q);
      return v ? r(v.filter((x) => x.said && x.truth).length, v.filter((x) => x.said).length) : undefined;
    },
  });
  specs.push({
    key: 'critic.recall',
    label: 'critic "sufficient": recall',
    percent: true,
    value: (o, q) => {
      const v = verdicts(o, q);
      return v ? r(v.filter((x) => x.said && x.truth).length, v.filter((x) => x.truth).length) : undefined;
    },
  });
  return specs;
}

/** graded nDCG@10 with the dataset's own relevance grades (SciFact qrels). */
export function gradedNdcgMetric(): MetricSpec {
  return { key: 'ndcg@10', label: 'nDCG@10', percent: false, value: (o, q) => (o.retrieval && q.goldDocs.size > 0 ? r(ndcgAtK(o.retrieval.ranked, q.goldDocs, 10)) : undefined) };
}

export interface ReportRow {
  config: string;
  metrics: Record<string, Interval>;
}

export interface Comparison {
  config: string;
  /** Flat top-m gold recall interpolated at this configuration's mean tokens, and the difference. */
  flatAtEqualTokens?: Interval;
  recallMinusFlat?: Interval;
  recallMinusNone?: Interval;
  tokensVsNone?: Interval;
  /** The peer: its recall minus that of the configuration whose budget it was given. */
  recallMinusBudgetSource?: Interval & { source: string };
  /** A measured node-vector variant minus the same configuration with the product's vectors (paired). */
  versusBase?: { base: string; recall: Interval; answerBearing?: Interval; tokens: Interval };
  note?: string;
}

export interface CurvePoint {
  config: string;
  family: string;
  m?: number;
  tokens: Interval;
  recall: Interval;
}

export interface Aggregated {
  rows: ReportRow[];
  metrics: Array<Pick<MetricSpec, 'key' | 'label' | 'percent'>>;
  comparisons: Comparison[];
  curve: CurvePoint[];
  questions: number;
}

/** Linear interpolation of y at x over points sorted by x; NaN outside their range. */
export function interpolate(points: Array<{ x: number; y: number }>, x: number): number {
  const p = points.filter((q) => Number.isFinite(q.x) && Number.isFinite(q.y)).sort((a, b) => a.x - b.x);
  if (p.length === 0 || x < p[0]!.x || x > p[p.length - 1]!.x) return Number.NaN;
  for (let i = 1; i < p.length; i++) {
    const a = p[i - 1]!;
    const b = p[i]!;
    if (x <= b.x) return b.x === a.x ? Math.max(a.y, b.y) : a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x);
  }
  return p[p.length - 1]!.y;
}

function intervalOf(xs: Float64Array | number[], value: number, n: number): Interval {
  const finite = [...xs].filter((x) => Number.isFinite(x));
  const [lo, hi] = percentiles(finite, 0.95);
  return { value, lo, hi, n };
}

export function aggregate(questions: EvalQuestion[], configs: RunConfig[], outcomes: Outcome[][], specs: MetricSpec[], plan: BootstrapPlan): Aggregated {
  const values = (c: number, spec: MetricSpec) => questions.map((q, qi) => {
    const o = outcomes[c]![qi];
    return o ? spec.value(o, q) : undefined;
  });
  const used = specs.filter((s) => configs.some((_, c) => values(c, s).some((v) => v !== undefined)));
  const rows: ReportRow[] = configs.map((cfg, c) => ({
    config: cfg.id,
    metrics: Object.fromEntries(used.map((s) => [s.key, plan.interval(values(c, s))])),
  }));

  // Equal-token comparisons against the flat top-m curve.
  const recallSpec = used.find((s) => s.key === 'goldRecall') ?? used.find((s) => s.key === 'paragraphRecall');
  const tokenSpec = specs.find((s) => s.key === 'tokens')!;
  const comparisons: Comparison[] = [];
  const curve: CurvePoint[] = [];
  const noneIdx = configs.findIndex((c) => c.compressor.name === 'none' && c.rounds === 1);
  if (recallSpec) {
    const flat = configs.map((c, i) => ({ c, i })).filter((x) => x.c.compressor.name === 'flat' && x.c.rounds === 1);
    const rep = (i: number, s: MetricSpec) => plan.replicates(values(i, s));
    const flatRep = flat.map((f) => ({ tokens: rep(f.i, tokenSpec), recall: rep(f.i, recallSpec) }));
    for (const { c, i } of configs.map((c, i) => ({ c, i }))) {
      curve.push({
        config: c.id,
        family: c.compressor.name,
        ...(c.compressor.name === 'flat' ? { m: c.compressor.m } : {}),
        tokens: rows[i]!.metrics[tokenSpec.key]!,
        recall: rows[i]!.metrics[recallSpec.key]!,
      });
      if (c.compressor.name === 'flat' || i === noneIdx) continue;
      const cmp: Comparison = { config: c.id };
      const myTokens = rows[i]!.metrics[tokenSpec.key]!.value;
      const myRecall = rows[i]!.metrics[recallSpec.key]!.value;
      if (flat.length >= 2) {
        const point = interpolate(
          flat.map((f) => ({ x: rows[f.i]!.metrics[tokenSpec.key]!.value, y: rows[f.i]!.metrics[recallSpec.key]!.value })),
          myTokens,
        );
        if (Number.isNaN(point)) cmp.note = 'its token count lies outside the flat top-m sweep';
        else {
          const myT = rep(i, tokenSpec);
          const myR = rep(i, recallSpec);
          const atFlat = new Float64Array(plan.resamples);
          const diff = new Float64Array(plan.resamples);
          for (let b = 0; b < plan.resamples; b++) {
            const y = interpolate(
              flatRep.map((f) => ({ x: f.tokens[b]!, y: f.recall[b]! })),
              myT[b]!,
            );
            atFlat[b] = y;
            diff[b] = myR[b]! - y;
          }
          const n = rows[i]!.metrics[recallSpec.key]!.n;
          cmp.flatAtEqualTokens = intervalOf(atFlat, point, n);
          cmp.recallMinusFlat = intervalOf(diff, myRecall - point, n);
        }
      }
      if (noneIdx >= 0 && noneIdx !== i) {
        cmp.recallMinusNone = plan.differenceInterval(values(i, recallSpec), values(noneIdx, recallSpec));
        const mine = values(i, tokenSpec);
        const none = values(noneIdx, tokenSpec);
        // Tokens kept relative to the uncompressed baseline on the same questions.
        const ratioValues = questions.map((_, qi) => (mine[qi] && none[qi] && none[qi]!.num > 0 ? { num: mine[qi]!.num, den: none[qi]!.num } : undefined));
        cmp.tokensVsNone = plan.interval(ratioValues);
      }
      const baseId = variantBase(c);
      const baseIdx = baseId === undefined ? -1 : configs.findIndex((x) => x.id === baseId);
      if (baseIdx >= 0) {
        const answerSpec = used.find((s) => s.key === 'answerBearing');
        const answer = answerSpec ? plan.differenceInterval(values(i, answerSpec), values(baseIdx, answerSpec)) : undefined;
        cmp.versusBase = {
          base: configs[baseIdx]!.id,
          recall: plan.differenceInterval(values(i, recallSpec), values(baseIdx, recallSpec)),
          ...(answer && !Number.isNaN(answer.value) ? { answerBearing: answer } : {}),
          tokens: plan.differenceInterval(values(i, tokenSpec), values(baseIdx, tokenSpec)),
        };
      }
      if (c.compressor.name === 'peer') {
        const src = configs.findIndex((x) => x.id === (c.compressor as { budgetFrom: string }).budgetFrom);
        if (src >= 0) cmp.recallMinusBudgetSource = { ...plan.differenceInterval(values(i, recallSpec), values(src, recallSpec)), source: configs[src]!.id };
      }
      comparisons.push(cmp);
    }
  }
  return { rows, metrics: used.map(({ key, label, percent }) => ({ key, label, percent })), comparisons, curve, questions: questions.length };
}

// ---------- text rendering ----------

/** Decimals per metric: tokens are whole numbers, counts one decimal, scores three. */
export function digitsFor(key: string, percent: boolean): number {
  if (percent) return 1;
  if (key === 'tokens' || key === 'readerTokens') return 0;
  if (key === 'regions' || key === 'rounds') return 1;
  return 3;
}

export function formatInterval(i: Interval | undefined, percent: boolean, digits?: number): string {
  if (!i || Number.isNaN(i.value)) return '—';
  const d = digits ?? (percent ? 1 : 3);
  const f = (x: number) => (percent ? (100 * x).toFixed(d) : x.toFixed(d));
  if (Number.isNaN(i.lo)) return `${f(i.value)}${percent ? '%' : ''}`;
  return `${f(i.value)}${percent ? '%' : ''} [${f(i.lo)}, ${f(i.hi)}]`;
}

export function markdownTable(agg: Aggregated, keys?: string[]): string[] {
  const metrics = agg.metrics.filter((m) => !keys || keys.includes(m.key));
  const lines = [`| configuration | ${metrics.map((m) => m.label).join(' | ')} |`, `|---|${metrics.map(() => '---:').join('|')}|`];
  for (const row of agg.rows) lines.push(`| ${row.config} | ${metrics.map((m) => formatInterval(row.metrics[m.key], m.percent, digitsFor(m.key, m.percent))).join(' | ')} |`);
  return lines;
}

export function comparisonTable(agg: Aggregated): string[] {
  if (agg.comparisons.length === 0) return [];
  const lines = [
    '| configuration | flat top-m recall at its tokens | its recall − flat | its recall − none | tokens vs none |',
    '|---|---:|---:|---:|---:|',
  ];
  let measured = 0;
  for (const c of agg.comparisons) {
    const cells = [c.flatAtEqualTokens ? formatInterval(c.flatAtEqualTokens, true) : (c.note ?? '—'), formatInterval(c.recallMinusFlat, true), formatInterval(c.recallMinusNone, true), formatInterval(c.tokensVsNone, true)];
    // A configuration measured against neither flat top-m nor no compression has no row of its own (a row of dashes says nothing).
    if (cells.every((cell) => cell === '—')) continue;
    measured++;
    lines.push(`| ${c.config} | ${cells.join(' | ')} |`);
  }
  if (measured === 0) lines.splice(0, lines.length, 'Not measured in this run: --sweep measures the flat top-m curve and the uncompressed evidence these compare with.');
  for (const c of agg.comparisons) {
    if (!c.recallMinusBudgetSource) continue;
    const d = c.recallMinusBudgetSource;
    lines.push('', `${c.config} − ${d.source}, at the same token budget: ${formatInterval(d, true)} gold recall (paired).`);
  }
  for (const c of agg.comparisons) {
    const v = c.versusBase;
    if (!v) continue;
    const answer = v.answerBearing ? `, ${formatInterval(v.answerBearing, true)} answer-bearing recall` : '';
    lines.push('', `${c.config} − ${v.base} (paired): ${formatInterval(v.recall, true)} gold recall${answer}, ${formatInterval(v.tokens, false, 0)} evidence tokens.`);
  }
  return lines;
}
