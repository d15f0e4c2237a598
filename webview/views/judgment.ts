/**
 * A learned model's judgment (`TraceJudgment`: the learned reader's on a citation, the learned
 * critic's on a round) as the inspector shows it: the probability against the threshold it was
 * compared with, and the features that moved it most as a small bar list — each bar the feature's
 * contribution to the logit (weight × value), to the right when it raised the probability and to the
 * left when it lowered it. Read from the trace, never re-derived.
 */
import type { TraceJudgment } from '../../src/contracts/trace';
import { el, fmtDelta, fmtScore, unit } from '../dom';

/** Features shown at most (the trace holds them largest magnitude first). */
export const TOP_CONTRIBUTIONS = 6;

/** "0.83 ≥ 0.70 (stops)" or "0.41 < 0.70"; without a threshold just the probability. */
export function probabilityLine(j: TraceJudgment): string {
  const p = fmtScore(j.probability, 2);
  if (j.threshold === undefined) return `probability ${p}`;
  return `probability ${p} ${j.probability >= j.threshold ? '≥' : '<'} threshold ${fmtScore(j.threshold, 2)}`;
}

/**
 * The judgment block. `title` names it ("Learned critic", "Why this quote"); `meaning` says what
 * the probability is a probability of.
 */
export function renderJudgment(j: TraceJudgment, title: string, meaning: string): HTMLElement {
  const top = [...j.contributions].sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution)).slice(0, TOP_CONTRIBUTIONS);
  const scale = Math.max(1e-9, ...top.map((c) => Math.abs(c.contribution)));
  const list = el('ul', { class: 'canopy-contributions', 'aria-label': `${title}: feature contributions` });
  for (const c of top) {
    const bar = el('span', { class: `canopy-contribution-bar ${c.contribution >= 0 ? 'up' : 'down'}`, 'aria-hidden': 'true' });
    bar.style.width = `${(50 * unit(Math.abs(c.contribution) / scale)).toFixed(1)}%`;
    list.append(
      el(
        'li',
        { class: 'canopy-contribution', 'data-feature': c.feature },
        el('span', { class: 'canopy-contribution-name' }, c.feature),
        el('span', { class: 'canopy-contribution-track' }, bar),
        el('span', { class: 'canopy-contribution-value' }, `${fmtDelta(c.contribution, 2)} (value ${fmtScore(c.value, 2)})`),
      ),
    );
  }
  const rest = j.contributions.length - top.length;
  return el(
    'div',
    { class: 'canopy-judgment', role: 'group', 'aria-label': title },
    el('p', { class: 'canopy-judgment-head' }, el('strong', {}, `${title}: `), `${probabilityLine(j)} — ${meaning}`, el('span', { class: 'canopy-muted' }, ` (model ${j.model}${j.bias !== undefined ? `, bias ${fmtDelta(j.bias, 2)}` : ''})`)),
    list,
    rest > 0 ? el('p', { class: 'canopy-muted' }, `… and ${rest} more feature(s) with smaller contributions`) : null,
  );
}
