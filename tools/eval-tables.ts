/**
 * Prints Markdown tables from a saved `canopy eval --out report.json`, with the columns asked
 * for — how docs/evaluation.md's tables were made from the runs' JSON reports:
 *
 *   node --import tsx tools/eval-tables.ts report.json [--metrics goldRecall,tokens,...] [--rows canopy,flat:10]
 *                                                   [--compare] [--plots <dir> --prefix <name>]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { EvalReport } from '../src/eval/harness';
import { writePlots } from '../src/eval/render';
import { comparisonTable, markdownTable } from '../src/eval/report';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { metrics: { type: 'string' }, rows: { type: 'string' }, compare: { type: 'boolean' }, plots: { type: 'string' }, prefix: { type: 'string' } },
});
const report = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as EvalReport;
const rows = values.rows?.split(',');
const results = { ...report.results, rows: report.results.rows.filter((r) => !rows || rows.some((p) => r.config === p || r.config.startsWith(`${p} `))) };
const keys = values.metrics?.split(',');
const nanSafe = (agg: typeof results) => ({
  ...agg,
  // JSON turned NaN into null.
  rows: agg.rows.map((r) => ({ config: r.config, metrics: Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, { value: v.value ?? Number.NaN, lo: v.lo ?? Number.NaN, hi: v.hi ?? Number.NaN, n: v.n }])) })),
});
console.log(markdownTable(nanSafe(results), keys).join('\n'));
if (values.compare) {
  console.log('');
  console.log(comparisonTable({ ...results, comparisons: results.comparisons.filter((c) => !rows || rows.some((p) => c.config === p || c.config.startsWith(`${p} `))) }).join('\n'));
}
if (values.plots) for (const f of writePlots(report, values.plots, values.prefix ?? `eval-${report.dataset.schema}-${report.mode}`)) console.error(`wrote ${f}`);
