/**
 * One status per region, with the stage that decided it: what the evidence tree's decision column,
 * its row tooltips and the details pane say. A region's trace fields (`decision`, `rule`, the item's
 * `gate`, whether the MAGE controller ran over its file) are read together here, so a region is
 * never "dropped (controller-not-activated)" in one place and "Item gate: kept" in another: the
 * stage that decided last is the status, and an earlier stage that it overrode is named as such.
 * Pure data, no DOM.
 */
import type { TraceNode } from '../src/contracts/trace';
import type { NodeRef, TraceModel } from './model';
import { plainLabel } from './text';

/** The short code of the decision column. */
export type DecisionCode = 'kept' | 'whole' | 'refined' | 'dropped' | 'glimpse' | 'gate' | 'controller' | 'in kept' | 'in dropped' | 'unseen';

/** What the row is in the end, for its colour family: reached the reader, did not, or neither. */
export type Outcome = 'kept' | 'dropped' | 'refined' | 'inside-kept' | 'inside-dropped' | 'unseen';

export interface Decision {
  code: DecisionCode;
  outcome: Outcome;
  /** The stage that decided: "CANOPY projection", "rank gate", "MAGE controller", "flat baseline"… */
  stage: string;
  /** One status line: "kept whole by the CANOPY projection". */
  status: string;
  /** Why, in words (from the rule). */
  why: string;
  /** An earlier stage the deciding one overrode, in words (absent when none). */
  overridden?: string;
}

/** Why a decision was taken, in words (the rule names are the trace's). */
export const ruleExplanations: Record<string, string> = {
  'child-ge-parent': 'a child scored at least as high as this region, so it was replaced by those children',
  'no-child-ge-parent': 'every child scored below this region, so it was kept whole',
  leaf: 'a leaf: nothing finer exists, so it was kept',
  'aggregate-table': 'an aggregate question keeps tables whole',
  'below-parent': 'it scored below its parent while a sibling did not, so it was dropped with everything inside it',
  'ancestor-kept-whole': 'inside a region that was kept whole',
  'ancestor-dropped': 'inside a region that was dropped',
  'short-item': 'a short item the rank gate kept: kept whole, not refined',
  glimpse: 'a glimpse: the best leaf of a region CANOPY dropped (an item outside the rank gate, or a sibling below its parent), kept so the dropped region still shows',
  'flat-top-m': 'flat baseline: among the m best-scoring leaves',
  threshold: 'threshold baseline: the leaf scored at least the threshold',
  none: 'no rule decided on this region',
  'item-gate': 'the item gate dropped the whole item (below the best item by the gate margin, or outside the rank gate and named by no kept item)',
  controller: 'the MAGE controller opened this element for the reader, or elements inside it (the Graph tab shows its steps)',
  'controller-page-not-activated': 'the MAGE controller never activated its page (not an entry page, and no relation led there)',
  'controller-not-activated': 'its page was activated, but the MAGE controller never made this element a candidate',
  'controller-not-opened': 'a candidate the MAGE controller did not open (others had more utility, or the budget ran out)',
  'controller-pruned': 'the MAGE controller pruned it (the Graph tab shows the step and its reason)',
  'controller-projected-out': 'inside an element the MAGE controller opened, CANOPY’s projection did not keep it',
};

const CONTROLLER = 'MAGE controller';
const PROJECTION = 'CANOPY projection';

function baselineStage(model: TraceModel): string {
  const c = model.trace.settings.compressor;
  return c.name === 'flat' ? 'flat baseline' : c.name === 'threshold' ? 'threshold baseline' : c.name === 'none' ? 'no compression' : PROJECTION;
}

function why(n: TraceNode): string {
  return ruleExplanations[n.rule] ?? n.rule;
}

