/**
 * Lexical retrieval variants on an open pool, scored by nDCG@10 against the dataset's gold: the
 * index's own BM25 (src/core/index/bm25.ts) as the reference, and a re-implementation of the
 * same formula with switches — the coordination factor (× distinct query terms matched, to a
 * power), field length (distinct words or all words), k1 / b — and RM3-style pseudo-relevance
 * feedback (the top documents' terms added to the query). Research tooling, not part of the tests.
 *
 *   node --import tsx tools/lexical-study.ts <dataset file> [--limit N]
 */
import { parseArgs } from 'node:util';
import { Bm25Index } from '../src/core/index/bm25';
import { ndcgAtK } from '../src/core/retrieve/metrics';
import { indexTerm, words } from '../src/core/text/terms';
import { loadDataset } from '../src/eval/datasets/load';
import { poolDocItem } from '../src/eval/items';

interface Field {
  /** term → parallel doc numbers / tfs */
  postings: Map<string, { docs: number[]; tfs: number[] }>;
  distinctLen: Float64Array;
  totalLen: Float64Array;
  avgDistinct: number;
  avgTotal: number;
}

export interface Variant {
  name: string;
  k1: number;
  b: number;
  lengths: 'distinct' | 'total';
  /** Exponent on the number of distinct query terms matched (1: MiniSearch's, 0: none). */
  coord: number;
  rm3?: { docs: number; terms: number; origWeight: number };
}

function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    const t = indexTerm(w);
    if (t) out.push(t);
  }
  return out;
}

class Study {
  readonly fields: Field[];
  readonly docTerms: Array<Map<string, number>>;
  constructor(
    readonly ids: string[],
    texts: Array<[string, string]>,
  ) {
    const n = ids.length;
    this.docTerms = [];
    this.fields = [0, 1].map(() => ({ postings: new Map(), distinctLen: new Float64Array(n), totalLen: new Float64Array(n), avgDistinct: 0, avgTotal: 0 }));
    texts.forEach((pair, d) => {
      const all = new Map<string, number>();
      pair.forEach((text, f) => {
        const field = this.fields[f]!;
        const tokens = words(text);
        field.distinctLen[d] = new Set(tokens).size;
        field.totalLen[d] = tokens.length;
        const tf = new Map<string, number>();
        for (const w of tokens) {
          const t = indexTerm(w);
          if (t) tf.set(t, (tf.get(t) ?? 0) + 1);
        }
        for (const [t, c] of tf) {
          let p = field.postings.get(t);
          if (!p) field.postings.set(t, (p = { docs: [], tfs: [] }));
          p.docs.push(d);
          p.tfs.push(c);
          all.set(t, (all.get(t) ?? 0) + c);
        }
      });
      this.docTerms.push(all);
    });
    for (const f of this.fields) {
      f.avgDistinct = f.distinctLen.reduce((a, b) => a + b, 0) / n;
      f.avgTotal = f.totalLen.reduce((a, b) => a + b, 0) / n;
    }
  }

  /** Weighted query terms → doc scores (top k). */
  score(query: Map<string, number>, v: Variant, k: number, coordTerms?: Set<string>): Array<{ d: number; s: number }> {
    const n = this.ids.length;
    const score = new Map<number, number>();
    const matched = new Map<number, Set<string>>();
    for (const [t, w] of query) {
      this.fields.forEach((field) => {
        const p = field.postings.get(t);
        if (!p) return;
        const df = p.docs.length;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        const lens = v.lengths === 'distinct' ? field.distinctLen : field.totalLen;
        const avg = v.lengths === 'distinct' ? field.avgDistinct : field.avgTotal;
        for (let j = 0; j < df; j++) {
          const d = p.docs[j]!;
          const tf = p.tfs[j]!;
          const s = w * idf * ((tf * (v.k1 + 1)) / (tf + v.k1 * (1 - v.b + (v.b * lens[d]!) / avg)));
          score.set(d, (score.get(d) ?? 0) + s);
          if (!coordTerms || coordTerms.has(t)) {
            let m = matched.get(d);
            if (!m) matched.set(d, (m = new Set()));
            m.add(t);
          }
        }
      });
    }
    const out: Array<{ d: number; s: number }> = [];
    for (const [d, s] of score) out.push({ d, s: s * Math.pow(Math.max(1, matched.get(d)?.size ?? 0), v.coord) });
    out.sort((a, b) => b.s - a.s || a.d - b.d);
    return out.slice(0, k);
  }

  /** Flat BM25 over the two fields' postings: tf summed, df of either field, length = sum of the fields' distinct words; no coordination. */
  flatScores(question: string, k1: number, b: number): Map<number, number> {
    const n = this.ids.length;
    const [t0, t1] = this.fields as [Field, Field];
    const avg = t0.avgDistinct + t1.avgDistinct;
    const score = new Map<number, number>();
    for (const t of terms(question)) {
      const tf = new Map<number, number>();
      for (const f of this.fields) {
        const p = f.postings.get(t);
        if (p) p.docs.forEach((d, j) => tf.set(d, (tf.get(d) ?? 0) + p.tfs[j]!));
      }
      const df = tf.size;
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (const [d, c] of tf) {
        const len = t0.distinctLen[d]! + t1.distinctLen[d]!;
        score.set(d, (score.get(d) ?? 0) + idf * ((c * (k1 + 1)) / (c + k1 * (1 - b + (b * len) / avg))));
      }
    }
    return score;
  }

