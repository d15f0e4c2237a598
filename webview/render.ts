/**
 * Renders views into the DOM. Document text is untrusted: everything goes through
 * textContent / DOM APIs, never innerHTML.
 */
import type { IndexingProgress, PlaceholderView } from '../src/protocol/messages';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

export function renderPlaceholder(root: HTMLElement, view: PlaceholderView): void {
  const header = el('header');
  header.append(el('h1', {}, view.title));
  const body = el('section', { class: 'canopy-placeholder', 'aria-label': 'Status' });
  body.append(el('p', { class: 'canopy-message' }, view.message));
  if (view.corpus) {
    const c = view.corpus;
    const summary = el('section', { class: 'canopy-corpus', 'aria-label': 'Indexed corpus' });
    summary.append(el('h2', {}, 'Indexed corpus'));
    summary.append(el('p', { class: 'canopy-corpus-root' }, c.root));
    const table = el('table', { class: 'canopy-formats' });
    const head = el('tr');
    head.append(el('th', { scope: 'col' }, 'Format'), el('th', { scope: 'col' }, 'Files'));
    table.append(head);
    for (const [format, count] of Object.entries(c.byFormat).sort()) {
      const row = el('tr');
      row.append(el('td', {}, format), el('td', {}, String(count)));
      table.append(row);
    }
    summary.append(el('p', { class: 'canopy-corpus-total' }, `${c.files} files`), table);
    body.append(summary);
  }
  root.replaceChildren(header, body);
  root.dataset.state = 'ready';
}

export function renderError(root: HTMLElement, message: string): void {
  const box = el('div', { class: 'canopy-error', role: 'alert' }, message);
  root.prepend(box);
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** "Indexing the workspace: 12 of 40 files · reports/annual.pdf: page 30 of 138". */
export function indexingText(p: IndexingProgress): string {
  if (!p.running) return `Indexing done: ${fmt(p.files.total)} file(s).`;
  const files = p.files.total > 0 ? `${fmt(p.files.done)} of ${fmt(p.files.total)} files` : 'finding files';
  const part = p.part ? (p.part.step === 'pages' ? `page ${fmt(p.part.done)} of ${fmt(p.part.total)}` : `encoding ${fmt(p.part.done)} of ${fmt(p.part.total)} sentences, rows and tables`) : '';
  const file = p.file ? ` · ${p.file}${part ? `: ${part}` : ''}` : '';
  return `Indexing the workspace: ${files}${file}${p.questionWaiting ? ' — your question is answered when it is done' : ''}`;
}

/**
 * The index run's progress, in a bar above the inspector (outside #app, so whatever the inspector
 * paints keeps it); removed when the run ends.
 */
export function renderIndexing(root: HTMLElement, p: IndexingProgress): void {
  let bar = document.getElementById('canopy-indexing');
  if (!p.running) {
    bar?.remove();
    return;
  }
  if (!bar) {
    bar = el('div', { id: 'canopy-indexing', class: 'canopy-indexing', role: 'status' });
    root.before(bar);
  }
  const text = el('p', { class: 'canopy-indexing-text' }, indexingText(p));
  const meter = el('progress', { class: 'canopy-indexing-meter', max: String(Math.max(1, p.files.total)), 'aria-label': 'Files indexed' });
  // Within a file, the file's own share of the bar.
  const within = p.part && p.part.total > 0 ? p.part.done / p.part.total : 0;
  (meter as HTMLProgressElement).value = p.files.total > 0 ? Math.min(p.files.total, p.files.done + within) : 0;
  bar.replaceChildren(text, meter);
  bar.dataset.files = `${p.files.done}/${p.files.total}`;
}
