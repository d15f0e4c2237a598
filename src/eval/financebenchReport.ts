/**
 * The FinanceBench part of the `canopy eval` report: the MAGE controller against page top-k and
 * CANOPY (paired differences), and MAGE-RAG's trace analysis — per question the actions taken,
 * nodes opened and pruned and the stop reason, and their means for correct vs incorrect runs.
 */
import type { DocumentComparison } from './financebench';
import { formatInterval } from './report';

const signed = (x: string) => (x.startsWith('-') || x === '—' ? x : `+${x}`);

export function documentReport(d: DocumentComparison): string[] {
  const out: string[] = [];
  if (d.versus.length > 0) {
    out.push('', '## The controller against page top-k and CANOPY (paired, same questions)', '');
    out.push('| controller − | evidence-page recall | evidence tokens | reader input tokens |', '|---|---:|---:|---:|');
    for (const v of d.versus) {
      out.push(`| ${v.against} | ${signed(formatInterval(v.recallDiff, true))} | ${signed(formatInterval(v.tokensDiff, false, 0))} | ${signed(formatInterval(v.readerTokensDiff, false, 0))} |`);
    }
  }
  const budgets = d.budgets ? Object.entries(d.budgets).map(([k, v]) => `${k} ${v}`).join(', ') : 'defaults';
  out.push('', '## Controller traces', '');
  out.push(`Budgets: ${budgets}. Reader XML of the subgraph (tags, summaries, boxes): ${d.controllerXmlTokens.toFixed(0)} tokens mean. ${d.correctDefinition[0]!.toUpperCase()}${d.correctDefinition.slice(1)}.`);
  out.push('');
  out.push('| runs | n | valid actions | opened | pruned | pages activated | iterations | searches | invalid | stop reasons |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const [name, g] of Object.entries(d.controllerStats)) {
    const stops = Object.entries(g.stopReasons)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    const m = g.mean;
    out.push(`| ${name} | ${g.runs} | ${m.actions.toFixed(1)} | ${m.opened.toFixed(1)} | ${m.pruned.toFixed(1)} | ${m.activatedPages.toFixed(1)} | ${m.iterations.toFixed(1)} | ${m.searches.toFixed(1)} | ${m.invalidActions.toFixed(1)} | ${stops || '—'} |`);
  }
  out.push('', '| question | evidence pages | controller pages | correct | actions | opened | pruned | stop | tokens |', '|---|---|---|---|---:|---:|---:|---|---:|');
  const pages = (ps: number[]) => (ps.length ? ps.map((p) => p + 1).join(', ') : '—');
  for (const q of d.perQuestion) {
    out.push(`| ${q.id} | ${pages(q.evidencePages)} | ${pages(q.controllerPages)} | ${q.correct ? 'yes' : 'no'} | ${q.actions} | ${q.opened} | ${q.pruned} | ${q.stop} | ${q.evidenceTokens} |`);
  }
  out.push('', 'Pages are 1-based here (FinanceBench\'s `evidence_page_num` + 1).');
  return out;
}
