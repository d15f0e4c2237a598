/**
 * The Training view: the node-adapter checkpoints' before/after report (design §10, §12) — for
 * each checkpoint, newest first, the held-back figures of the untrained and the trained adapter
 * (refinement-decision accuracy, pair accuracy, gold recall, evidence tokens, share of pruned
 * items) with their change, how it was trained (seed, rank, recipe, epoch kept) and whether it
 * is the active one; and, after a run, the split, the §10 preference counts and the retrieval
 * fusion and node-score weights fitted with the adapter (in use vs fitted on the held-back
 * questions, adopted or not). Everything is built with dom.ts (text only).
 */
import type { TrainingCheckpointSummary, TrainingFigures, TrainingPreferenceCounts, TrainingReport, TrainingRunSummary, TrainingScoring } from '../../src/protocol/messages';
import { ce, el, emptyState, fmtInt } from '../dom';

const plural = (n: number, word: string) => `${fmtInt(n)} ${word}${n === 1 ? '' : 's'}`;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const points = (d: number) => `${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs(100 * d).toFixed(1)} pts`;
const percentChange = (before: number, after: number) => {
  if (before === 0) return '—';
  const d = (after - before) / before;
  return `${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs(100 * d).toFixed(1)}%`;
};

interface MetricRow {
  key: string;
  label: string;
  title: string;
  value(f: TrainingFigures): string;
  delta(b: TrainingFigures, a: TrainingFigures): string;
  /** Which direction is better: the change cell says "better"/"worse". */
  better(b: TrainingFigures, a: TrainingFigures): number;
}

const metricRows: MetricRow[] = [
  {
    key: 'decisionAccuracy',
    label: 'Refinement-decision accuracy',
    title: 'Share of the parent/child decisions the projection made on the path to gold that agree with the §10 preferences',
    value: (f) => `${pct(f.decisionAccuracy)} (${fmtInt(f.decisions)})`,
    delta: (b, a) => points(a.decisionAccuracy - b.decisionAccuracy),
    better: (b, a) => a.decisionAccuracy - b.decisionAccuracy,
  },
  {
    key: 'pairAccuracy',
    label: 'Pair accuracy',
    title: 'The same over every §10 pair, whether or not the projection visited its parent',
    value: (f) => `${pct(f.pairAccuracy)} (${fmtInt(f.pairs)})`,
    delta: (b, a) => points(a.pairAccuracy - b.pairAccuracy),
    better: (b, a) => a.pairAccuracy - b.pairAccuracy,
  },
  {
    key: 'goldRecall',
    label: 'Gold recall',
    title: 'Share of gold spans at least half covered by the kept regions',
    value: (f) => `${pct(f.goldRecall)} (${fmtInt(f.goldSpans)} spans)`,
    delta: (b, a) => points(a.goldRecall - b.goldRecall),
    better: (b, a) => a.goldRecall - b.goldRecall,
  },
  {
    key: 'evidenceTokens',
    label: 'Evidence tokens',
    title: 'Tokens of the kept regions (and their share of the whole candidate items)',
    value: (f) => `${fmtInt(f.evidenceTokens)} (${pct(f.tokenShare)} of whole)`,
    delta: (b, a) => percentChange(b.evidenceTokens, a.evidenceTokens),
    better: (b, a) => b.evidenceTokens - a.evidenceTokens,
  },
  {
    key: 'prunedItemShare',
    label: 'Pruned items',
    title: 'Share of candidate items where the projection dropped at least one subtree',
    value: (f) => `${pct(f.prunedItemShare)} (${fmtInt(f.items)} items)`,
    delta: (b, a) => points(a.prunedItemShare - b.prunedItemShare),
    better: () => 0,
  },
];

function figuresTable(caption: string, before: TrainingFigures, after: TrainingFigures, cls: string, columns: [string, string] = ['Untrained', 'Trained']): HTMLElement {
  const table = el('table', { class: `canopy-table canopy-training-figures ${cls}` });
  table.append(
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, ''), el('th', { scope: 'col', class: 'canopy-num' }, columns[0]), el('th', { scope: 'col', class: 'canopy-num' }, columns[1]), el('th', { scope: 'col', class: 'canopy-num' }, 'Change'))),
  );
  const body = el('tbody');
  for (const r of metricRows) {
    const b = r.better(before, after);
    body.append(
      el(
        'tr',
        { 'data-metric': r.key },
        el('th', { scope: 'row', title: r.title }, r.label),
        el('td', { class: 'canopy-num', 'data-side': 'before' }, r.value(before)),
        el('td', { class: 'canopy-num', 'data-side': 'after' }, r.value(after)),
        el('td', { class: `canopy-num canopy-change${b > 0 ? ' better' : b < 0 ? ' worse' : ''}`, 'data-side': 'change' }, r.delta(before, after)),
      ),
    );
  }
  table.append(body);
  return table;
}

