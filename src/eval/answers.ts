/**
 * Answer strings: HotpotQA's official normalisation (lower case, punctuation and the articles
 * a/an/the removed, whitespace collapsed), exact match and token F1 as its evaluation script
 * computes them (yes/no/noanswer only match exactly), and "answer-bearing": the normalised answer
 * occurs in the normalised evidence text at token boundaries.
 */

export function normalizeAnswer(s: string): string {
  let t = s.toLowerCase();
  t = t.replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '');
  t = t.replace(/\b(a|an|the)\b/g, ' ');
  return t.split(/\s+/).filter((w) => w.length > 0).join(' ');
}

export function exactMatch(prediction: string, gold: string): number {
  return normalizeAnswer(prediction) === normalizeAnswer(gold) ? 1 : 0;
}

const SPECIAL = new Set(['yes', 'no', 'noanswer']);

/** Token F1 as HotpotQA's script: yes/no/noanswer must match exactly or score 0. */
export function f1Score(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  if ((SPECIAL.has(p) || SPECIAL.has(g)) && p !== g) return 0;
  const pt = p.split(' ').filter((w) => w);
  const gt = g.split(' ').filter((w) => w);
  if (pt.length === 0 || gt.length === 0) return pt.length === gt.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const w of gt) counts.set(w, (counts.get(w) ?? 0) + 1);
  let same = 0;
  for (const w of pt) {
    const c = counts.get(w) ?? 0;
    if (c > 0) {
      same++;
      counts.set(w, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / pt.length;
  const recall = same / gt.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Best EM and F1 of a prediction over several acceptable answers. */
export function bestAnswerScores(prediction: string, golds: readonly string[]): { em: number; f1: number } {
  let em = 0;
  let f1 = 0;
  for (const g of golds) {
    em = Math.max(em, exactMatch(prediction, g));
    f1 = Math.max(f1, f1Score(prediction, g));
  }
  return { em, f1 };
}

/** A normalised answer that can be looked for in evidence (not empty, not a bare yes/no). */
export function searchableAnswer(answer: string): string | undefined {
  const n = normalizeAnswer(answer);
  if (n === '' || SPECIAL.has(n)) return undefined;
  return n;
}

/** Whether the normalised answer occurs in the normalised text, at word boundaries. */
export function containsAnswer(normalizedText: string, normalizedAnswer: string): boolean {
  return ` ${normalizedText} `.includes(` ${normalizedAnswer} `);
}
