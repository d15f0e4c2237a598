/**
 * The configurations an evaluation compares: a compressor (none, flat top-m, threshold, CANOPY
 * with options, or the vectra peer), a branching factor, rounds and a critic. `--compressor`
 * strings parse here; `sweepConfigs` is the side-by-side comparison `--sweep` runs.
 *
 * CANOPY options measured inside the harness (they never change the product's defaults):
 *  - `gate=<g>`: the item-level gate of design §13 (drop items whose root scores more than g
 *    below the best root of the round), the pipeline's own `itemGate`;
 *  - `groups=encoded`: group nodes scored from their own encoded text instead of the mean of
 *    their children's vectors (see docs/evaluation.md for why this is measured);
 *  - `margin=<δ>`: descend when a child scores ≥ its parent − δ (the paper's rule is δ = 0),
 *    applied through the pipeline's own projection by adding δ per tree level to every score;
 *  - `nodes=text|prefix|children`: other node vectors than the product's (nodeVectors.ts: leaves
 *    and tables encoded, other regions derived from their children). `text`: every region
 *    encoded from its whole text, window by window (the recipe before); `prefix`: from its first
 *    window only; `children`: tables derived from their rows too.
 */
import { CanopyError, ErrorCodes } from '../core/errors';
import type { CompressorSetting } from '../contracts/trace';
import { GLIMPSE, ITEM_SHARE, MIN_ITEMS, WHOLE_BELOW } from '../contracts/askSettings';

export type CriticChoice = 'none' | 'rule' | 'llm';

export type EvalCompressor =
  | CompressorSetting
  | { name: 'peer'; budgetFrom: string }
  /** FinanceBench's document comparison (financebench.ts): page top-k, CANOPY over page top-k, the MAGE controller. */
  | { name: 'document'; method: 'pages' | 'canopy-pages'; k: number }
  | { name: 'document'; method: 'controller' };

export interface RunConfig {
  /** Unique within a run; used as the row label. */
  id: string;
  compressor: EvalCompressor;
  groupVectors: 'mean' | 'encoded';
  /** Regions with children encoded from their own text (a measured variant; absent = the product's derived vectors). */
  nodeVectors?: NodeVectorVariant;
  /** CANOPY descend margin δ (0 = the paper's rule). */
  margin?: number;
  branching: number;
  /** Open pool only: most rounds (1 = no follow-up). */
  rounds: number;
  critic: CriticChoice;
  topK: number;
}

/** How regions with children get their vectors in a measured variant (see the module comment). */
export type NodeVectorVariant = 'text' | 'prefix' | 'children';

export interface ConfigDefaults {
  branching: number;
  rounds: number;
  critic: CriticChoice;
  topK: number;
}