function checkpointSection(c: TrainingCheckpointSummary, justTrained: boolean): HTMLElement {
  const heading = el('h2', {}, c.id);
  const badges = el('div', { class: 'canopy-badges' });
  if (c.active) badges.append(ce('vscode-badge', { class: 'canopy-active-badge' }, 'Active'));
  if (justTrained) badges.append(ce('vscode-badge', { class: 'canopy-new-badge' }, 'Just trained'));
  badges.append(el('span', { class: 'canopy-muted' }, c.createdAt.replace('T', ' ').slice(0, 19)));
  const props: Array<[string, string, string]> = [
    ['seed', 'Seed', c.seed !== undefined ? String(c.seed) : '—'],
    ['rank', 'Rank', String(c.rank)],
    ['epoch', 'Epoch kept', c.bestEpoch !== undefined ? `${c.bestEpoch}${c.bestEpoch === 0 ? ' (the untrained identity)' : ''}${c.epochs !== undefined ? ` of ${c.epochs}` : ''}` : '—'],
    ['recipe', 'Recipe', c.recipe ?? '—'],
    ['trained-on', 'Trained on', `${plural(c.trainedOn.questions, 'question')}, ${plural(c.trainedOn.annotations, 'annotation')}, ${plural(c.trainedOn.pairs, 'pair')} (${plural(c.trainedOn.validationPairs, 'validation pair')})`],
    ['held-back', 'Held back', c.heldOutQuestions !== undefined ? plural(c.heldOutQuestions, 'question') : '—'],
    ['encoder', 'Base encoder', c.baseEncoderId],
  ];
  const dl = el('dl', { class: 'canopy-props' });
  for (const [key, k, v] of props) dl.append(el('dt', {}, k), el('dd', { 'data-prop': key }, v));
  const parts: HTMLElement[] = [heading, badges, dl];
  if (c.ask) {
    parts.push(el('p', { class: 'canopy-ask-configuration', 'data-prop': 'ask-configuration' }, `Measured as an ask runs: ${c.ask.configuration} (adapter blend ${c.ask.blend}); before: ${c.ask.configurationBefore}, untrained.`));
    parts.push(figuresTable(`Held-back questions (${fmtInt(c.ask.after.questions)}), the ask's configuration: before vs after`, c.ask.before, c.ask.after, 'canopy-heldout-ask', ['Before', 'After']));
  }
  if (c.before && c.after) parts.push(figuresTable(`Held-back questions (${fmtInt(c.after.questions)})${c.ask ? ', the plain rule (dense cosine, no gate)' : ''}: untrained vs trained`, c.before, c.after, 'canopy-heldout'));
  else parts.push(el('p', { class: 'canopy-muted canopy-no-report' }, 'This checkpoint holds no held-back report.'));
  if (c.validation) parts.push(figuresTable(`Validation questions (${fmtInt(c.validation.after.questions)}) that chose the epoch`, c.validation.before, c.validation.after, 'canopy-validation'));
  return el('section', { class: `canopy-checkpoint${c.active ? ' active' : ''}`, 'data-checkpoint-id': c.id, 'aria-label': `Checkpoint ${c.id}` }, ...parts);
}

