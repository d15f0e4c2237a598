/**
 * Human-readable topic labels by class-based TF-IDF (c-TF-IDF): all chunks of a topic are one
 * "class document"; a term's weight in a topic is its frequency there times
 * log(1 + average class length / the term's frequency over all classes). Terms frequent in one
 * topic and rare elsewhere win. Terms come from the same processing as BM25 (text/terms.ts),
 * so a label term is a term the lexical index knows; each stem is shown as its most frequent
 * surface word ("diabetes", not "diabet").
 */
import { indexTerm, words } from '../text/terms';

export interface TopicTerms {
  /** Top terms, best first, as readable words. */
  terms: string[];
  /** Their c-TF-IDF weights. */
  weights: number[];
}

export interface LabelOptions {
  /** Terms kept per topic; default 8. */
  topTerms?: number;
  /** Terms in the label string; default 3. */
  labelTerms?: number;
  /** Ignore terms seen in fewer chunks than this; default 2 (drops typos and ids). */
  minChunks?: number;
}

/** Per topic: its top terms and a label such as "insulin · glucose · diabetes". */
export function labelTopics(
  texts: readonly string[],
  assignments: ArrayLike<number>,
  k: number,
  options: LabelOptions = {},
): { terms: TopicTerms[]; labels: string[] } {
  const topTerms = options.topTerms ?? 8;
  const labelTerms = options.labelTerms ?? 3;
  const minChunks = options.minChunks ?? 2;
  const classCounts: Array<Map<string, number>> = Array.from({ length: k }, () => new Map());
  const classLength = new Float64Array(k);
  const total = new Map<string, number>();
  const chunkFreq = new Map<string, number>();
  const surface = new Map<string, Map<string, number>>();
  texts.forEach((text, i) => {
    const c = assignments[i] as number;
    if (c < 0 || c >= k) return;
    const counts = classCounts[c] as Map<string, number>;
    const seen = new Set<string>();
    for (const w of words(text)) {
      const t = indexTerm(w);
      // Pure numbers make poor labels ("2019", "1"): skip them.
      if (!t || /^\d[\d.,]*$/.test(t)) continue;
      counts.set(t, (counts.get(t) ?? 0) + 1);
      total.set(t, (total.get(t) ?? 0) + 1);
      classLength[c] = (classLength[c] as number) + 1;
      if (!seen.has(t)) {
        seen.add(t);
        chunkFreq.set(t, (chunkFreq.get(t) ?? 0) + 1);
      }
      let forms = surface.get(t);
      if (!forms) surface.set(t, (forms = new Map()));
      forms.set(w, (forms.get(w) ?? 0) + 1);
    }
  });
  let lengthSum = 0;
  let nonEmpty = 0;
  for (const l of classLength) {
    if (l === 0) continue;
    lengthSum += l;
    nonEmpty++;
  }
  const avgLength = nonEmpty > 0 ? lengthSum / nonEmpty : 0;
  const readable = (stem: string): string => {
    const forms = surface.get(stem);
    if (!forms) return stem;
    return [...forms].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  };
  const terms: TopicTerms[] = classCounts.map((counts, c) => {
    const len = classLength[c] as number;
    const scored: Array<[string, number]> = [];
    for (const [t, f] of counts) {
      if ((chunkFreq.get(t) ?? 0) < minChunks) continue;
      const tf = f / len;
      scored.push([t, tf * Math.log(1 + avgLength / (total.get(t) as number))]);
    }
    scored.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const top = scored.slice(0, topTerms);
    return { terms: top.map(([t]) => readable(t)), weights: top.map(([, w]) => w) };
  });
  const labels = terms.map((t, c) => (t.terms.length > 0 ? t.terms.slice(0, labelTerms).join(' · ') : `topic ${c}`));
  return { terms, labels };
}