  rank(question: string, v: Variant, k: number): string[] {
    const qt = terms(question);
    const q = new Map<string, number>();
    for (const t of qt) q.set(t, (q.get(t) ?? 0) + 1);
    let hits = this.score(q, v, v.rm3 ? Math.max(k, v.rm3.docs) : k);
    if (v.rm3) {
      const fb = hits.slice(0, v.rm3.docs);
      const top = fb[0]?.s ?? 1;
      const weights = new Map<string, number>();
      for (const h of fb) {
        const dt = this.docTerms[h.d]!;
        let len = 0;
        for (const c of dt.values()) len += c;
        const dw = h.s / top;
        for (const [t, c] of dt) weights.set(t, (weights.get(t) ?? 0) + (dw * c) / len);
      }
      const best = [...weights.entries()].sort((a, b) => b[1] - a[1]).slice(0, v.rm3.terms);
      const fbSum = best.reduce((a, [, w]) => a + w, 0) || 1;
      const qSum = [...q.values()].reduce((a, b) => a + b, 0);
      const expanded = new Map<string, number>();
      for (const [t, w] of q) expanded.set(t, (v.rm3.origWeight * w) / qSum);
      for (const [t, w] of best) expanded.set(t, (expanded.get(t) ?? 0) + ((1 - v.rm3.origWeight) * w) / fbSum);
      hits = this.score(expanded, v, k, new Set(q.keys()));
    }
    return hits.map((h) => this.ids[h.d]!);
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { limit: { type: 'string' }, features: { type: 'string' }, out: { type: 'string' } } });
  const file = positionals[0];
  if (!file) throw new Error('usage: lexical-study.ts <dataset file> [--limit N]');
  const dataset = loadDataset(file);
  if (!dataset.pool || dataset.pool.kind !== 'docs') throw new Error(`${file}: no open pool of documents`);
  const docs = dataset.pool.read();
  const ids: string[] = [];
  const texts: Array<[string, string]> = [];
  for (const doc of docs) {
    const { item } = poolDocItem(`d/${ids.length}.json`, doc, 2);
    if (!item) continue;
    ids.push(doc.id);
    texts.push([item.title ?? '', item.root.text]);
  }
  const questions = (values.limit ? dataset.questions.slice(0, Number(values.limit)) : dataset.questions).filter((q) => [...q.goldDocs.values()].some((g) => g > 0));
  const t0 = Date.now();
  const study = new Study(ids, texts);
  const index = Bm25Index.build(ids.map((id, i) => ({ id, title: texts[i]![0], text: texts[i]![1], modality: 'text' })));
  process.stderr.write(`${ids.length} documents, ${questions.length} questions, built in ${Date.now() - t0} ms\n`);
  const mean = (rank: (q: string) => string[]) => {
    let s = 0;
    const t = Date.now();
    for (const q of questions) s += ndcgAtK(rank(q.question), q.goldDocs, 10);
    return { ndcg: s / questions.length, ms: (Date.now() - t) / questions.length };
  };
  const report = (name: string, r: { ndcg: number; ms: number }) => console.log(`${name.padEnd(48)} ${r.ndcg.toFixed(4)}  ${r.ms.toFixed(1)} ms/q`);
  report('index BM25 (bm25.ts)', mean((q) => index.query(q, 100).map((h) => h.id)));
  const top = (m: Map<number, number>, k: number) => [...m.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
  for (const [k1, b] of [[1.2, 0.75], [0.9, 0.4], [1.2, 0.4], [0.9, 0.75]] as const)
    report(`flat (fields summed) k1 ${k1} b ${b}`, mean((q) => top(study.flatScores(q, k1, b), 100).map(([d]) => ids[d]!)));
  if (values.features && values.out) {
    // Flat scores for every candidate of a feature dump, and the flat top 100.
    const { readFileSync, writeFileSync } = await import('node:fs');
    const docNo = new Map(ids.map((id, i) => [id, i]));
    const lines = readFileSync(values.features, 'utf8').split('\n').filter((l) => l.trim());
    const out: string[] = [];
    for (const line of lines) {
      const q = JSON.parse(line) as { id: string; question: string; candidates: Array<{ id: string }> };
      const m = study.flatScores(q.question, 1.2, 0.75);
      const m2 = study.flatScores(q.question, 0.9, 0.4);
      const t = top(m, 100).map(([d, s]) => [ids[d]!, s, m2.get(d) ?? 0]);
      const cand = Object.fromEntries(q.candidates.map((c) => { const d = docNo.get(c.id); return [c.id, d === undefined ? [0, 0] : [m.get(d) ?? 0, m2.get(d) ?? 0]]; }));
      const t2 = top(m2, 100).map(([d, s]) => [ids[d]!, m.get(d) ?? 0, s]);
      out.push(JSON.stringify({ id: q.id, top: t, top2: t2, cand }));
    }
    writeFileSync(values.out, `${out.join('\n')}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
