/**
 * The deterministic evaluator (no LLM configured). It estimates each candidate's marginal
 * utility from four signals and takes what clears a threshold that rises with budget pressure:
 *
 *   relevance  rel(n) = the node's relevance relative to the best element of the document
 *              (relevance.ts: ½ dense cosine + ½ idf-weighted question-term coverage)
 *   novelty    nov(n) from the highest cosine c between n and any opened node (or one chosen
 *              to open in this iteration): 1 while c ≤ 0.75, then falling linearly to 0 at
 *              c = 1 — a near-copy of opened evidence adds nothing, while merely related text
 *              (sentence encoders put most passages of one report at cosine 0.4–0.7) is not
 *              penalised
 *   priors     how much a candidate's provenance is worth: activation source
 *              (page, search 1.0; relation 0.95; relation-target 0.9; adjacent 0.85) and relation
 *              type (section 1.0; next, near 0.9; prev 0.85; semantic 0.8; subsection 0.7)
 *   pressure   p = max(opened / maxOpenedNodes, (iteration − 1) / maxIterations); thresholds
 *              rise by 0.3·p, so the rule gets pickier as the budget runs out
 *
 *   OPEN_NODE e          u = rel(e)·nov(e)                          ≥ 0.5 + 0.3p
 *   ACTIVATE_NODE e      u = prior(source)·rel(e)·nov(e)            ≥ 0.45 + 0.3p
 *   ACTIVATE_PAGE p      u = prior(source)·max over p's elements of rel·nov  (one step of
 *                        lookahead: a page is worth the best element it would make available)
 *                                                                   ≥ 0.45 + 0.3p
 *   FOLLOW_RELATION →t   u = prior(type)·rel(t)·nov(t)              ≥ 0.45 + 0.3p (2 per iteration)
 *   PRUNE_NODE page      u = 1 − max over its elements of rel·nov, for a page with nothing
 *                        opened: pruned when nothing on it can clear the activation threshold
 *                        (u ≥ 1 − that threshold)
 *   PRUNE_NODE element   active: u = 1 − rel·nov, pruned when it cannot clear the open
 *                        threshold (u ≥ 1 − that threshold); opened: u = its cosine with a more
 *                        relevant opened node, pruned as a duplicate when ≥ 0.95
 *                        Thresholds only rise and relevance is fixed, so the rule never prunes
 *                        what it would still take later.
 *   SEARCH_EVIDENCE      the question itself in the first iteration; later the question words
 *                        the opened evidence does not cover, when they carry ≥ 30% of its idf
 *   STOP                 when nothing clears its threshold and no search is due — i.e. when no
 *                        candidate can still improve the evidence by the rule's estimate
 *
 * Opens are taken greedily by utility (novelty updated after each), activations up to the
 * per-iteration limit, both within the budgets left. Ties go to the lower index.
 */
import { askedSpan, periodSpan, type PeriodSpan } from '../profiles/filings/rows';
import type { Candidate } from './candidates';
import { pageHead } from './grounding';
import type { DocumentView } from './documentView';
import type { CandidatePick, ControllerEvaluator, EvaluatorDecision, EvaluatorInput, RuleScore, SearchRequest } from './evaluator';
import type { ControllerOptions } from './options';
import type { RelevanceModel } from './relevance';
import type { EvidenceState } from './state';
import type { NodeActivationSource, PageActivationSource, RelationType } from './trace';

export const ruleConstants = Object.freeze({
  openThreshold: 0.5,
  activateThreshold: 0.45,
  pressureSlope: 0.3,
  duplicateThreshold: 0.95,
  redundancyCosine: 0.75,
  followsPerIteration: 2,
  searchUncoveredShare: 0.3,
  sourcePriors: Object.freeze({ initial: 1, page: 1, search: 1, relation: 0.95, 'relation-target': 0.9, adjacent: 0.85 }) as Readonly<
    Record<PageActivationSource | NodeActivationSource, number>
  >,
  relationPriors: Object.freeze({ section: 1, next: 0.9, near: 0.9, prev: 0.85, semantic: 0.8, subsection: 0.7 }) as Readonly<Record<RelationType, number>>,
});

