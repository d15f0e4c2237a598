/**
 * Array helpers that never spread: `Math.max(...xs)` and `out.push(...xs)` pass every element as
 * a call argument and throw "Maximum call stack size exceeded" past ~100,000 of them — which a
 * hostile or merely large file (a CSV of a million rows, a PDF page of a million glyphs) reaches.
 */

/** Largest `f(x)`; `-Infinity` for an empty array (as `Math.max()`). */
export function maxOf<T>(xs: readonly T[], f: (x: T) => number): number {
  let m = -Infinity;
  for (const x of xs) {
    const v = f(x);
    if (v > m || Number.isNaN(v)) m = v;
  }
  return m;
}

/** Smallest `f(x)`; `Infinity` for an empty array (as `Math.min()`). */
export function minOf<T>(xs: readonly T[], f: (x: T) => number): number {
  let m = Infinity;
  for (const x of xs) {
    const v = f(x);
    if (v < m || Number.isNaN(v)) m = v;
  }
  return m;
}

/** Appends `items` to `out` one by one; returns `out`. */
export function pushAll<T>(out: T[], items: readonly T[]): T[] {
  for (const x of items) out.push(x);
  return out;
}
