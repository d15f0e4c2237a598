/**
 * Renders an answer from its trace: the question, the answer with its mode and citation chips
 * (which open the source at the exact range), token totals, and per round the items with what
 * was kept and dropped. Everything from the trace is untrusted text: DOM APIs only.
 */
import type { AskTrace, TraceCitation, TraceNode } from '../src/core/trace/schema';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

export type OpenCitation = (citation: TraceCitation) => void;

function countDecisions(tree: TraceNode | undefined): { dropped: number; nodes: number } {
  let dropped = 0;
  let nodes = 0;
  const walk = (n: TraceNode) => {
    nodes++;
    if (n.decision === 'dropped-sibling' || n.decision === 'dropped-by-baseline') dropped++;
    n.children.forEach(walk);
  };
  if (tree) walk(tree);
  return { dropped, nodes };
}

export function citationLabel(c: TraceCitation): string {
  const a = c.anchor;
  if (a.page !== undefined) return `${c.file} p.${a.page + 1}`;
  if (a.timeStart !== undefined) return `${c.file} @${Math.round(a.timeStart)}s`;
  if (a.startLine !== undefined) return `${c.file}:${a.startLine}`;
  return c.file;
}

export function renderTrace(root: HTMLElement, trace: AskTrace, open: OpenCitation): void {
  const header = el('header');
  header.append(el('h1', {}, trace.question));

  const answer = el('section', { class: 'canopy-answer', 'aria-label': 'Answer' });
  const mode = trace.answer.mode === 'llm' ? `LLM reader${trace.answer.model ? ` (${trace.answer.model})` : ''}` : 'Extractive reader — no LLM configured';
  answer.append(el('p', { class: 'canopy-mode' }, mode));
  answer.append(el('p', { class: 'canopy-answer-text' }, trace.answer.text));
  const chips = el('div', { class: 'canopy-citations', role: 'list', 'aria-label': 'Citations' });
  for (const c of trace.answer.citations) {
    const chip = el('button', { class: 'canopy-citation', role: 'listitem', type: 'button', title: c.text }, `[${c.marker}] ${citationLabel(c)}`);
    chip.addEventListener('click', () => open(c));
    chips.append(chip);
  }
  answer.append(chips);

  const t = trace.totals;
  const saved = t.uncompressedTokens > 0 ? Math.round(100 * (1 - t.evidenceTokens / t.uncompressedTokens)) : 0;
  const totals = el(
    'p',
    { class: 'canopy-totals' },
    `${t.evidenceTokens} of ${t.uncompressedTokens} evidence tokens kept (${saved}% fewer) · ${t.items} items · ${t.keptRegions} regions · ` +
      `${trace.rounds.length} round(s), stop: ${trace.stop.reason}`,
  );

  const rounds = el('section', { class: 'canopy-rounds', 'aria-label': 'Rounds' });
  for (const r of trace.rounds) {
    const box = el('section', { class: 'canopy-round', 'data-round': String(r.round) });
    box.append(el('h2', {}, `Round ${r.round}`), el('p', { class: 'canopy-query' }, r.query));
    const list = el('ol', { class: 'canopy-items' });
    for (const it of r.retrieved) {
      const { dropped } = countDecisions(it.tree);
      const li = el('li', { class: it.repeated ? 'canopy-item repeated' : 'canopy-item', 'data-item': it.itemId });
      li.append(el('span', { class: 'canopy-item-title' }, `${it.title} — ${it.file}`));
      li.append(
        el(
          'span',
          { class: 'canopy-item-stats' },
          it.repeated ? ' already in the evidence' : ` kept ${it.keptNodeIds.length} region(s), ${it.tokens.kept}/${it.tokens.whole} tokens, dropped ${dropped}`,
        ),
      );
      list.append(li);
    }
    box.append(list);
    if (r.critic) {
      box.append(
        el('p', { class: 'canopy-critic' }, `Critic (${r.critic.source}): ${r.critic.sufficient ? 'sufficient' : `missing ${r.critic.missing.join(', ') || '—'}`}`),
      );
    }
    rounds.append(box);
  }
  root.replaceChildren(header, answer, totals, rounds);
  root.dataset.state = 'trace';
}

export function renderBusy(root: HTMLElement, question: string): void {
  const header = el('header');
  header.append(el('h1', {}, question));
  root.replaceChildren(header, el('p', { class: 'canopy-status', role: 'status' }, 'Answering…'));
  root.dataset.state = 'busy';
}