/** Parses `none | flat:<m> | threshold:<t> | canopy[:gate=<g>][,groups=encoded][,nodes=text|prefix|children] | peer`. */
export function parseEvalCompressor(value: string): { compressor: EvalCompressor; groupVectors: 'mean' | 'encoded'; nodeVectors?: NodeVectorVariant; margin?: number } {
  const v = value.trim();
  if (v === 'none') return { compressor: { name: 'none' }, groupVectors: 'mean' };
  if (v === 'peer') return { compressor: { name: 'peer', budgetFrom: 'canopy' }, groupVectors: 'mean' };
  const flat = /^flat:(\d+)$/.exec(v);
  if (flat && Number(flat[1]) >= 1) return { compressor: { name: 'flat', m: Number(flat[1]) }, groupVectors: 'mean' };
  const thr = /^threshold:(-?\d*\.?\d+)$/.exec(v);
  if (thr) return { compressor: { name: 'threshold', threshold: Number(thr[1]) }, groupVectors: 'mean' };
  const canopy = /^canopy(?::(.*))?$/.exec(v);
  if (canopy) {
    const setting: CompressorSetting & { name: 'canopy' } = { name: 'canopy' };
    let groupVectors: 'mean' | 'encoded' = 'mean';
    let margin: number | undefined;
    let nodeVectors: NodeVectorVariant | undefined;
    for (const opt of (canopy[1] ?? '').split(',').filter((s) => s.trim() !== '')) {
      const [k, val] = opt.split('=').map((s) => s.trim());
      if (k === 'gate' && val !== undefined && Number.isFinite(Number(val)) && Number(val) >= 0) setting.itemGate = Number(val);
      else if (k === 'items' && val !== undefined && Number(val) >= ITEM_SHARE.min && Number(val) <= ITEM_SHARE.max) setting.items = Number(val);
      else if (k === 'whole' && val !== undefined && Number.isInteger(Number(val)) && Number(val) >= WHOLE_BELOW.min && Number(val) <= WHOLE_BELOW.max) setting.wholeBelow = Number(val);
      else if (k === 'min' && val !== undefined && Number.isInteger(Number(val)) && Number(val) >= MIN_ITEMS.min && Number(val) <= MIN_ITEMS.max) setting.minItems = Number(val);
      else if (k === 'glimpse' && val !== undefined && Number.isInteger(Number(val)) && Number(val) >= GLIMPSE.min && Number(val) <= GLIMPSE.max) setting.glimpse = Number(val);
      else if (k === 'floor' && val !== undefined && val !== '' && Number(val) >= 0 && Number(val) <= 1) setting.glimpseFloor = Number(val);
      else if (k === 'groups' && (val === 'encoded' || val === 'mean')) groupVectors = val;
      else if (k === 'margin' && val !== undefined && Number.isFinite(Number(val)) && Number(val) >= 0) margin = Number(val);
      else if (k === 'nodes' && (val === 'text' || val === 'prefix' || val === 'children')) nodeVectors = val;
      else if (k === 'nodes' && val === 'derived') nodeVectors = undefined;
      else throw new CanopyError(ErrorCodes.badInput, `unknown CANOPY option "${opt}" (expected gate=<g>, items=<share ${ITEM_SHARE.min}–${ITEM_SHARE.max}>, whole=<characters>, min=<items>, glimpse=<leaves>, floor=<share 0–1>, margin=<δ>, groups=encoded|mean or nodes=derived|text|prefix|children)`);
    }
    // A floor only chooses among the glimpses of the items the rank gate drops.
    if (setting.glimpseFloor !== undefined && (setting.items === undefined || !setting.glimpse)) {
      throw new CanopyError(ErrorCodes.badInput, `--compressor ${v}: floor= chooses which items outside the rank gate keep a glimpse; it needs items=<share> and glimpse=<leaves>`);
    }
    // whole= and min= shape the rank gate: without items= there is no gate and they would do nothing.
    if (setting.items === undefined && (setting.wholeBelow !== undefined || setting.minItems !== undefined)) {
      throw new CanopyError(ErrorCodes.badInput, `--compressor ${v}: whole= and min= shape the rank gate, which items=<share> turns on; add items= or drop them`);
    }
    return { compressor: setting, groupVectors, ...(nodeVectors ? { nodeVectors } : {}), ...(margin ? { margin } : {}) };
  }
  throw new CanopyError(ErrorCodes.badInput, `--compressor must be none, flat:<m>, threshold:<t>, canopy[:gate=<g>,items=<share>,whole=<characters>,min=<items>,glimpse=<leaves>,floor=<share>,margin=<δ>,groups=encoded,nodes=text|prefix|children] or peer, not "${value}"`);
}

export function compressorLabel(c: EvalCompressor, groupVectors: 'mean' | 'encoded', margin?: number, nodeVectors?: NodeVectorVariant): string {
  switch (c.name) {
    case 'none':
      return 'none';
    case 'flat':
      return `flat:${c.m}`;
    case 'threshold':
      return `threshold:${c.threshold}`;
    case 'canopy': {
      const opts = [c.itemGate !== undefined ? `gate=${c.itemGate}` : '', c.items !== undefined ? `items=${c.items}` : '', c.wholeBelow !== undefined ? `whole=${c.wholeBelow}` : '', c.minItems !== undefined ? `min=${c.minItems}` : '', c.glimpse !== undefined ? `glimpse=${c.glimpse}` : '', c.glimpseFloor !== undefined ? `floor=${c.glimpseFloor}` : '', margin ? `margin=${margin}` : '', groupVectors === 'encoded' ? 'groups=encoded' : '', nodeVectors ? `nodes=${nodeVectors}` : ''].filter((s) => s);
      return opts.length ? `canopy:${opts.join(',')}` : 'canopy';
    }
    case 'peer':
      return 'peer';
    case 'document':
      return c.method === 'controller' ? 'controller' : c.method === 'pages' ? `page top-${c.k}` : `CANOPY over page top-${c.k}`;
  }
}

export function singleConfig(compressor: string, d: ConfigDefaults): RunConfig {
  const parsed = parseEvalCompressor(compressor);
  const c: RunConfig = { id: '', ...parsed, branching: d.branching, rounds: d.critic === 'none' ? 1 : d.rounds, critic: d.critic, topK: d.topK };
  c.id = describeConfig(c);
  return c;
}

