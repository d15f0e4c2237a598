/**
 * Hybrid retrieval (design §4): dense cosine over item vectors and BM25, fused by the encoder's
 * retrieval profile (profile.ts) — score-level fusion by default, reciprocal-rank fusion for
 * comparison. A linear fusion with a `flat` weight ranks BM25 twice, per field and flat
 * (bm25.ts), and fuses the three lists. Both rankers look deeper than k (a pool of max(4k, 50), and at least the profile's
 * depth) so fusion can promote an item one ranker misses; the fused ranking beyond k is returned
 * as candidates for the trace.
 */
import type { CorpusIndex } from '../index/corpusIndex';
import type { ScoreComponents } from '../../contracts/trace';
import { reciprocalRankFusion, type Ranked } from './fusion';
import { RRF_EQUAL, type FusionSetting } from './profile';
import type { Modality } from '../../contracts/region';
import type { Retrieval, RetrieveOptions, Retriever } from './retriever';
import { titleKey } from '../text/titles';

export interface HybridOptions {
  dense: boolean;
  bm25: boolean;
  /** How the two rankings are fused (default: the design's equal-weight RRF). */
  fusion?: FusionSetting;
}

interface FusedEntry {
  id: string;
  fused: number;
  /** Taken first: its title names a thing the follow-up looks for. */
  titleMatch?: true;
  dense?: { rank: number; score: number };
  bm25?: { rank: number; score: number };
  bm25Flat?: { rank: number; score: number };
}

/** Min-max normalised scores of one list; an item absent from it scores that list's minimum (0). */
function normalised(list: Ranked[]): Map<string, number> {
  const out = new Map<string, number>();
  if (list.length === 0) return out;
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of list) {
    lo = Math.min(lo, r.score);
    hi = Math.max(hi, r.score);
  }
  for (const r of list) out.set(r.id, hi > lo ? (r.score - lo) / (hi - lo) : 1);
  return out;
}

/**
 * Score-level fusion over the union of the lists: normalised BM25 + w × normalised cosine; with a
 * flat list and weight f, BM25 is (1 − f) × the per-field list's + f × the flat list's.
 */
export function linearFusion(dense: Ranked[], lexical: Ranked[], denseWeight: number, flat?: { list: Ranked[]; weight: number }): FusedEntry[] {
  const d = normalised(dense);
  const l = normalised(lexical);
  const fl = flat ? normalised(flat.list) : undefined;
  const f = flat?.weight ?? 0;
  const table = new Map<string, FusedEntry>();
  const entry = (id: string) => {
    let e = table.get(id);
    if (!e) table.set(id, (e = { id, fused: 0 }));
    return e;
  };
  dense.forEach((r, rank) => {
    const e = entry(r.id);
    if (!e.dense) e.dense = { rank, score: r.score };
  });
  lexical.forEach((r, rank) => {
    const e = entry(r.id);
    if (!e.bm25) e.bm25 = { rank, score: r.score };
  });
  flat?.list.forEach((r, rank) => {
    const e = entry(r.id);
    if (!e.bm25Flat) e.bm25Flat = { rank, score: r.score };
  });
  for (const e of table.values()) e.fused = (1 - f) * (l.get(e.id) ?? 0) + f * (fl?.get(e.id) ?? 0) + denseWeight * (d.get(e.id) ?? 0);
  const best = (e: FusedEntry) => Math.min(e.bm25?.rank ?? Infinity, e.dense?.rank ?? Infinity, e.bm25Flat?.rank ?? Infinity);
  return [...table.values()].sort((a, b) => b.fused - a.fused || best(a) - best(b) || (a.id < b.id ? -1 : 1));
}

export class HybridRetriever implements Retriever {
  private readonly fusion: FusionSetting;

  constructor(
    private readonly index: CorpusIndex,
    private readonly embedQuery: (text: string, signal?: AbortSignal) => Promise<Float32Array>,
    private readonly options: HybridOptions = { dense: true, bm25: true },
  ) {
    this.fusion = options.fusion ?? RRF_EQUAL;
  }