function preferenceTable(run: TrainingRunSummary): HTMLElement {
  const table = el('table', { class: 'canopy-table canopy-training-preferences' });
  const cols: Array<[keyof TrainingPreferenceCounts, string]> = [
    ['pairs', 'Pairs'],
    ['refine', 'Refine'],
    ['keepWhole', 'Keep whole'],
    ['identical', 'Identical (left out)'],
    ['itemsWithGold', 'Items with gold'],
    ['itemsWithoutGold', 'Items without gold'],
  ];
  table.append(el('caption', {}, '§10 preference pairs'), el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Questions'), ...cols.map(([, label]) => el('th', { scope: 'col', class: 'canopy-num' }, label)))));
  const body = el('tbody');
  const rows: Array<[string, string, TrainingPreferenceCounts, number]> = [
    ['train', 'Training', run.preferences.train, run.questions.train],
    ['validation', 'Validation', run.preferences.validation, run.questions.validation],
    ['heldOut', 'Held back', run.preferences.heldOut, run.questions.heldOut],
  ];
  for (const [key, label, c, n] of rows) {
    body.append(el('tr', { 'data-split': key }, el('th', { scope: 'row' }, `${label} (${fmtInt(n)})`), ...cols.map(([k]) => el('td', { class: 'canopy-num', 'data-count': k }, fmtInt(c[k])))));
  }
  table.append(body);
  return table;
}

const verdict = (adopted: boolean, reason: string, key: string) =>
  el('p', { class: `canopy-scoring-verdict ${adopted ? 'adopted' : 'kept'}`, 'data-verdict': key }, `${adopted ? 'Adopted' : 'Not adopted'}: ${reason}.`);

/**
 * The fusion and node-score weights fitted with the adapter, each before (in use) and after
 * (fitted) on the held-back questions, and whether it was adopted into the retrieval profile.
 */
function scoringSection(s: TrainingScoring): HTMLElement {
  const f = s.fusion;
  const fusion = el('table', { class: 'canopy-table canopy-scoring-fusion' });
  fusion.append(
    el('caption', {}, `Retrieval fusion: fitted on ${plural(f.questions.train, 'training question')}, measured on ${plural(f.questions.heldBack, 'held-back question')} (over the index)`),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, ''), el('th', { scope: 'col' }, 'In use'), el('th', { scope: 'col' }, 'Fitted'), el('th', { scope: 'col', class: 'canopy-num' }, 'Change'))),
  );
  const fusionBody = el('tbody');
  fusionBody.append(el('tr', { 'data-metric': 'fusion' }, el('th', { scope: 'row' }, 'Fusion'), el('td', { 'data-side': 'before' }, f.before), el('td', { 'data-side': 'after' }, f.after ?? '—'), el('td', {}, '')));
  if (f.heldBack) {
    const d = f.heldBack.after - f.heldBack.before;
    fusionBody.append(
      el(
        'tr',
        { 'data-metric': 'ndcg' },
        el('th', { scope: 'row', title: 'Mean nDCG@10 of the retrieval over the held-back questions (an item is relevant when it overlaps a gold span)' }, 'nDCG@10'),
        el('td', { class: 'canopy-num', 'data-side': 'before' }, f.heldBack.before.toFixed(3)),
        el('td', { class: 'canopy-num', 'data-side': 'after' }, f.heldBack.after.toFixed(3)),
        el('td', { class: `canopy-num canopy-change${d > 0 ? ' better' : d < 0 ? ' worse' : ''}`, 'data-side': 'change' }, `${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs(d).toFixed(3)}`),
      ),
    );
  }
  fusion.append(fusionBody);
  const n = s.nodeScore;
  const weights = el('dl', { class: 'canopy-props canopy-scoring-weights' }, el('dt', {}, 'In use'), el('dd', { 'data-prop': 'node-before' }, n.before), el('dt', {}, 'Fitted'), el('dd', { 'data-prop': 'node-after' }, n.after));
  const parts: HTMLElement[] = [el('h3', {}, 'Retrieval fusion'), fusion, verdict(f.adopted, f.reason, 'fusion'), el('h3', {}, 'Node scores (CANOPY rule)'), weights];
  if (n.heldBack) parts.push(figuresTable(`Held-back questions (${fmtInt(n.heldBack.after.questions)}): node scores in use vs fitted`, n.heldBack.before, n.heldBack.after, 'canopy-scoring-node', ['In use', 'Fitted']));
  parts.push(verdict(n.adopted, n.reason, 'node-score'));
  parts.push(el('p', { class: 'canopy-muted canopy-scoring-profile' }, s.profileFile ? `Written to ${s.profileFile}; later questions with this encoder use it.` : 'The retrieval profile was not changed.'));
  return el('section', { class: 'canopy-training-scoring', 'aria-label': 'Scoring weights fitted with the adapter' }, el('h2', {}, 'Retrieval and node scores'), ...parts);
}