export function describeConfig(c: RunConfig): string {
  const parts = [compressorLabel(c.compressor, c.groupVectors, c.margin, c.nodeVectors)];
  if (c.compressor.name === 'canopy' || c.groupVectors === 'encoded') parts.push(`B=${c.branching}`);
  if (c.rounds > 1) parts.push(`R=${c.rounds} ${c.critic} critic`);
  return parts.join(' ');
}

export interface SweepOptions {
  flatM: number[];
  thresholds: number[];
  branchings: number[];
  gate: number;
  /** Descend margins measured (given items). */
  margins: number[];
  /** Measure the harness variants (encoded groups, margins) — off for very large items (PDFs). */
  variants: boolean;
  /** More item-gate margins beside `gate`. */
  moreGates?: number[];
  /** The vectra peer (slow: one vectra index per question in the given mode). */
  peer?: boolean;
}

export const defaultSweep: SweepOptions = { flatM: [3, 5, 10, 15, 20, 30, 40, 60], thresholds: [0.3, 0.4], branchings: [2, 3, 4], gate: 0.1, margins: [0.05], variants: true };

/**
 * The comparison table. Given items: none, flat top-m for several m, thresholds, CANOPY at each B,
 * CANOPY + item gate, CANOPY with encoded group vectors, and the peer at CANOPY's token budget.
 * Open pool adds rounds: vanilla (none, one round), CANOPY without rounds, CANOPY full (rounds with
 * the critic), vanilla with rounds, CANOPY + gate with rounds, and the peer (one round, at the
 * budget of CANOPY without rounds).
 */
export function sweepConfigs(mode: 'given' | 'pool', d: ConfigDefaults, s: SweepOptions = defaultSweep): RunConfig[] {
  const out: RunConfig[] = [];
  const add = (compressor: EvalCompressor, extra: Partial<RunConfig> = {}) => {
    const c: RunConfig = { id: '', compressor, groupVectors: 'mean', branching: d.branching, rounds: 1, critic: 'none', topK: d.topK, ...extra };
    c.id = describeConfig(c);
    if (!out.some((o) => o.id === c.id)) out.push(c);
    return c;
  };
  const rounds = Math.max(2, d.rounds);
  const critic: CriticChoice = d.critic === 'none' ? 'rule' : d.critic;
  add({ name: 'none' });
  for (const m of s.flatM) add({ name: 'flat', m });
  for (const t of s.thresholds) add({ name: 'threshold', threshold: t });
  if (mode === 'given') {
    let reference: RunConfig | undefined;
    for (const b of s.branchings) {
      const c = add({ name: 'canopy' }, { branching: b });
      if (b === d.branching) reference = c;
    }
    reference ??= add({ name: 'canopy' });
    add({ name: 'canopy', itemGate: s.gate });
    for (const g of s.moreGates ?? []) add({ name: 'canopy', itemGate: g });
    if (s.variants) {
      add({ name: 'canopy' }, { groupVectors: 'encoded' });
      for (const m of s.margins) add({ name: 'canopy' }, { margin: m });
    }
    if (s.peer !== false) add({ name: 'peer', budgetFrom: reference.id });
  } else {
    const oneRound = add({ name: 'canopy' });
    add({ name: 'canopy' }, { rounds, critic });
    add({ name: 'none' }, { rounds, critic });
    add({ name: 'canopy', itemGate: s.gate }, { rounds, critic });
    for (const g of s.moreGates ?? []) add({ name: 'canopy', itemGate: g }, { rounds, critic });
    // One round of vectra at the budget of one round of CANOPY (same k items asked for).
    if (s.peer !== false) add({ name: 'peer', budgetFrom: oneRound.id });
  }
  return out;
}

/** The configuration a measured node-vector variant is compared with: the same one with the product's vectors. */
export function variantBase(c: RunConfig): string | undefined {
  if (c.groupVectors !== 'encoded' && !c.nodeVectors) return undefined;
  const { nodeVectors: _n, ...rest } = c;
  return describeConfig({ ...rest, groupVectors: 'mean' });
}

/** The pipeline compressor of a configuration; the peer and the document comparison have none. */
export function pipelineCompressor(c: RunConfig): CompressorSetting {
  if (c.compressor.name === 'peer' || c.compressor.name === 'document') throw new CanopyError(ErrorCodes.badInput, `${c.id} is not a pipeline compressor`);
  return c.compressor;
}