/** The decision of one region of the shown trace. */
export function decisionOf(model: TraceModel, ref: NodeRef): Decision {
  const n = ref.node;
  const root = ref.depth === 0;
  const gate = root ? ref.entry.item.gate : undefined;
  const controlled = ref.entry.item.controller !== undefined || n.decision === 'kept-by-controller' || n.decision === 'dropped-by-controller' || n.rule.startsWith('controller');
  // The rank gate kept the item, but the controller chose which of the PDF's regions the reader gets.
  const gateOverridden = gate?.kept && controlled ? `the rank gate kept the item (${gate.why}), but for a PDF the MAGE controller ran over, the controller chose the regions the reader gets` : undefined;
  const base = (d: Omit<Decision, 'why'> & { why?: string }): Decision => ({ ...d, why: d.why ?? why(n), ...(gateOverridden && !d.overridden ? { overridden: gateOverridden } : {}) });

  if (ref.status === 'kept') {
    if (n.rule === 'glimpse') return base({ code: 'glimpse', outcome: 'kept', stage: `${PROJECTION} (glimpse)`, status: 'kept as a glimpse of a dropped region' });
    if (n.decision === 'kept-by-controller') return base({ code: 'controller', outcome: 'kept', stage: CONTROLLER, status: 'kept: the MAGE controller opened it for the reader' });
    if (n.decision === 'kept-by-baseline') return base({ code: 'kept', outcome: 'kept', stage: baselineStage(model), status: `kept by the ${baselineStage(model)}` });
    if (n.rule === 'short-item') return base({ code: 'whole', outcome: 'kept', stage: 'rank gate', status: 'kept whole: a short item the rank gate kept' });
    if (n.children.length > 0) return base({ code: 'whole', outcome: 'kept', stage: PROJECTION, status: `kept whole by the ${PROJECTION}` });
    return base({ code: 'kept', outcome: 'kept', stage: PROJECTION, status: `kept by the ${PROJECTION}` });
  }
  if (ref.status === 'dropped') {
    if (root && n.rule === 'glimpse') {
      return base({
        code: 'gate',
        outcome: 'dropped',
        stage: 'rank gate',
        status: 'dropped by the rank gate; its glimpse is kept',
        why: `${gate ? `${gate.why}; ` : ''}the leaf with the best score per token stays as a glimpse of what the item holds`,
      });
    }
    if (gate && !gate.kept) return base({ code: 'gate', outcome: 'dropped', stage: 'rank gate', status: `dropped by the rank gate: ${gate.why}` });
    if (n.decision === 'dropped-by-controller' || n.rule.startsWith('controller-')) return base({ code: 'controller', outcome: 'dropped', stage: CONTROLLER, status: 'dropped: the MAGE controller left it out' });
    if (n.decision === 'dropped-by-baseline') return base({ code: 'dropped', outcome: 'dropped', stage: baselineStage(model), status: `dropped by the ${baselineStage(model)}` });
    if (root && model.trace.settings.compressor.name === 'canopy' && model.trace.settings.compressor.itemGate !== undefined) {
      return base({ code: 'gate', outcome: 'dropped', stage: 'item gate', status: 'dropped by the item gate: the whole item scored too far below the best item' });
    }
    return base({ code: 'dropped', outcome: 'dropped', stage: PROJECTION, status: `dropped by the ${PROJECTION}` });
  }
  if (ref.status === 'inside-kept') return base({ code: 'in kept', outcome: 'inside-kept', stage: 'its kept ancestor', status: 'reaches the reader inside a region kept whole' });
  if (ref.status === 'inside-dropped') return base({ code: 'in dropped', outcome: 'inside-dropped', stage: 'its dropped ancestor', status: 'left out inside a dropped region' });
  if (ref.status === 'descended') {
    const stage = n.rule === 'controller' ? CONTROLLER : PROJECTION;
    return base({ code: 'refined', outcome: 'refined', stage, status: `refined by the ${stage}: what is kept of it lies in its children` });
  }
  return base({ code: 'unseen', outcome: 'unseen', stage: 'none', status: 'not visited: no stage decided on it' });
}