export interface RuleContext {
  view: DocumentView;
  state: EvidenceState;
  relevance: RelevanceModel;
  candidates: Candidate[];
  iteration: number;
  options: Pick<ControllerOptions, 'maxOpenedNodes' | 'maxIterations'>;
  /** The question, for the period it asks about (a quarter's statement beside the year to date's). */
  question?: string;
}

const r2 = (x: number) => Math.round(x * 1000) / 1000;

export function budgetPressure(ctx: Pick<RuleContext, 'state' | 'iteration' | 'options'>): number {
  const opened = ctx.state.counts().opened;
  const o = ctx.options.maxOpenedNodes > 0 ? opened / ctx.options.maxOpenedNodes : 1;
  const it = ctx.options.maxIterations > 0 ? (ctx.iteration - 1) / ctx.options.maxIterations : 1;
  return Math.min(1, Math.max(0, o, it));
}

/** 1 unless `id` is close to a node of `against` (cosine above redundancyCosine), then down to 0 for a copy. */
export function novelty(relevance: RelevanceModel, id: string, against: Iterable<string>): number {
  const maxCos = 1 - relevance.novelty(id, against);
  return Math.min(1, Math.max(0, (1 - maxCos) / (1 - ruleConstants.redundancyCosine)));
}

/** The rule's utility, threshold and reason for every candidate, by index. */
export function scoreCandidates(ctx: RuleContext): Map<number, RuleScore> {
  const { view, state, relevance } = ctx;
  const p = budgetPressure(ctx);
  const activate = ruleConstants.activateThreshold + ruleConstants.pressureSlope * p;
  const open = ruleConstants.openThreshold + ruleConstants.pressureSlope * p;
  const opened = state.elementsIn('opened');
  const nov = (id: string) => novelty(relevance, id, opened);
  const asked = ctx.question !== undefined ? askedSpan(ctx.question) : undefined;
  const spans = new Map<string, PeriodSpan | undefined>();
  const spanOf = (id: string) => {
    const page = view.pageOf(id);
    if (!page) return undefined;
    if (!spans.has(page.id)) spans.set(page.id, periodSpan(pageHead(view, page.id)));
    return spans.get(page.id);
  };
  const out = new Map<number, RuleScore>();
  for (const c of ctx.candidates) {
    const a = c.action;
    switch (a.type) {
      case 'OPEN_NODE': {
        const rel = relevance.relative(a.nodeId);
        const n = nov(a.nodeId);
        out.set(c.index, { utility: r2(rel * n), threshold: r2(open), why: `relevance ${r2(rel)} × novelty ${r2(n)}` });
        break;
      }
      case 'ACTIVATE_NODE': {
        const rel = relevance.relative(a.nodeId);
        const n = nov(a.nodeId);
        const prior = ruleConstants.sourcePriors[a.source];
        out.set(c.index, { utility: r2(prior * rel * n), threshold: r2(activate), why: `${a.source} prior ${prior} × relevance ${r2(rel)} × novelty ${r2(n)}` });
        break;
      }
      case 'ACTIVATE_PAGE': {
        let best = 0;
        let bestId: string | undefined;
        for (const e of view.elementsOn(a.pageId)) {
          if (state.stateOf(e.id) === 'pruned') continue;
          const u = relevance.relative(e.id) * nov(e.id);
          if (u > best) {
            best = u;
            bestId = e.id;
          }
        }
        const prior = ruleConstants.sourcePriors[a.source];
        out.set(c.index, {
          utility: r2(prior * best),
          threshold: r2(activate),
          why: `${a.source} prior ${prior} × best element ${r2(best)}${bestId ? ` (${view.label(bestId, 50)})` : ' (no element)'}`,
        });
        break;
      }
      case 'FOLLOW_RELATION': {
        const rel = relevance.relative(a.to);
        const n = nov(a.to);
        const prior = ruleConstants.relationPriors[a.relation];
        out.set(c.index, { utility: r2(prior * rel * n), threshold: r2(activate), why: `${a.relation} prior ${prior} × target relevance ${r2(rel)} × novelty ${r2(n)}` });
        break;
      }
      case 'PRUNE_NODE': {
        if (view.isPage(a.nodeId)) {
          const elements = view.elementsOn(a.nodeId).filter((e) => state.stateOf(e.id) !== 'pruned');
          if (elements.some((e) => state.stateOf(e.id) === 'opened')) {
            out.set(c.index, { utility: 0, threshold: r2(1 - activate), why: 'the page holds opened evidence' });
            break;
          }
          const best = Math.max(0, ...elements.map((e) => relevance.relative(e.id) * nov(e.id)));
          out.set(c.index, { utility: r2(1 - best), threshold: r2(1 - activate), why: `nothing on the page can clear the activation threshold: best element ${r2(best)} < ${r2(activate)}` });
          break;
        }
        if (state.stateOf(a.nodeId) === 'opened') {
          let dup = 0;
          let of: string | undefined;
          const own = relevance.relevance(a.nodeId);
          const fits = (id: string) => asked !== undefined && spanOf(id) === asked;
          for (const o of opened) {
            // Of two copies the less relevant one goes; of equals, the later one in reading order. Of a
            // quarter's statement and the year to date's (same line items, near-equal text), the one of the
            // period the question asks about stays.
            const other = relevance.relevance(o);
            if (o === a.nodeId) continue;
            if (fits(o) !== fits(a.nodeId) && spanOf(o) !== undefined && spanOf(a.nodeId) !== undefined) {
              if (!fits(o)) continue;
            } else if (other < own || (other === own && view.readingOrder(o) > view.readingOrder(a.nodeId))) continue;
            const s = relevance.similarity(a.nodeId, o);
            if (s > dup) {
              dup = s;
              of = o;
            }
          }
          out.set(c.index, { utility: r2(dup), threshold: ruleConstants.duplicateThreshold, why: of ? `cosine ${r2(dup)} with the more relevant ${view.label(of, 50)}` : 'no more relevant opened node' });
          break;
        }
        const u = relevance.relative(a.nodeId) * nov(a.nodeId);
        out.set(c.index, { utility: r2(1 - u), threshold: r2(1 - open), why: `left active below the open threshold: ${r2(u)} < ${r2(open)}` });
        break;
      }
    }
  }
  return out;
}

