/**
 * The CLI's CANOPY flags, shared by `canopy ask`, `canopy bench realdocs` and `canopy bench
 * corpus`: the rank gate (`--gate-items`, `--whole-below`, `--min-items`), the glimpse
 * (`--glimpse`) and the node score (`--node-score`). Each becomes the setting of the same name
 * (canopy.compressor.*; core/config/settings.ts), so a flag and the extension's setting run the
 * same code; explicit node-score weights travel with the request instead.
 */
import type { NodeScoreWeights } from '../core/compress/hybridScore';
import type { CanopySettings } from '../core/config/settings';
import { GLIMPSE, ITEM_SHARE, MIN_ITEMS, NODE_SCORE_WEIGHT, WHOLE_BELOW } from '../contracts/askSettings';
import { UsageError } from './io';

export const compressorFlagOptions = {
  'gate-items': { type: 'string' },
  'whole-below': { type: 'string' },
  'min-items': { type: 'string' },
  glimpse: { type: 'string' },
  'node-score': { type: 'string' },
} as const;

export const compressorFlagsHelp = `  --gate-items <share>   CANOPY's rank gate: the share of a round's items kept for their rank
                         (default 0.3; ${ITEM_SHARE.min}–${ITEM_SHARE.max}; 0 = no gate; canopy.compressor.items)
  --whole-below <chars>  with the gate: a kept item of at most this many characters stays whole
                         (default 800; 0 = none; canopy.compressor.wholeBelow)
  --min-items <n>        with the gate: the fewest items kept in all, filled by rank (default 4;
                         canopy.compressor.minItems)
  --glimpse <n>          every region CANOPY drops keeps n of its leaves (default 1): below its
                         parent the best-scoring, outside the gate the best per token (0 = none,
                         the plain rule; canopy.compressor.glimpse)
  --node-score <s>       what CANOPY's rule compares: profile (default: the encoder profile's
                         weights, the built-in one's dense=1,lexical=0.5,model=coverage), dense
                         (the cosine alone; canopy.compressor.nodeScore), or weights
                         dense=<w>,lexical=<w>[,model=coverage|bm25]
                         The design's plain rule: --gate-items 0 --glimpse 0 --node-score dense`;

export type CompressorFlagValues = { [K in keyof typeof compressorFlagOptions]?: string | undefined };

/** The settings and request weights the flags ask for; empty when none is given. */
export interface CompressorFlags {
  settings: Partial<Pick<CanopySettings, 'compressorItems' | 'compressorWholeBelow' | 'compressorMinItems' | 'compressorGlimpse' | 'nodeScore'>>;
  /** Explicit node-score weights (`--node-score dense=…,lexical=…`): the request's, over the profile's. */
  nodeScore?: NodeScoreWeights;
}

/** `dense=1,lexical=0.5[,model=coverage]` as weights; a usage error names the flag otherwise. */
export function parseNodeScore(value: string, flag = '--node-score'): NodeScoreWeights {
  const weights: NodeScoreWeights = { dense: 1, lexical: 0 };
  for (const part of value.split(',')) {
    const model = /^\s*model\s*=\s*(bm25|coverage)\s*$/.exec(part);
    if (model) {
      weights.model = model[1] as 'bm25' | 'coverage';
      continue;
    }
    const m = /^\s*(dense|lexical)\s*=\s*(\d*\.?\d+)\s*$/.exec(part);
    const w = m ? Number(m[2]) : NaN;
    if (!m || !Number.isFinite(w) || w < NODE_SCORE_WEIGHT.min || w > NODE_SCORE_WEIGHT.max) {
      throw new UsageError(`${flag} must be profile, dense, or weights like dense=1,lexical=0.5[,model=coverage] (each ${NODE_SCORE_WEIGHT.min}–${NODE_SCORE_WEIGHT.max}), not "${value}"`);
    }
    weights[m[1] as 'dense' | 'lexical'] = w;
  }
  return weights;
}

function numberIn(value: string, flag: string, min: number, max: number, integer: boolean): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, not "${value}"`);
  }
  return n;
}

export function compressorFlags(values: CompressorFlagValues): CompressorFlags {
  const settings: CompressorFlags['settings'] = {};
  const items = values['gate-items'];
  if (items !== undefined) {
    const n = numberIn(items, '--gate-items', 0, ITEM_SHARE.max, false);
    if (n > 0 && n < ITEM_SHARE.min) throw new UsageError(`--gate-items must be 0 (no gate) or from ${ITEM_SHARE.min} to ${ITEM_SHARE.max}, not "${items}"`);
    settings.compressorItems = n;
  }
  if (values['whole-below'] !== undefined) settings.compressorWholeBelow = numberIn(values['whole-below'], '--whole-below', WHOLE_BELOW.min, WHOLE_BELOW.max, true);
  if (values['min-items'] !== undefined) settings.compressorMinItems = numberIn(values['min-items'], '--min-items', MIN_ITEMS.min, MIN_ITEMS.max, true);
  if (values.glimpse !== undefined) settings.compressorGlimpse = numberIn(values.glimpse, '--glimpse', GLIMPSE.min, GLIMPSE.max, true);
  const ns = values['node-score']?.trim();
  if (ns === undefined) return { settings };
  if (ns === 'profile' || ns === 'dense') return { settings: { ...settings, nodeScore: ns } };
  return { settings, nodeScore: parseNodeScore(ns) };
}

/** The flags again, for a `canopy ask` process a benchmark spawns with the same choices. */
export function compressorFlagArgs(f: CompressorFlags): string[] {
  const s = f.settings;
  const out: string[] = [];
  if (s.compressorItems !== undefined) out.push('--gate-items', String(s.compressorItems));
  if (s.compressorWholeBelow !== undefined) out.push('--whole-below', String(s.compressorWholeBelow));
  if (s.compressorMinItems !== undefined) out.push('--min-items', String(s.compressorMinItems));
  if (s.compressorGlimpse !== undefined) out.push('--glimpse', String(s.compressorGlimpse));
  if (f.nodeScore) out.push('--node-score', `dense=${f.nodeScore.dense},lexical=${f.nodeScore.lexical}${f.nodeScore.model ? `,model=${f.nodeScore.model}` : ''}`);
  else if (s.nodeScore !== undefined) out.push('--node-score', s.nodeScore);
  return out;
}