  async retrieve(query: string, k: number, options: RetrieveOptions = {}): Promise<Retrieval> {
    const pool = Math.max(4 * k, options.candidates ?? 50, this.fusion.kind === 'linear' ? this.fusion.depth : 0);
    const filter = options.modalities ? { modalities: options.modalities } : undefined;
    const dense = this.options.dense ? await this.index.vectors.query(await this.embedQuery(query, options.signal), pool, filter) : [];
    const lexical = this.options.bm25 ? await this.index.lexical.query(query, pool, options.modalities) : [];
    const flat = this.flatWeight() > 0 ? await this.index.lexical.query(query, pool, options.modalities, 'flat') : [];
    const ranked = this.fuse(dense, lexical, flat).filter((f) => !options.excludeIds?.has(f.id));
    const fused = options.titled && options.titled.length > 0 ? await this.titledFirst(ranked, options.titled, options) : ranked;

    const components = (f: FusedEntry): ScoreComponents => {
      const s: ScoreComponents = { fused: f.fused };
      if (f.dense) Object.assign(s, { dense: f.dense.score, denseRank: f.dense.rank });
      if (f.bm25) Object.assign(s, { bm25: f.bm25.score, bm25Rank: f.bm25.rank });
      if (f.bm25Flat) Object.assign(s, { bm25Flat: f.bm25Flat.score, bm25FlatRank: f.bm25Flat.rank });
      return s;
    };
    const top = withNamedSources(fused, k, options.named, (id) => this.index.fileOf(id));
    const items = await Promise.all(
      top.map(async (f, rank) => ({ item: await this.index.item(f.id), rank, scores: { ...components(f), ...(f.named ? { namedSource: true } : {}), ...(f.titleMatch ? { titleMatch: true } : {}) } })),
    );
    return {
      items,
      candidates: fused.slice(0, Math.max(k, options.candidates ?? 50)).map((f) => ({ itemId: f.id, scores: components(f) })),
    };
  }

  /**
   * The ranked candidates with the items whose title names one of `names` first (marked
   * `titleMatch`): the item about a bridge the follow-up looks for, which the query's words rank
   * below k when they are common or stop words ("Edwin Most"). The store's title keys
   * (CorpusIndex.titled) find them without reading a document; of several items one name titles,
   * the best-ranked in the candidates, else the first the store holds, is taken.
   */
  private async titledFirst(ranked: FusedEntry[], names: readonly string[], options: RetrieveOptions): Promise<FusedEntry[]> {
    const found = await this.titled(names, options.modalities);
    if (found.size === 0) return ranked;
    const rankOf = new Map(ranked.map((f, i) => [f.id, i]));
    const first: FusedEntry[] = [];
    const taken = new Set<string>();
    const keys = new Set<string>();
    for (const [name, titledIds] of found) {
      // Names of one key ("Sir Edwin Most", "Edwin Most") take one item.
      const key = titleKey(name);
      if (keys.has(key)) continue;
      keys.add(key);
      const ids = titledIds.filter((id) => !options.excludeIds?.has(id) && !taken.has(id));
      if (ids.length === 0) continue;
      const id = ids.reduce((best, x) => ((rankOf.get(x) ?? Infinity) < (rankOf.get(best) ?? Infinity) ? x : best));
      // Its scores are the follow-up query's when it ranked there; an item the query missed has none.
      const at = rankOf.get(id);
      first.push({ ...(at !== undefined ? ranked[at]! : { id, fused: 0 }), titleMatch: true });
      taken.add(id);
    }
    if (first.length === 0) return ranked;
    return [...first, ...ranked.filter((f) => !taken.has(f.id))];
  }

