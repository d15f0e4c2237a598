/**
 * The only way the inspector builds DOM: elements from tag names, attributes and text set with
 * textContent. Document text is untrusted input — it never reaches innerHTML, outerHTML,
 * insertAdjacentHTML, a `style` attribute, an event-handler attribute or a URL.
 */

type Child = Node | string | undefined | null | false;

/** An element with attributes (names from code, values set as plain strings) and text/children. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, v);
  for (const c of children) if (c !== undefined && c !== null && c !== false) node.append(c);
  return node;
}

/** A custom element (the @vscode-elements components) by tag name. */
export function ce(tag: string, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== undefined && c !== null && c !== false) node.append(c);
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element; attribute values are numbers or names computed by the inspector. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number | undefined> = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined && c !== null && c !== false) node.append(c);
  return node;
}

/** A native button (keyboard reachable by default). */
export function button(label: string, onClick: (ev: MouseEvent) => void, attrs: Record<string, string | undefined> = {}): HTMLButtonElement {
  const b = el('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', onClick);
  return b;
}

export function fmtScore(v: number | undefined, digits = 3): string {
  return v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits);
}

export function fmtDelta(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return '—';
  const s = v.toFixed(digits);
  // A difference that rounds to nothing has no sign ("0.000", not "-0.000" or "+0.000").
  if (Number(s) === 0) return (0).toFixed(digits);
  return v > 0 ? `+${s}` : s;
}

/** 12345 → "12,345" (by hand: toLocaleString costs too much for thousands of rows). */
export function fmtInt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '—';
  const n = Math.round(v);
  const digits = String(Math.abs(n));
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? `-${out}` : out;
}

export function clip(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

/** A number clamped to [0, 1], for widths of bars (never NaN). */
export function unit(v: number): number {
  return Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
}

/** An "empty state" block: what is missing and what will fill it. */
export function emptyState(title: string, message: string): HTMLElement {
  return el('div', { class: 'canopy-empty', role: 'status' }, el('p', { class: 'canopy-empty-title' }, title), el('p', {}, message));
}
