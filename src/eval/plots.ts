/**
 * The harness's figures as self-contained SVG strings (no plotting library): the quality–token
 * curve (flat top-m as a line, CANOPY variants, thresholds, the peer and the uncompressed
 * baseline as labelled points, 95% intervals as whiskers) and recall by round. Text is escaped;
 * colours come from a fixed, colour-blind-safe palette (Okabe–Ito).
 */
import type { Interval } from './bootstrap';
import type { CurvePoint } from './report';

const W = 860;
const H = 480;
const M = { left: 70, right: 270, top: 52, bottom: 58 };

const palette: Record<string, string> = {
  flat: '#0072B2',
  canopy: '#D55E00',
  none: '#000000',
  threshold: '#009E73',
  peer: '#CC79A7',
  other: '#E69F00',
};

export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** "Nice" axis ticks covering [lo, hi]. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((s) => s * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toFixed(10)));
  return out;
}

interface Scale {
  (v: number): number;
  ticks: number[];
}

function scale(lo: number, hi: number, from: number, to: number): Scale {
  const ticks = niceTicks(lo, hi);
  const a = Math.min(lo, ticks[0] ?? lo);
  const b = Math.max(hi, ticks[ticks.length - 1] ?? hi);
  const f = ((v: number) => from + ((v - a) / (b - a || 1)) * (to - from)) as Scale;
  f.ticks = ticks;
  return f;
}

function frame(title: string, subtitle: string, xLabel: string, yLabel: string, x: Scale, y: Scale, xFmt: (v: number) => string, yFmt: (v: number) => string): string[] {
  const out: string[] = [];
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="22" font-size="16" font-weight="600">${escapeXml(title)}</text>`);
  if (subtitle) out.push(`<text x="${M.left}" y="38" font-size="11" fill="#555">${escapeXml(subtitle)}</text>`);
  for (const t of y.ticks) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 8}" y="${(y(t) + 4).toFixed(1)}" font-size="11" text-anchor="end">${escapeXml(yFmt(t))}</text>`);
  }
  for (const t of x.ticks) {
    out.push(`<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${M.top}" y2="${H - M.bottom}" stroke="#f0f0f0"/>`);
    out.push(`<text x="${x(t).toFixed(1)}" y="${H - M.bottom + 16}" font-size="11" text-anchor="middle">${escapeXml(xFmt(t))}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#888"/>`);
  out.push(`<text x="${(M.left + W - M.right) / 2}" y="${H - 14}" font-size="12" text-anchor="middle">${escapeXml(xLabel)}</text>`);
  out.push(`<text transform="translate(18 ${(M.top + H - M.bottom) / 2}) rotate(-90)" font-size="12" text-anchor="middle">${escapeXml(yLabel)}</text>`);
  return out;
}

