/**
 * The replay tab: run the shown answer again with other settings — B, k, rounds, compressor,
 * critic — from the trace's cached scores (src/core/engine/replay.ts on the host: no re-embedding, no
 * new retrieval). The form offers exactly the chosen compressor's settings: CANOPY's item gate,
 * rank gate (share of items, whole below, at least) and glimpse; flat's m; the threshold's
 * threshold; nothing for none. The replayed trace is shown next, compared with the original.
 */
import type { AskTrace, CompressorSetting } from '../../src/contracts/trace';
import { BRANCHING_FACTOR, COSINE_THRESHOLD, FLAT_M, GLIMPSE, ITEM_GATE, ITEM_SHARE, MAX_ROUNDS, MIN_ITEMS, TOP_K, WHOLE_BELOW, type ReplaySettings } from '../../src/contracts/askSettings';
import type { InspectorContext } from '../context';
import { ce, el } from '../dom';
import { stopReasonText } from './critic';

type Field = HTMLElement & { value: string };

function select(label: string, cls: string, options: Array<[string, string]>, value: string): Field {
  const s = ce('vscode-single-select', { 'aria-label': label, label, class: cls }) as Field;
  for (const [v, text] of options) s.append(ce('vscode-option', { value: v, selected: v === value }, text));
  return s;
}

function number(label: string, cls: string, value: number | undefined, min: number, max: number, step = '1', placeholder?: string): Field {
  return ce('vscode-textfield', {
    type: 'number',
    'aria-label': label,
    class: cls,
    value: value === undefined ? '' : String(value),
    min: String(min),
    max: String(max),
    step,
    ...(placeholder ? { placeholder } : {}),
  }) as Field;
}

/** A number field's value, or undefined when left empty (the setting is off). */
function optional(f: Field): number | undefined {
  return f.value.trim() === '' ? undefined : Number(f.value);
}