  /** For each name, the ids of the items whose title key is the name's (names no item has are absent). */
  async titled(names: readonly string[], modalities?: readonly Modality[]): Promise<Map<string, string[]>> {
    const byKey = await this.index.titled([...new Set(names.map(titleKey).filter((k) => k.length > 0))], modalities);
    const out = new Map<string, string[]>();
    for (const name of names) {
      const ids = byKey.get(titleKey(name));
      if (ids) out.set(name, ids);
    }
    return out;
  }

  /** The flat BM25 list's weight: only a linear fusion of both rankers uses it. */
  private flatWeight(): number {
    const f = this.fusion;
    return f.kind === 'linear' && this.options.dense && this.options.bm25 ? (f.flat ?? 0) : 0;
  }

  private fuse(dense: Ranked[], lexical: Ranked[], flat: Ranked[]): FusedEntry[] {
    const f = this.fusion;
    if (f.kind === 'linear' && this.options.dense && this.options.bm25) return linearFusion(dense, lexical, f.dense, f.flat ? { list: flat, weight: f.flat } : undefined);
    // RRF; with one ranker only, its own order (RRF of one list).
    const lists = [dense, lexical].filter((_, i) => (i === 0 ? this.options.dense : this.options.bm25));
    const weights = f.kind === 'rrf' && f.bm25Weight !== undefined && lists.length === 2 ? [1, f.bm25Weight] : lists.map(() => 1);
    const rrfK = f.kind === 'rrf' ? f.rrfK : 60;
    return reciprocalRankFusion(lists, rrfK).map((r) => {
      const parts = this.options.dense && this.options.bm25 ? r.parts : this.options.dense ? [r.parts[0], undefined] : [undefined, r.parts[0]];
      const fused = parts.reduce((a, p, i) => a + (p ? (weights[lists.length === 2 ? i : 0] ?? 1) / (rrfK + p.rank + 1) : 0), 0);
      return { id: r.id, fused, ...(parts[0] ? { dense: parts[0] } : {}), ...(parts[1] ? { bm25: parts[1] } : {}) };
    }).sort((a, b) => b.fused - a.fused || Math.min(a.bm25?.rank ?? Infinity, a.dense?.rank ?? Infinity) - Math.min(b.bm25?.rank ?? Infinity, b.dense?.rank ?? Infinity) || (a.id < b.id ? -1 : 1));
  }
}

/**
 * The top k of `fused`, where the question names sources: when fewer than `named.reserve` of the
 * top k come from the best-fitting named files, the best-ranked such entries below k replace the
 * last others (ranked after the rest, in fused order; marked `named`). A question about one company's
 * filing among many is otherwise answered from another company's statements (FinanceBench).
 */
export function withNamedSources<T extends { id: string }>(fused: readonly T[], k: number, named: RetrieveOptions['named'], fileOf: (id: string) => string | undefined): Array<T & { named?: true }> {
  const top: Array<T & { named?: true }> = fused.slice(0, k);
  if (!named || named.reserve <= 0) return top;
  const fit = new Map<string, number>();
  const fitOf = (f: T) => {
    const file = fileOf(f.id);
    if (file === undefined) return 0;
    let v = fit.get(file);
    if (v === undefined) fit.set(file, (v = named.prefer(file)));
    return v;
  };
  // The best-fitting named files among the candidates (a company's filing of the period asked).
  const best = Math.max(0, ...fused.map(fitOf));
  if (best <= 0) return top;
  const isNamed = (f: T) => fitOf(f) === best;
  const missing = Math.min(named.reserve, k) - top.filter(isNamed).length;
  if (missing <= 0) return top;
  const extra = fused.slice(k).filter(isNamed).slice(0, missing);
  if (extra.length === 0) return top;
  // Drop the lowest-ranked unnamed entries to make room.
  const drop = new Set<T>();
  for (let i = top.length - 1; i >= 0 && drop.size < extra.length; i--) if (!isNamed(top[i]!)) drop.add(top[i]!);
  return [...top.filter((f) => !drop.has(f)), ...extra.slice(0, drop.size).map((f) => ({ ...f, named: true as const }))];
}