function wrap(body: string[], title: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" role="img" aria-label="${escapeXml(title)}">`,
    `<title>${escapeXml(title)}</title>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function marker(shape: string, cx: number, cy: number, color: string): string {
  const s = 5;
  switch (shape) {
    case 'diamond':
      return `<path d="M${cx} ${cy - s - 1}L${cx + s + 1} ${cy}L${cx} ${cy + s + 1}L${cx - s - 1} ${cy}Z" fill="${color}"/>`;
    case 'square':
      return `<rect x="${cx - s}" y="${cy - s}" width="${2 * s}" height="${2 * s}" fill="${color}"/>`;
    case 'triangle':
      return `<path d="M${cx} ${cy - s - 1}L${cx + s + 1} ${cy + s}L${cx - s - 1} ${cy + s}Z" fill="${color}"/>`;
    default:
      return `<circle cx="${cx}" cy="${cy}" r="${s}" fill="${color}"/>`;
  }
}

const shapes: Record<string, string> = { canopy: 'diamond', peer: 'square', threshold: 'triangle', none: 'circle' };

/** Gold-evidence recall (y, %) against evidence tokens per question (x). */
export function qualityTokenSvg(points: CurvePoint[], options: { title: string; subtitle?: string; yLabel?: string }): string {
  const finite = points.filter((p) => Number.isFinite(p.tokens.value) && Number.isFinite(p.recall.value));
  const xs = finite.flatMap((p) => [p.tokens.lo, p.tokens.hi, p.tokens.value]).filter(Number.isFinite);
  const ys = finite.flatMap((p) => [p.recall.lo, p.recall.hi, p.recall.value]).filter(Number.isFinite);
  const x = scale(0, Math.max(1, ...xs) * 1.05, M.left, W - M.right);
  const y = scale(Math.max(0, Math.min(...ys, 1) - 0.05), Math.min(1, Math.max(...ys, 0) + 0.03), H - M.bottom, M.top);
  const body = frame(options.title, options.subtitle ?? '', 'evidence tokens per question (cl100k_base), mean', options.yLabel ?? 'gold-evidence recall', x, y, (v) => v.toFixed(0), (v) => `${(100 * v).toFixed(0)}%`);
  const flat = finite.filter((p) => p.family === 'flat').sort((a, b) => a.tokens.value - b.tokens.value);
  if (flat.length > 1) {
    body.push(`<polyline fill="none" stroke="${palette.flat}" stroke-width="2" points="${flat.map((p) => `${x(p.tokens.value).toFixed(1)},${y(p.recall.value).toFixed(1)}`).join(' ')}"/>`);
  }
  // Flat points are labelled m=… beside the line; every other point gets a number, explained in
  // the list on the right (long names beside crowded points are unreadable).
  const others = finite.filter((p) => p.family !== 'flat');
  for (const p of finite) {
    const color = palette[p.family] ?? palette.other!;
    const px = x(p.tokens.value);
    const py = y(p.recall.value);
    if (Number.isFinite(p.recall.lo)) body.push(`<line x1="${px.toFixed(1)}" x2="${px.toFixed(1)}" y1="${y(p.recall.lo).toFixed(1)}" y2="${y(p.recall.hi).toFixed(1)}" stroke="${color}" stroke-width="1.2" opacity="0.55"/>`);
    if (Number.isFinite(p.tokens.lo)) body.push(`<line x1="${x(p.tokens.lo).toFixed(1)}" x2="${x(p.tokens.hi).toFixed(1)}" y1="${py.toFixed(1)}" y2="${py.toFixed(1)}" stroke="${color}" stroke-width="1.2" opacity="0.55"/>`);
  }
  for (const p of finite) {
    const color = palette[p.family] ?? palette.other!;
    const px = Number(x(p.tokens.value).toFixed(1));
    const py = Number(y(p.recall.value).toFixed(1));
    body.push(marker(shapes[p.family] ?? 'circle', px, py, color));
    if (p.family === 'flat') body.push(`<text x="${(px + 6).toFixed(1)}" y="${(py + 14).toFixed(1)}" font-size="10" fill="${color}">m=${p.m}</text>`);
    else body.push(`<text x="${(px + 7).toFixed(1)}" y="${(py - 6).toFixed(1)}" font-size="11" font-weight="600" fill="${color}">${others.indexOf(p) + 1}</text>`);
  }
  let ly = M.top + 8;
  const lx = W - M.right + 16;
  if (flat.length > 0) {
    body.push(`<line x1="${lx - 6}" x2="${lx + 8}" y1="${ly}" y2="${ly}" stroke="${palette.flat}" stroke-width="2"/>`);
    body.push(marker('circle', lx + 1, ly, palette.flat!));
    body.push(`<text x="${lx + 16}" y="${ly + 4}" font-size="11">flat top-m leaves (m = …)</text>`);
    ly += 20;
  }
  others.forEach((p, i) => {
    const color = palette[p.family] ?? palette.other!;
    body.push(marker(shapes[p.family] ?? 'circle', lx + 1, ly, color));
    body.push(`<text x="${lx + 16}" y="${ly + 4}" font-size="11"><tspan font-weight="600" fill="${color}">${i + 1}</tspan> ${escapeXml(p.family === 'peer' ? `${p.config} (vectra)` : p.config)}</text>`);
    ly += 18;
  });
  body.push(`<text x="${lx - 6}" y="${ly + 10}" font-size="10" fill="#555">whiskers: 95% paired bootstrap</text>`);
  return wrap(body, options.title);
}

/** One line per configuration: the metric (y, %) after each round (x); optional dashed reference levels. */
export function recallByRoundSvg(
  series: Array<{ config: string; values: Interval[] }>,
  options: { title: string; subtitle?: string; yLabel: string; references?: Array<{ label: string; value: Interval }> },
): string {
  const rounds = Math.max(1, ...series.map((s) => s.values.length));
  const refs = options.references ?? [];
  const ys = [...series.flatMap((s) => s.values.flatMap((v) => [v.lo, v.hi, v.value])), ...refs.map((r) => r.value.value)].filter(Number.isFinite);
  const x = scale(1, Math.max(2, rounds), M.left + 30, W - M.right - 30);
  x.ticks = Array.from({ length: Math.max(2, rounds) }, (_, i) => i + 1);
  const y = scale(Math.max(0, Math.min(...ys, 1) - 0.05), Math.min(1, Math.max(...ys, 0) + 0.05), H - M.bottom, M.top);
  const body = frame(options.title, options.subtitle ?? '', 'round', options.yLabel, x, y, (v) => String(v), (v) => `${(100 * v).toFixed(0)}%`);
  const colors = ['#D55E00', '#0072B2', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
  let ly = M.top + 8;
  const lx = W - M.right + 16;
  refs.forEach((r) => {
    const py = y(r.value.value).toFixed(1);
    body.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${py}" y2="${py}" stroke="#777" stroke-dasharray="5 4"/>`);
    body.push(`<text x="${M.left + 6}" y="${(Number(py) - 4).toFixed(1)}" font-size="10" fill="#555">${escapeXml(`${r.label}: ${(100 * r.value.value).toFixed(1)}%`)}</text>`);
  });
  series.forEach((s, i) => {
    const color = colors[i % colors.length]!;
    // Series that coincide are offset sideways a little so each stays visible.
    const dx = (i - (series.length - 1) / 2) * 6;
    const pts = s.values.map((v, r) => ({ px: x(r + 1) + dx, v }));
    if (pts.length > 1) body.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((p) => `${p.px.toFixed(1)},${y(p.v.value).toFixed(1)}`).join(' ')}"/>`);
    for (const p of pts) {
      if (Number.isFinite(p.v.lo)) body.push(`<line x1="${p.px.toFixed(1)}" x2="${p.px.toFixed(1)}" y1="${y(p.v.lo).toFixed(1)}" y2="${y(p.v.hi).toFixed(1)}" stroke="${color}" opacity="0.6"/>`);
      body.push(marker('circle', Number(p.px.toFixed(1)), Number(y(p.v.value).toFixed(1)), color));
    }
    const last = pts[pts.length - 1];
    if (last) body.push(`<text x="${(last.px + 8).toFixed(1)}" y="${(y(last.v.value) + 4).toFixed(1)}" font-size="10" fill="${color}">${(100 * last.v.value).toFixed(1)}%</text>`);
    body.push(`<line x1="${lx - 6}" x2="${lx + 10}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    body.push(`<text x="${lx + 16}" y="${ly + 4}" font-size="10.5">${escapeXml(s.config)}</text>`);
    ly += 18;
  });
  body.push(`<text x="${lx - 6}" y="${ly + 10}" font-size="10" fill="#555">whiskers: 95% paired bootstrap</text>`);
  return wrap(body, options.title);
}
