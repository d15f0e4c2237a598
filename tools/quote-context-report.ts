/**
 * What the quoted table rows of saved answers show beside the row (issue 33, finding 1): for every
 * citation of a table row, whether its quote shows a label (the table's caption or section), the
 * column headers, the units and the grouping label rows — exactly what the extractive answer
 * prints before the row (read/quoteContext.ts over the cited region, rebuilt from the trace's
 * scored tree). Traces written before quote context existed hold no context fields, so their rows
 * show only the header (what their answers printed).
 *
 *   npx tsx tools/quote-context-report.ts <traces dir>… [--files <prefix>] [--first] [--json]
 *
 * --files keeps citations of files starting with the prefix (e.g. financebench/); --first counts
 * only citation [1] of each answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { AskTrace, TraceNode } from '../src/contracts/trace';
import { regionFromTrace } from '../src/core/engine/recorded';
import { contextParts } from '../src/core/read/quoteContext';
import type { RegionNode } from '../src/contracts/region';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const value = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const prefix = value('--files') ?? '';
const dirs = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--files');
if (dirs.length === 0) {
  console.error('usage: quote-context-report <traces dir>… [--files <prefix>] [--first] [--json]');
  process.exit(2);
}

function readTrace(file: string): AskTrace {
  const bytes = readFileSync(file);
  return JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8')) as AskTrace;
}

/** The cited node, rebuilt from the round's scored tree with the context it inherits. */
function citedNode(trace: AskTrace, itemId: string, nodeId: string): RegionNode | undefined {
  for (const round of trace.rounds) {
    for (const it of round.retrieved) {
      if (!it.tree) continue;
      const region = regionFromTrace(it.tree as TraceNode);
      const find = (n: RegionNode): RegionNode | undefined => (n.id === nodeId ? n : n.children.map(find).find((x) => x));
      const hit = find(region);
      if (hit) return hit;
    }
  }
  void itemId;
  return undefined;
}

for (const dir of dirs) {
  const names = readdirSync(dir).filter((n) => /\.json(\.gz)?$/.test(n) && !n.startsWith('.'));
  const rows = { cited: 0, label: 0, header: 0, units: 0, groups: 0, labelAndHeader: 0 };
  for (const name of names) {
    const trace = readTrace(join(dir, name));
    const citations = trace.answer.citations.filter((c) => c.file.startsWith(prefix));
    for (const c of flag('--first') ? citations.slice(0, 1) : citations) {
      const node = citedNode(trace, c.itemId, c.nodeId);
      if (!node || node.kind !== 'row') continue;
      const p = contextParts(node);
      rows.cited++;
      if (p.label) rows.label++;
      if (p.header) rows.header++;
      // Units the table states are in the quote: appended, or already in its label or header (not repeated).
      if (p.units || node.units) rows.units++;
      if (p.groups) rows.groups++;
      if (p.label && p.header) rows.labelAndHeader++;
    }
  }
  if (flag('--json')) console.log(JSON.stringify({ dir, traces: names.length, rows }));
  else {
    const pct = (n: number) => `${n}/${rows.cited} (${rows.cited ? Math.round((100 * n) / rows.cited) : 0}%)`;
    console.log(`${dir}: ${names.length} traces, ${rows.cited} cited table rows${prefix ? ` of ${prefix}*` : ''}`);
    console.log(`  label (caption or section) ${pct(rows.label)}; headers ${pct(rows.header)}; both ${pct(rows.labelAndHeader)}; units ${pct(rows.units)}; grouping label rows ${pct(rows.groups)}`);
  }
}
