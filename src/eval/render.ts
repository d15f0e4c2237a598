/**
 * An evaluation report for people: Markdown tables (metrics with 95% intervals, the equal-token
 * comparison, all-gold recall by round) and the SVG figures written beside the docs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EvalReport } from './harness';
import { qualityTokenSvg, recallByRoundSvg } from './plots';
import { comparisonTable, formatInterval, markdownTable } from './report';
import { documentReport } from './financebenchReport';

const compressionKeys = ['goldRecall', 'paragraphRecall', 'answerBearing', 'tokens', 'tokenShare', 'wholeItems', 'refinement', 'em', 'f1'];

export function renderReport(report: EvalReport): string[] {
  const r = report.results;
  const s = report.settings;
  const out: string[] = [];
  out.push(`# canopy eval — ${report.dataset.schema}, ${report.mode === 'given' ? 'given items' : 'open pool'}`);
  out.push('');
  out.push(`File: ${report.dataset.file}`);
  out.push(`Questions: ${report.dataset.questions}${report.dataset.limit ? ` (--limit ${report.dataset.limit} of ${report.dataset.totalQuestions})` : ''}`);
  out.push(
    `Settings: k=${s.topK}, rounds=${s.rounds}, B=${s.branching}, critic=${s.critic}${s.lookAhead === undefined ? '' : s.lookAhead ? ' (look-ahead)' : ' (no look-ahead)'}${s.criticModel === undefined ? '' : s.criticModel === 'off' ? ', no critic model' : `, critic model ${s.criticModel}`}, retrieval=${s.retrieval}, encoder=${s.encoder}, tokens=${s.tokenizer}, reader=${s.reader}, peer chunk=${s.peerChunkSize}${s.adapter ? `, adapter=${s.adapter}` : ''}`,
  );
  out.push(`Intervals: paired bootstrap 95%, ${s.resamples} resamples, seed ${s.seed}.`);
  for (const n of report.dataset.notes) out.push(`Note: ${n}`);
  out.push('');
  out.push('## Evidence');
  out.push('');
  out.push(...markdownTable(r, report.document ? undefined : compressionKeys));
  if (report.document) out.push(...documentReport(report.document));
  const cmp = comparisonTable(r);
  if (cmp.length > 0) {
    out.push('');
    out.push('## Against flat top-m at equal tokens, and against no compression');
    out.push('');
    out.push(...cmp);
  }
  const retrievalKeys = r.metrics.map((m) => m.key).filter((k) => !compressionKeys.includes(k) && k !== 'regions');
  if (report.mode === 'pool' && retrievalKeys.length > 0) {
    out.push('');
    out.push('## Retrieval and rounds');
    out.push('');
    out.push(...markdownTable(r, retrievalKeys));
  }
  out.push('');
  out.push(`Time: ${report.timing.seconds.toFixed(0)} s${report.timing.indexSeconds !== undefined ? ` (pool index built in ${report.timing.indexSeconds.toFixed(0)} s)` : ''}; texts encoded (cache misses): ${report.timing.encodedTexts}.`);
  return out;
}

/** Writes the figures; returns their paths. */
export function writePlots(report: EvalReport, dir: string, prefix: string): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const r = report.results;
  const subtitle = `${report.dataset.schema}, ${report.mode === 'given' ? 'given items' : 'open pool'}, ${report.dataset.questions} questions; encoder ${report.settings.encoder.split('_')[0]}`;
  const hasGold = r.metrics.some((m) => m.key === 'goldRecall');
  const curve = r.curve.filter((p) => Number.isFinite(p.recall.value));
  if (curve.length > 0) {
    const file = join(dir, `${prefix}-quality-tokens.svg`);
    writeFileSync(
      file,
      qualityTokenSvg(curve, {
        title: `${hasGold ? 'Gold-evidence recall' : 'Gold-paragraph recall'} against evidence tokens`,
        subtitle,
        yLabel: hasGold ? 'gold-evidence recall' : 'gold-paragraph recall',
      }),
    );
    written.push(file);
  }
  const roundKeys = r.metrics.map((m) => m.key).filter((k) => /^allGoldEvidence\.r\d+$/.test(k));
  if (report.mode === 'pool' && roundKeys.length > 1) {
    const series = r.rows
      .filter((_row, i) => report.configs[i]!.rounds > 1)
      .map((row) => ({ config: row.config, values: roundKeys.map((k) => row.metrics[k]!).filter((v) => v !== undefined) }));
    // Reference: one round of twice as many items (what two rounds retrieve), from the first configuration's ranking.
    const k = report.settings.topK;
    const one = r.rows.find((_row, i) => report.configs[i]!.rounds === 1 && report.configs[i]!.compressor.name !== 'peer');
    const references = one && one.metrics[`allGold@${2 * k}`] ? [{ label: `one round of ${2 * k} items`, value: one.metrics[`allGold@${2 * k}`]! }] : [];
    const file = join(dir, `${prefix}-rounds.svg`);
    writeFileSync(file, recallByRoundSvg(series, { title: 'Every gold paragraph in the evidence, by critic round', subtitle, yLabel: 'questions with every gold paragraph in evidence', references }));
    written.push(file);
  }
  return written;
}

export { formatInterval };
