/**
 * The critic card of one round in the Rounds view: what the critic measured against what
 * threshold (for the rule critic: coverage per question part against `minCoverage`, the answer cue,
 * the best kept sentence, the bridge it looked for), what its look-ahead or follow-up found, the
 * learned critic's probability and feature contributions when the trace has them, and one plain
 * sentence on why the rounds stopped or went on — each linked to the regions it names.
 * Everything is read from `rounds[].critic` (`details` as src/core/critic/ruleCritic.ts writes
 * it, `judgment`) and the trace's `stop`; nothing is re-derived.
 */
import type { AskTrace, CriticPartDetail as PartDetail, StopReason, TraceRound } from '../../src/contracts/trace';
import type { InspectorContext } from '../context';
import { regionHolding } from '../decision';
import { button, clip, el, fmtScore, unit } from '../dom';
import type { TraceModel } from '../model';
import { renderJudgment } from './judgment';

/** What the rule critic writes into `details` (every field optional: older traces and other critics lack them). */
export interface RuleDetails {
  parts: PartDetail[];
  minCoverage?: number;
  bridges: string[];
  missingEntities: string[];
  namedAbsent: string[];
  hopGap?: { nestedReference?: string; firstHop?: string; bridges: string[] };
  answerBridge?: { entity: string; item?: string; query?: string };
  probe?: { query: string; items: number; worth: boolean; reason: string };
  noNewQuery?: string;
  nestedReference?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The rule critic's details, read defensively (`details` is free-form in the schema); undefined when it holds none of them. */
export function readRuleDetails(details: Record<string, unknown> | undefined): RuleDetails | undefined {
  if (!details) return undefined;
  const parts: PartDetail[] = [];
  for (const p of Array.isArray(details.parts) ? details.parts : []) {
    if (!isObj(p) || typeof p.part !== 'string') continue;
    parts.push({
      part: p.part,
      answerType: str(p.answerType) ?? 'other',
      coverage: num(p.coverage) ?? 0,
      ...(str(p.cue) !== undefined ? { cue: str(p.cue)! } : {}),
      answered: p.answered === true,
      ...(str(p.best) !== undefined ? { best: str(p.best)! } : {}),
      missingTerms: strs(p.missingTerms),
    });
  }
  const out: RuleDetails = { parts, bridges: strs(details.bridges), missingEntities: strs(details.missingEntities), namedAbsent: strs(details.namedAbsent) };
  const min = num(details.minCoverage);
  if (min !== undefined) out.minCoverage = min;
  if (isObj(details.hopGap)) {
    const h = details.hopGap;
    out.hopGap = { bridges: strs(h.bridges), ...(str(h.nestedReference) ? { nestedReference: str(h.nestedReference)! } : {}), ...(str(h.firstHop) ? { firstHop: str(h.firstHop)! } : {}) };
  }
  if (isObj(details.answerBridge) && typeof details.answerBridge.entity === 'string') {
    const b = details.answerBridge;
    out.answerBridge = { entity: b.entity as string, ...(str(b.item) ? { item: str(b.item)! } : {}), ...(str(b.query) ? { query: str(b.query)! } : {}) };
  }
  if (isObj(details.probe) && typeof details.probe.query === 'string') {
    const p = details.probe;
    out.probe = { query: p.query as string, items: num(p.items) ?? 0, worth: p.worth === true, reason: str(p.reason) ?? '' };
  }
  if (str(details.noNewQuery)) out.noNewQuery = str(details.noNewQuery)!;
  if (str(details.nestedReference)) out.nestedReference = str(details.nestedReference)!;
  const any = parts.length > 0 || out.minCoverage !== undefined || out.bridges.length > 0 || out.probe || out.hopGap || out.answerBridge || out.noNewQuery;
  return any ? out : undefined;
}

/** Why the rounds ended, in words (the trace's `stop.reason`). */
export const stopReasonText: Record<StopReason, string> = {
  'critic-sufficient': 'the critic judged the kept evidence sufficient',
  'round-limit': 'the round limit was reached',
  'no-new-items': 'the follow-up query brought no item that was not already in the evidence',
  'token-cap': 'the evidence reached the reader’s token cap',
  cancelled: 'the question was cancelled',
  'replay-diverged':
    'the replay diverged: its critic asked for a query the original answer never ran, and a replay only reuses the recorded retrievals (it never searches anew), so it stopped there — ask the question again with these settings to run that search',
  'no-follow-up': 'the critic found gaps but had no new query worth running',
};

const q = (s: string) => `“${s}”`;
const cov = (v: number) => fmtScore(v, 2);
const signed = (v: number) => (v > 0 ? `+${v.toFixed(2)}` : v < 0 ? `−${Math.abs(v).toFixed(2)}` : '0.00');

/** The coverage the rule critic needs (the trace's `minCoverage`, else the critic's default). */
export function threshold(d: RuleDetails): number {
  return d.minCoverage ?? 0.6;
}

/** What is missing, in words: the unanswered parts with their coverage against the threshold, and the named gaps. */
function gapText(d: RuleDetails, missing: readonly string[]): string {
  const min = threshold(d);
  const out: string[] = [];
  for (const p of d.parts.filter((x) => !x.answered)) {
    const typed = p.answerType !== 'other' && p.answerType !== 'yesno';
    if (p.coverage >= min && typed && !p.cue) out.push(`${q(p.part)} is covered ${cov(p.coverage)} (≥ ${cov(min)}) but its best sentence holds no ${p.answerType}`);
    else out.push(`${q(p.part)} is covered only ${cov(p.coverage)} of the ${cov(min)} needed`);
  }
  if (d.hopGap && d.hopGap.bridges.length > 0) out.push(`the question asks through ${q(d.hopGap.nestedReference ?? d.hopGap.firstHop ?? 'another thing')}, and its bridge ${d.hopGap.bridges.join(', ')} has no item in the evidence yet`);
  if (d.answerBridge) out.push(`the answer names ${d.answerBridge.entity}${d.answerBridge.item ? `, whose own item ${q(d.answerBridge.item)} is not in the evidence yet` : ''}`);
  const named = [...new Set([...d.missingEntities, ...d.namedAbsent])];
  if (named.length > 0) out.push(`${named.join(', ')} ${named.length === 1 ? 'is' : 'are'} named in the question but not found in the evidence`);
  if (out.length === 0 && missing.length > 0) out.push(`missing: ${missing.join(', ')}`);
  return out.length > 0 ? out.join('; ') : 'the critic found a gap';
}

/** The look-ahead's finding in words; a "−0.11 coverage" reason is glossed. */
function probeText(p: NonNullable<RuleDetails['probe']>): string {
  const at = /at most ([−+-]?\d+(?:\.\d+)?) coverage over the kept evidence/.exec(p.reason);
  if (at) {
    const v = Number(at[1]!.replace('−', '-'));
    const gloss =
      v <= 0
        ? `its best new sentence covers a missing part ${Math.abs(v).toFixed(2)} less than the best kept sentence already does`
        : `its best new sentence covers a missing part only ${v.toFixed(2)} better than the kept evidence, too little to be worth a round`;
    return `the look-ahead searched ${q(p.query)} and found ${p.items} new item(s), but ${gloss} (${signed(v)} coverage)`;
  }
  return `the look-ahead searched ${q(p.query)}: ${p.reason}`;
}

/** One plain sentence on why the rounds stopped after this round or asked again. */
export function criticSentence(trace: AskTrace, r: TraceRound): string {
  const c = r.critic;
  if (!c) return 'No critic judged this round.';
  const last = r.round >= trace.rounds.length;
  const d = readRuleDetails(c.details);
  const judged = c.judgment
    ? ` The learned critic's probability that the evidence holds the answer is ${fmtScore(c.judgment.probability, 2)}${c.judgment.threshold !== undefined ? ` (it stops at ${fmtScore(c.judgment.threshold, 2)} or more)` : ''}.`
    : '';
  if (c.sufficient) {
    if (d && d.parts.length > 0) {
      const lowest = [...d.parts].sort((a, b) => a.coverage - b.coverage)[0]!;
      const typed = d.parts.some((p) => p.cue);
      return `Stopped: every part of the question has a kept sentence covering at least ${cov(threshold(d))} of its words${typed ? ' and holding the kind of answer it asks for' : ''} (the lowest, ${q(lowest.part)}, ${cov(lowest.coverage)}).${judged}`;
    }
    return `Stopped: the ${c.source} critic judged the kept evidence sufficient.${judged}`;
  }
  const gap = d ? gapText(d, c.missing) : c.missing.length > 0 ? `missing: ${c.missing.join(', ')}` : 'the critic found a gap';
  if (!last && c.followUpQuery) {
    const why = d?.probe?.worth ? `, because the look-ahead found ${d.probe.reason}` : d?.nestedReference ? ' (a question that asks through another thing runs its next hop without looking ahead)' : '';
    return `Asked again: ${gap}; the follow-up searches ${q(c.followUpQuery)}${why}.${judged}`;
  }
  if (!last) return `Went on: ${gap}.${judged}`;
  const reason = trace.stop.reason;
  switch (reason) {
    case 'round-limit':
      return `Stopped at the round limit (${trace.settings.maxRounds}): ${gap}${c.followUpQuery ? `, and the critic would have searched ${q(c.followUpQuery)}` : ''}.${judged}`;
    case 'no-follow-up':
      if (d?.probe && !d.probe.worth) return `Stopped without a follow-up: ${gap}; ${probeText(d.probe)}.${judged}`;
      return `Stopped without a follow-up: ${gap}${d?.noNewQuery ? `, but ${d.noNewQuery}` : ''}.${judged}`;
    case 'no-new-items':
      return `Stopped: ${gap}; the follow-up ${c.followUpQuery ? q(c.followUpQuery) : 'query'} brought no item that was not already in the evidence.${judged}`;
    case 'replay-diverged':
      return `The replay stopped: ${gap}, and ${stopReasonText[reason]}.${judged}`;
    default:
      return `Stopped (${reason}): ${stopReasonText[reason]}; ${gap}.${judged}`;
  }
}

/** A button that selects the region holding `text`, or the text itself when no kept region holds it. */
function regionLink(ctx: InspectorContext, text: string, round: number, shown = text): HTMLElement {
  const ref = regionHolding(ctx.model, text, round);
  if (!ref) return el('span', { class: 'canopy-critic-text' }, shown);
  return button(shown, () => ctx.selectNode(ref.node.id), { class: 'canopy-link canopy-critic-region', 'data-node': ref.node.id, title: 'Show this region in the evidence tree' });
}

/** The item whose title names `name` (retrieved up to `round`, or by the next round), as a link. */
function itemLink(model: TraceModel, ctx: InspectorContext, title: string): HTMLElement {
  const entry = model.items.find((e) => e.item.title === title || e.item.title.startsWith(title));
  if (!entry) return el('span', {}, q(title));
  return button(q(title), () => ctx.selectNode(entry.tree.id), { class: 'canopy-link canopy-critic-item', 'data-item': entry.item.itemId });
}

/** Kept regions of this round or earlier that hold a missing term (the term is missing from the part's best sentence, not from all the evidence). */
function elsewhere(ctx: InspectorContext, term: string, round: number): HTMLElement | undefined {
  const ref = regionHolding(ctx.model, term, round);
  if (!ref) return undefined;
  return el('span', { class: 'canopy-muted' }, ' (in the kept evidence elsewhere: ', button(clip(ref.node.text ?? '', 50), () => ctx.selectNode(ref.node.id), { class: 'canopy-link canopy-critic-region', 'data-node': ref.node.id }), ')');
}

export function renderCriticCard(ctx: InspectorContext, r: TraceRound): HTMLElement {
  const trace = ctx.model.trace;
  const c = r.critic!;
  const d = readRuleDetails(c.details);
  const last = r.round >= trace.rounds.length;
  const card = el('div', { class: `canopy-critic canopy-critic-card ${c.sufficient ? 'sufficient' : 'insufficient'}`, role: 'group', 'aria-label': `Critic verdict, round ${r.round}` });
  const outcome = c.sufficient ? 'stopped' : last ? 'stopped' : c.followUpQuery ? 'asked again' : 'went on';
  card.append(
    el('p', { class: 'canopy-critic-head' }, el('strong', {}, c.sufficient ? 'Critic: sufficient' : 'Critic: not sufficient'), ` (${c.source}) — ${outcome}`),
    el('p', { class: 'canopy-critic-why', 'data-outcome': outcome }, criticSentence(trace, r)),
  );

  if (d && d.parts.length > 0) {
    const min = threshold(d);
    const table = el('table', { class: 'canopy-table canopy-critic-parts' });
    table.append(
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', { scope: 'col' }, 'Question part'),
          el('th', { scope: 'col' }, `Coverage (needs ≥ ${cov(min)})`),
          el('th', { scope: 'col' }, 'Answer cue'),
          el('th', { scope: 'col' }, 'Best kept sentence'),
          el('th', { scope: 'col' }, 'Verdict'),
        ),
      ),
    );
    const body = el('tbody');
    for (const p of d.parts) {
      const bar = el('span', { class: `canopy-coverage-fill ${p.coverage >= min ? 'met' : 'short'}`, 'aria-hidden': 'true' });
      bar.style.width = `${(100 * unit(p.coverage)).toFixed(1)}%`;
      const mark = el('span', { class: 'canopy-coverage-mark', 'aria-hidden': 'true' });
      mark.style.left = `${(100 * unit(min)).toFixed(1)}%`;
      const typed = p.answerType !== 'other' && p.answerType !== 'yesno';
      const missing = el('span', {});
      if (!p.answered && p.missingTerms.length > 0) {
        missing.append('missing from its best sentence: ');
        p.missingTerms.forEach((t, i) => {
          if (i > 0) missing.append(', ');
          missing.append(el('q', {}, t));
          const there = elsewhere(ctx, t, r.round);
          if (there) missing.append(there);
        });
      }
      body.append(
        el(
          'tr',
          { class: p.answered ? 'canopy-part-answered' : 'canopy-part-missing', 'data-part': p.part },
          el('td', {}, el('q', {}, p.part), el('div', { class: 'canopy-muted' }, `asks for: ${p.answerType}`)),
          el(
            'td',
            { class: 'canopy-coverage-cell' },
            el('span', { class: 'canopy-coverage-value' }, `${cov(p.coverage)} / ${cov(min)}`),
            el('span', { class: 'canopy-coverage-track', role: 'img', 'aria-label': `coverage ${cov(p.coverage)} of the ${cov(min)} needed` }, bar, mark),
          ),
          el('td', { class: 'canopy-cue' }, p.cue ?? (typed ? `none (a ${p.answerType} is needed)` : '— (not needed)')),
          el('td', { class: 'canopy-best' }, p.best ? regionLink(ctx, p.best, r.round, clip(p.best, 140)) : el('span', { class: 'canopy-muted' }, 'no kept sentence')),
          el('td', {}, el('strong', {}, p.answered ? 'answered' : 'not answered'), missing.childNodes.length > 0 ? el('div', {}, missing) : ''),
        ),
      );
    }
    table.append(body);
    card.append(el('div', { class: 'canopy-table-scroll' }, table));
  }

  const facts = el('ul', { class: 'canopy-critic-facts' });
  if (d?.hopGap && d.hopGap.bridges.length > 0) {
    const li = el('li', { class: 'canopy-critic-bridge' }, el('span', { class: 'canopy-label' }, 'Bridge looked for: '));
    d.hopGap.bridges.forEach((b, i) => li.append(i > 0 ? ', ' : '', regionLink(ctx, b, r.round)));
    li.append(` — the question asks through ${q(d.hopGap.nestedReference ?? '')}${d.hopGap.firstHop ? `; its first hop is ${q(d.hopGap.firstHop)}` : ''}, and no retrieved item is about the bridge yet`);
    facts.append(li);
  } else if (d && d.bridges.length > 0) {
    const li = el('li', { class: 'canopy-critic-bridge' }, el('span', { class: 'canopy-label' }, 'Bridge looked for: '));
    d.bridges.forEach((b, i) => li.append(i > 0 ? ', ' : '', regionLink(ctx, b, r.round)));
    li.append(' — named things the best sentences introduce that no retrieved item is about yet');
    facts.append(li);
  }
  if (d?.answerBridge) {
    const b = d.answerBridge;
    facts.append(
      el(
        'li',
        { class: 'canopy-critic-answer-bridge' },
        el('span', { class: 'canopy-label' }, 'The answer’s own bridge: '),
        regionLink(ctx, b.entity, r.round),
        b.item ? el('span', {}, ' — the index holds an item about it: ', itemLink(ctx.model, ctx, b.item)) : '',
        b.query ? ` (found by searching ${q(b.query)})` : '',
      ),
    );
  }
  const named = d ? [...new Set([...d.missingEntities, ...d.namedAbsent])] : [];
  if (named.length > 0) facts.append(el('li', {}, el('span', { class: 'canopy-label' }, 'Named in the question, not in the evidence: '), named.join(', ')));
  if (d?.probe) {
    facts.append(
      el(
        'li',
        { class: `canopy-critic-probe ${d.probe.worth ? 'worth' : 'not-worth'}` },
        el('span', { class: 'canopy-label' }, 'Look-ahead: '),
        `searched ${q(d.probe.query)}, ${d.probe.items} new item(s) — ${d.probe.worth ? 'worth a round' : 'not worth a round'}: ${d.probe.reason}`,
      ),
    );
  }
  if (d?.noNewQuery && !d.probe) facts.append(el('li', {}, el('span', { class: 'canopy-label' }, 'No follow-up: '), d.noNewQuery));
  if (facts.childNodes.length > 0) card.append(facts);

  if (c.missing.length > 0) {
    const chips = el('ul', { class: 'canopy-chips', 'aria-label': 'Missing' });
    for (const m of c.missing) chips.append(el('li', { class: 'canopy-chip' }, m));
    card.append(el('p', { class: 'canopy-label' }, 'Missing'), chips);
  }
  if (c.followUpQuery) {
    card.append(el('p', { class: 'canopy-followup' }, el('span', { class: 'canopy-label' }, !last ? 'Follow-up query → next round ' : 'Follow-up query (not run) '), el('q', {}, c.followUpQuery)));
  }
  if (c.followUpQuery && c.followUpNames && c.followUpNames.length > 0) {
    card.append(el('p', { class: 'canopy-muted canopy-followup-names' }, el('span', { class: 'canopy-label' }, 'Looks for, by title: '), c.followUpNames.join(' · ')));
  }
  if (c.judgment) card.append(renderJudgment(c.judgment, 'Learned critic', 'its probability that the kept evidence holds the answer'));
  return card;
}