function runSection(run: TrainingRunSummary): HTMLElement {
  const a = run.annotations;
  const q = run.questions;
  const prune = run.prunePairs.train + run.prunePairs.validation > 0 ? ` Prune-sibling pairs added: ${fmtInt(run.prunePairs.train)} training, ${fmtInt(run.prunePairs.validation)} validation.` : '';
  return el(
    'section',
    { class: 'canopy-training-run', 'aria-label': 'Last training run' },
    el('h2', {}, 'Last run'),
    el(
      'p',
      { class: 'canopy-training-split' },
      `${plural(a.total, 'annotation')} (${fmtInt(a.lost)} lost, ${plural(a.corrupt, 'corrupt line')}) · ${plural(q.total, 'question')}: ${fmtInt(q.train)} training, ${fmtInt(q.validation)} validation, ${fmtInt(q.heldOut)} held back.${prune}`,
    ),
    preferenceTable(run),
    ...(run.ask ? [askSection(run.ask)] : []),
    ...(run.scoring ? [scoringSection(run.scoring)] : []),
    ...(run.reader ? [readerSection(run.reader)] : []),
  );
}

/**
 * What the user's ask gets (issue 36): the configuration in use and the one fitted to the gold,
 * measured on the held-back questions the way an ask compresses, the plain rule's figures beside,
 * and whether it was adopted (a checkpoint and profile are written only then).
 */
function askSection(a: NonNullable<TrainingRunSummary['ask']>): HTMLElement {
  const props = el('dl', { class: 'canopy-props canopy-ask-props' }, el('dt', {}, 'In use'), el('dd', { 'data-prop': 'ask-before' }, a.before), el('dt', {}, 'Fitted'), el('dd', { 'data-prop': 'ask-after' }, `${a.after}; adapter blend ${a.blend}`));
  const parts: HTMLElement[] = [props];
  if (a.heldBack) {
    parts.push(figuresTable(`Held-back questions (${fmtInt(a.heldBack.after.questions)}), the ask's configuration: in use vs fitted`, a.heldBack.before, a.heldBack.after, 'canopy-ask-heldout', ['In use', 'Fitted']));
    parts.push(figuresTable(`The same questions, the plain rule (dense cosine, no gate): untrained vs trained`, a.heldBack.plainBefore, a.heldBack.plainAfter, 'canopy-ask-plain'));
  }
  parts.push(verdict(a.adopted, a.reason, 'ask'));
  if (a.checkpointSkipped) parts.push(el('p', { class: 'canopy-muted canopy-ask-skipped' }, a.checkpointSkipped));
  return el('section', { class: 'canopy-training-ask', 'aria-label': "What the ask keeps" }, el('h2', {}, "What the ask keeps"), ...parts);
}

/** The reader model fitted to the gold spans: [1] on a gold span on the held-back questions, before and after, and whether it is in use. */
function readerSection(r: NonNullable<TrainingRunSummary['reader']>): HTMLElement {
  const figures = `[1] on a gold span for ${fmtInt(r.before)}${r.after !== undefined ? ` → ${fmtInt(r.after)}` : ''} of ${plural(r.heldBack, 'held-back question')}`;
  return el(
    'section',
    { class: 'canopy-training-reader', 'aria-label': 'Reader model fitted to the gold spans' },
    el('h2', {}, 'Reader model'),
    el('p', { class: `canopy-scoring-verdict ${r.written ? 'adopted' : 'kept'}`, 'data-verdict': 'reader' }, `${r.written ? `Adopted (${r.written})` : `Not adopted; ${r.base} stays`}: ${figures}. ${r.reason}.`),
  );
}

/** The Training view for a report. `back` is a button returning to the answer, when there is one. */
export function renderTraining(report: TrainingReport, back?: HTMLElement): HTMLElement[] {
  const header = el('header', { class: 'canopy-header' }, el('h1', {}, 'Node adapter training'));
  const active = report.checkpoints.find((c) => c.active);
  const status = el('p', { class: 'canopy-training-active' }, active ? `Questions use the adapter ${active.id}.` : 'Questions use the untrained encoder.');
  const parts: HTMLElement[] = [header];
  if (back) parts.push(el('div', { class: 'canopy-toolbar' }, back));
  parts.push(status);
  if (report.activeNote) parts.push(el('p', { class: 'canopy-note', role: 'note' }, report.activeNote));
  if (report.lastRun) parts.push(runSection(report.lastRun));
  if (report.checkpoints.length === 0) {
    parts.push(emptyState('No adapter trained yet.', 'Mark gold evidence for a few questions, then run “Canopy: Train Node Adapter on Gold Evidence”: its before/after report on held-back questions appears here.'));
    return parts;
  }
  const list = el('div', { class: 'canopy-checkpoints', role: 'list' });
  for (const c of report.checkpoints) {
    const s = checkpointSection(c, c.id === report.lastRun?.checkpointId);
    s.setAttribute('role', 'listitem');
    list.append(s);
  }
  parts.push(list);
  return parts;
}