/** The kept regions' texts, folded for matching, once per trace (the critic card looks up several sentences per round). */
const keptTexts = new WeakMap<TraceModel, Array<{ ref: NodeRef; text: string }>>();

/** The node of a trace a sentence or a bridge names: the smallest kept region holding the text. */
export function regionHolding(model: TraceModel, text: string, upToRound = Number.POSITIVE_INFINITY): NodeRef | undefined {
  const needle = text.replace(/\s+/g, ' ').trim().toLowerCase();
  if (needle.length < 3) return undefined;
  let texts = keptTexts.get(model);
  if (!texts) {
    texts = [];
    for (const ref of model.nodes.values()) {
      if ((ref.status === 'kept' || ref.status === 'inside-kept') && ref.node.text !== undefined) texts.push({ ref, text: ref.node.text.replace(/\s+/g, ' ').toLowerCase() });
    }
    keptTexts.set(model, texts);
  }
  let best: NodeRef | undefined;
  for (const { ref, text: t } of texts) {
    if (ref.entry.round > upToRound || !t.includes(needle)) continue;
    if (!best || t.length < (best.node.text?.length ?? Infinity)) best = ref;
  }
  return best;
}

/**
 * Why a region was kept while a sibling that scores higher was dropped, or the reverse, when the
 * two were decided by different stages or rules (a score alone does not decide then).
 */
export function siblingNote(model: TraceModel, ref: NodeRef): string | undefined {
  const parent = ref.parent;
  if (!parent || ref.node.score === undefined) return undefined;
  const mine = decisionOf(model, ref);
  const reached = (o: Outcome) => o === 'kept' || o === 'inside-kept';
  const me = reached(mine.outcome);
  if (mine.outcome !== 'kept' && mine.outcome !== 'dropped') return undefined;
  let other: { ref: NodeRef; d: Decision } | undefined;
  for (const c of parent.children) {
    if (c.id === ref.node.id || c.score === undefined) continue;
    const cref = model.ref(c.id);
    if (!cref) continue;
    const d = decisionOf(model, cref);
    if (reached(d.outcome) === me || (d.outcome !== 'kept' && d.outcome !== 'dropped')) continue;
    // The puzzle: the kept one scores lower than the dropped one.
    const keptScore = me ? ref.node.score : c.score;
    const droppedScore = me ? c.score : ref.node.score;
    if (keptScore >= droppedScore) continue;
    if (!other || Math.abs(c.score - ref.node.score) > Math.abs((other.ref.node.score ?? 0) - ref.node.score)) other = { ref: cref, d };
  }
  if (!other) return undefined;
  const [kept, dropped] = me ? [{ ref, d: mine }, other] : [other, { ref, d: mine }];
  const keptWhy =
    kept.d.code === 'glimpse'
      ? 'kept as the glimpse of a dropped region: its best leaf, chosen within that region and kept so the region still shows'
      : kept.d.code === 'controller'
        ? 'kept by the MAGE controller, which opened the element holding it'
        : `kept by the ${kept.d.stage} (${kept.d.why})`;
  const droppedWhy =
    dropped.d.code === 'controller'
      ? `left out by the MAGE controller (${dropped.d.why}); the controller chooses by page, element and budget, not by this score`
      : `dropped by the ${dropped.d.stage} (${dropped.d.why})`;
  const name = (r: NodeRef) => `${r.node.kind} “${plainLabel(r.node.text ?? r.node.preview ?? '').slice(0, 50)}”`;
  const score = (r: NodeRef) => (r.node.score ?? 0).toFixed(3);
  return me
    ? `Kept at ${score(ref)} although its sibling ${name(other.ref)} scores ${score(other.ref)}: this region was ${keptWhy}; the sibling was ${droppedWhy}.`
    : `Dropped at ${score(ref)} although its sibling ${name(other.ref)} scores only ${score(other.ref)}: this region was ${droppedWhy}; the sibling was ${keptWhy}.`;
}