/**
 * The rule's search, if one is due: the question first, then the words the opened evidence
 * (with the nodes being opened in this iteration) misses.
 */
export function ruleSearch(input: Pick<EvaluatorInput, 'question' | 'state' | 'relevance' | 'budgetLeft'>, openingNow: readonly string[] = []): SearchRequest | undefined {
  if (input.budgetLeft.searches <= 0) return undefined;
  const coverage = input.relevance.coverage([...input.state.elementsIn('opened'), ...openingNow]);
  if (input.state.queries.length === 0) {
    // The question with the filing's names for its colloquial line items ("top line" → revenue), when the document uses them.
    const query = input.relevance.lexicalQuery;
    return { query, utility: r2(1 - coverage.share), why: 'first search: the question itself, over every element of the document' };
  }
  const uncoveredShare = 1 - coverage.share;
  if (uncoveredShare < ruleConstants.searchUncoveredShare || coverage.uncovered.length === 0) return undefined;
  const query = coverage.uncovered.join(' ');
  if (input.state.queries.some((q) => q.toLowerCase() === query.toLowerCase())) return undefined;
  return { query, utility: r2(uncoveredShare), why: `the opened evidence misses ${Math.round(uncoveredShare * 100)}% of the question's term weight` };
}

/** The rule's choice from scored candidates (also the LLM evaluator's fallback). */
export function ruleDecide(input: EvaluatorInput): { picks: CandidatePick[]; search?: SearchRequest; stop?: { reason: string } } {
  const { candidates, ruleScores: scores, relevance, state, budgetLeft } = input;
  const byUtility = (list: Candidate[]) => [...list].sort((a, b) => scores.get(b.index)!.utility - scores.get(a.index)!.utility || a.index - b.index);
  const clears = (c: Candidate) => {
    const s = scores.get(c.index)!;
    return s.utility >= s.threshold && s.utility > 0;
  };
  const picks: CandidatePick[] = [];
  const take = (c: Candidate, utility = scores.get(c.index)!.utility, why = scores.get(c.index)!.why) => picks.push({ index: c.index, utility, why });

  // Prunes first, so that nothing is activated on a page pruned in the same iteration; pages
  // before elements, since pruning a page prunes its elements already.
  const prunedPages = new Set<string>();
  const prunedNodes = new Set<string>();
  const onPrunedPage = (id: string) => prunedPages.has(input.view.pageOf(id)?.id ?? '');
  const prunes = byUtility(candidates.filter((c) => c.action.type === 'PRUNE_NODE'));
  for (const c of [...prunes.filter((c) => input.view.isPage(c.targetId)), ...prunes.filter((c) => !input.view.isPage(c.targetId))]) {
    if (!clears(c)) continue;
    if (input.view.isPage(c.targetId)) prunedPages.add(c.targetId);
    else if (onPrunedPage(c.targetId)) continue;
    else prunedNodes.add(c.targetId);
    take(c);
  }

  // Opens: greedy, novelty against the opened nodes and those chosen so far.
  const opened = state.elementsIn('opened');
  const chosen: string[] = [];
  const threshold = (c: Candidate) => scores.get(c.index)!.threshold;
  for (const c of byUtility(candidates.filter((c) => c.action.type === 'OPEN_NODE'))) {
    if (chosen.length >= budgetLeft.openedNodes) break;
    if (onPrunedPage(c.targetId) || prunedNodes.has(c.targetId)) continue;
    const rel = relevance.relative(c.targetId);
    const n = novelty(relevance, c.targetId, [...opened, ...chosen]);
    const u = r2(rel * n);
    if (u < threshold(c) || u <= 0) continue;
    chosen.push(c.targetId);
    take(c, u, chosen.length > 1 ? `relevance ${r2(rel)} × novelty ${r2(n)} (after this iteration's other opens)` : scores.get(c.index)!.why);
  }

  // Activations: pages and elements compete for the per-iteration limit.
  let activations = 0;
  for (const c of byUtility(candidates.filter((c) => c.action.type === 'ACTIVATE_PAGE' || c.action.type === 'ACTIVATE_NODE'))) {
    if (activations >= budgetLeft.activationsThisIteration) break;
    if (c.action.type === 'ACTIVATE_NODE' && onPrunedPage(c.targetId)) continue;
    if (!clears(c)) continue;
    take(c);
    activations++;
  }

  let follows = 0;
  for (const c of byUtility(candidates.filter((c) => c.action.type === 'FOLLOW_RELATION'))) {
    if (follows >= ruleConstants.followsPerIteration) break;
    const from = (c.action as { from: string }).from;
    if (prunedNodes.has(from) || onPrunedPage(from)) continue;
    if (!clears(c)) continue;
    take(c);
    follows++;
  }

  const search = ruleSearch(input, chosen);
  if (picks.length > 0 || search) return { picks, ...(search ? { search } : {}) };

  let best: { c: Candidate; s: RuleScore } | undefined;
  for (const c of candidates) {
    const s = scores.get(c.index)!;
    if (c.action.type === 'PRUNE_NODE') continue;
    if (!best || s.utility - s.threshold > best.s.utility - best.s.threshold) best = { c, s };
  }
  const reason = best
    ? `no candidate clears its threshold: the closest is #${best.c.index} ${best.c.action.type} ${input.view.label(best.c.targetId, 60)} at ${best.s.utility} < ${best.s.threshold}`
    : 'no candidate can add evidence';
  return { picks: [], stop: { reason } };
}

export class RuleEvaluator implements ControllerEvaluator {
  readonly kind = 'rule' as const;

  async decide(input: EvaluatorInput): Promise<EvaluatorDecision> {
    const started = Date.now();
    const d = ruleDecide(input);
    return {
      ok: true,
      picks: d.picks,
      ...(d.search ? { search: d.search } : {}),
      ...(d.stop ? { stop: d.stop } : {}),
      problems: [],
      call: { evaluator: 'rule', candidates: input.candidates.length, outcome: 'ok', ms: Date.now() - started },
    };
  }
}
