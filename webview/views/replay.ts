/**
 * The replay tab: run the shown answer again with other settings — B, k, rounds, compressor,
 * critic — from the trace's cached scores (src/core/engine/replay.ts on the host: no re-embedding, no
 * new retrieval). The replayed trace is shown next, compared with the original.
 */
import type { AskTrace, CompressorSetting } from '../../src/contracts/trace';
import { BRANCHING_FACTOR, COSINE_THRESHOLD, FLAT_M, MAX_ROUNDS, TOP_K, type ReplaySettings } from '../../src/contracts/askSettings';
import type { InspectorContext } from '../context';
import { ce, el } from '../dom';

type Field = HTMLElement & { value: string };

function select(label: string, cls: string, options: Array<[string, string]>, value: string): Field {
  const s = ce('vscode-single-select', { 'aria-label': label, class: cls }) as Field;
  for (const [v, text] of options) s.append(ce('vscode-option', { value: v, selected: v === value }, text));
  return s;
}

function number(label: string, cls: string, value: number, min: number, max: number, step = '1'): Field {
  return ce('vscode-textfield', { type: 'number', 'aria-label': label, class: cls, value: String(value), min: String(min), max: String(max), step }) as Field;
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
  const m = number('m (flat)', 'canopy-replay-m', s.compressor.name === 'flat' ? s.compressor.m : 10, FLAT_M.min, FLAT_M.max);
  const threshold = number('Threshold', 'canopy-replay-threshold', s.compressor.name === 'threshold' ? s.compressor.threshold : 0.3, COSINE_THRESHOLD.min, COSINE_THRESHOLD.max, '0.01');
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
  const field = (label: string, control: HTMLElement) => el('label', { class: 'canopy-field' }, el('span', {}, label), control);

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
      default:
        comp = s.compressor.name === 'canopy' ? s.compressor : { name: 'canopy' };
    }
    if (JSON.stringify(comp) !== JSON.stringify(s.compressor)) settings.compressor = comp;
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

  return el(
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
      field('Compressor', compressor),
      field('m (flat)', m),
      field('Threshold (cosine)', threshold),
      field('Critic', critic),
    ),
    el('div', { class: 'canopy-actions' }, run),
    status,
  );
}
