/**
 * Renders views into the DOM. Document text is untrusted: everything goes through
 * textContent / DOM APIs, never innerHTML.
 */
import type { PlaceholderView } from '../src/protocol/messages';

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