export function renderReplay(ctx: InspectorContext, onReplayed: (original: AskTrace, replayed: AskTrace) => void): HTMLElement {
  const t = ctx.model.trace;
  const s = t.settings;
  const bValues = Array.from({ length: BRANCHING_FACTOR.max - BRANCHING_FACTOR.min + 1 }, (_, i) => String(BRANCHING_FACTOR.min + i));
  const b = select('Branching factor B', 'canopy-replay-b', bValues.map((v) => [v, v]), String(s.branchingFactor));
  const k = number('Items per round k', 'canopy-replay-k', s.topK, TOP_K.min, TOP_K.max);
  const rounds = number('Rounds', 'canopy-replay-rounds', s.maxRounds, MAX_ROUNDS.min, MAX_ROUNDS.max);
  const compressor = select(
    'Compressor',
    'canopy-replay-compressor',
    [
      ['canopy', 'CANOPY projection'],
      ['none', 'None (whole items)'],
      ['flat', 'Flat top-m leaves'],
      ['threshold', 'Score threshold'],
    ],
    s.compressor.name,
  );
  const m = number('m: leaves kept per item', 'canopy-replay-m', s.compressor.name === 'flat' ? s.compressor.m : 10, FLAT_M.min, FLAT_M.max);
  const threshold = number('Threshold (cosine)', 'canopy-replay-threshold', s.compressor.name === 'threshold' ? s.compressor.threshold : 0.3, COSINE_THRESHOLD.min, COSINE_THRESHOLD.max, '0.01');
  const cs = s.compressor.name === 'canopy' ? s.compressor : undefined;
  const itemGate = number('Item gate (score margin)', 'canopy-replay-item-gate', cs?.itemGate, ITEM_GATE.min, ITEM_GATE.max, '0.01', 'off');
  const items = number('Rank gate: share of items', 'canopy-replay-items', cs?.items, ITEM_SHARE.min, ITEM_SHARE.max, '0.05', 'off');
  const wholeBelow = number('Rank gate: whole below (characters)', 'canopy-replay-whole-below', cs?.wholeBelow, WHOLE_BELOW.min, WHOLE_BELOW.max, '50', 'off');
  const minItems = number('Rank gate: at least (items)', 'canopy-replay-min-items', cs?.minItems, MIN_ITEMS.min, MIN_ITEMS.max, '1', '1');
  const glimpse = number('Glimpse: leaves kept of each dropped region', 'canopy-replay-glimpse', cs?.glimpse, GLIMPSE.min, GLIMPSE.max, '1', '0');
  const critic = select(
    'Critic',
    'canopy-replay-critic',
    [
      ['rule', 'Rule critic (re-run)'],
      ['recorded', 'Recorded verdicts'],
      ['none', 'No critic (one round)'],
    ],
    s.critic === 'llm' ? 'recorded' : s.critic === 'none' ? 'none' : 'rule',
  );
  const status = el('p', { class: 'canopy-replay-status', role: 'status' });
  const run = ce('vscode-button', { class: 'canopy-replay-run' }, 'Replay');
  const field = (label: string, control: HTMLElement, compressors?: string) => el('label', { class: 'canopy-field', ...(compressors ? { 'data-compressor': compressors } : {}) }, el('span', {}, label), control);

  run.addEventListener('click', async () => {
    const settings: ReplaySettings = {};
    const bv = Number(b.value);
    if (bv !== s.branchingFactor) settings.branchingFactor = bv;
    const kv = Number(k.value);
    if (kv !== s.topK) settings.topK = kv;
    const rv = Number(rounds.value);
    if (rv !== s.maxRounds) settings.maxRounds = rv;
    let comp: CompressorSetting;
    switch (compressor.value) {
      case 'none':
        comp = { name: 'none' };
        break;
      case 'flat':
        comp = { name: 'flat', m: Number(m.value) };
        break;
      case 'threshold':
        comp = { name: 'threshold', threshold: Number(threshold.value) };
        break;
      default: {
        const c: Extract<CompressorSetting, { name: 'canopy' }> = { name: 'canopy' };
        const set = (key: 'itemGate' | 'items' | 'wholeBelow' | 'minItems' | 'glimpse', f: Field) => {
          const v = optional(f);
          if (v !== undefined) c[key] = v;
        };
        set('itemGate', itemGate);
        set('items', items);
        set('wholeBelow', wholeBelow);
        set('minItems', minItems);
        set('glimpse', glimpse);
        comp = c;
      }
    }
    // The recorded compressor as a replay may name it (`glimpseFloor` is an evaluation setting), to see whether it changed.
    const recorded = cs ? Object.fromEntries(Object.entries(cs).filter(([k]) => k !== 'glimpseFloor')) : s.compressor;
    if (JSON.stringify(comp) !== JSON.stringify(recorded)) settings.compressor = comp;
    settings.critic = critic.value as 'rule' | 'none' | 'recorded';
    status.textContent = 'Replaying from the cached scores…';
    run.setAttribute('disabled', '');
    try {
      const { trace } = await ctx.request('trace/replay', { traceId: t.id, settings });
      status.textContent = '';
      onReplayed(t, trace);
    } catch (err) {
      status.textContent = `Replay failed: ${(err as Error).message}`;
    } finally {
      run.removeAttribute('disabled');
    }
  });

  const view = el(
    'div',
    { class: 'canopy-replay-view' },
    el(
      'p',
      { class: 'canopy-muted' },
      'Replays re-run compression, the critic and the reader over this trace’s cached scores. Nothing is re-embedded; a larger k or another B reads node vectors from the index’s embedding cache; a critic that asks for a query the trace never ran stops the replay there.',
    ),
    el(
      'div',
      { class: 'canopy-replay-form', role: 'group', 'aria-label': 'Replay settings' },
      field('Branching factor B', b),
      field('Items per round k', k),
      field('Rounds', rounds),
      field('Critic', critic),
      field('Compressor', compressor),
      field('Item gate (score margin; empty: off)', itemGate, 'canopy'),
      field('Rank gate: share of items (empty: off)', items, 'canopy'),
      field('Rank gate: keep whole below (characters)', wholeBelow, 'canopy'),
      field('Rank gate: at least (items)', minItems, 'canopy'),
      field('Glimpse: leaves kept of a dropped region', glimpse, 'canopy'),
      field('m: leaves kept per item', m, 'flat'),
      field('Threshold (cosine)', threshold, 'threshold'),
    ),
    el('div', { class: 'canopy-actions' }, run),
    status,
    el('p', { class: 'canopy-muted canopy-replay-diverged' }, `If a replay ends with “replay-diverged”: ${stopReasonText['replay-diverged']}.`),
  );
  // Only the chosen compressor's settings are shown.
  const showFields = (name: string) => {
    for (const f of view.querySelectorAll<HTMLElement>('.canopy-field[data-compressor]')) f.hidden = f.dataset.compressor !== name;
  };
  compressor.addEventListener('change', () => showFields(compressor.value));
  // The select has no value until it is upgraded and connected: start from the trace's compressor.
  showFields(s.compressor.name);
  return view;
}
