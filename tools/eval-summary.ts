/**
 * One headline table across several `canopy eval --sweep --out report.json` runs in given-items
 * mode — how docs/evaluation.md's summary was made:
 *
 *   node --import tsx tools/eval-summary.ts a.json b.json … [--config "canopy B=2"]
 *
 * Per report: the dataset and its gold unit, no compression's tokens, the chosen CANOPY
 * configuration's gold recall and token share, flat top-m read at the same tokens, the paired
 * difference, and the vectra peer at the same budget (paired difference to CANOPY).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { EvalReport } from '../src/eval/harness';
import { formatInterval } from '../src/eval/report';
import type { Interval } from '../src/eval/bootstrap';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { config: { type: 'string' } } });
const wanted = values.config ?? 'canopy B=2';

const fix = (i: Interval | undefined): Interval | undefined =>
  i && { ...i, value: i.value ?? Number.NaN, lo: i.lo ?? Number.NaN, hi: i.hi ?? Number.NaN };

console.log('| dataset (gold unit) | questions | tokens, none | CANOPY gold recall | CANOPY answer-bearing recall | CANOPY tokens vs none | flat top-m at CANOPY’s tokens | CANOPY − flat | peer gold recall (same budget) | peer − CANOPY |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const file of positionals) {
  const r = JSON.parse(readFileSync(file, 'utf8')) as EvalReport;
  const rows = r.results.rows;
  const recallKey = r.results.metrics.find((m) => m.key === 'goldRecall') ? 'goldRecall' : 'paragraphRecall';
  const unit = recallKey === 'goldRecall' ? 'gold units' : 'gold paragraphs';
  const none = rows.find((x) => x.config === 'none');
  const mine = rows.find((x) => x.config === wanted);
  const peer = rows.find((x) => x.config === 'peer');
  const cmp = r.results.comparisons.find((c) => c.config === wanted);
  const peerCmp = r.results.comparisons.find((c) => c.config === 'peer');
  const n = mine?.metrics[recallKey]?.n ?? r.dataset.questions;
  console.log(
    `| ${r.dataset.schema} (${unit}) | ${n} | ${formatInterval(fix(none?.metrics.tokens), false, 0)} | ${formatInterval(fix(mine?.metrics[recallKey]), true)} | ${formatInterval(fix(mine?.metrics.answerBearing), true)} | ${formatInterval(fix(mine?.metrics.tokenShare), true)} | ${formatInterval(fix(cmp?.flatAtEqualTokens), true)} | ${formatInterval(fix(cmp?.recallMinusFlat), true)} | ${formatInterval(fix(peer?.metrics[recallKey]), true)} | ${formatInterval(fix(peerCmp?.recallMinusBudgetSource), true)} |`,
  );
}
