/**
 * Fits the built-in encoder's retrieval fusion from development pools: reads the feature dumps of
 * tools/retrieval-features.ts (one per pool), scores every candidate fusion of
 * src/core/retrieve/fitFusion.ts on each pool, and picks the one with the best mean nDCG@10 over
 * the pools (each pool counts once, whatever its number of questions). Prints the table that
 * docs/evaluation.md ("Retrieval fusion") shows. Research tooling, not part of the tests.
 *
 *   node --import tsx tools/fit-fusion.ts hotpotqa=hp-features.jsonl scifact=sf-features.jsonl … [--split]
 *
 * `--split` is the held-back check: the fusion is picked on each pool's even-numbered questions
 * (best mean over the pools) and measured on the odd-numbered ones beside BM25 alone and the
 * former profile (BM25 + 0.2 × cosine).
 */
import { readFileSync } from 'node:fs';
import { fitFusion, fusedRanking, meanNdcg, type JudgedQuestion } from '../src/core/retrieve/fitFusion';
import { BUILTIN_PROFILE, type FusionSetting } from '../src/core/retrieve/profile';

interface Candidate {
  id: string;
  grade: number;
  dense: number;
  denseRank: number | null;
  bm25: number;
  bm25Rank: number | null;
  /** Absent in dumps written before the flat scoring. */
  bm25Flat?: number;
  bm25FlatRank?: number | null;
}

function judged(file: string): JudgedQuestion[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      const q = JSON.parse(line) as { gold: string[]; candidates: Candidate[] };
      const ranked = (key: 'denseRank' | 'bm25Rank' | 'bm25FlatRank', score: 'dense' | 'bm25' | 'bm25Flat') =>
        q.candidates
          .filter((c) => c[key] !== null && c[key] !== undefined)
          .sort((a, b) => a[key]! - b[key]!)
          .map((c) => ({ id: c.id, score: c[score]! }));
      const withFlat = q.candidates.some((c) => c.bm25FlatRank !== undefined);
      const qrels = new Map(q.candidates.filter((c) => c.grade > 0).map((c) => [c.id, c.grade]));
      for (const g of q.gold) if (!qrels.has(g)) qrels.set(g, 1);
      return { dense: ranked('denseRank', 'dense'), lexical: ranked('bm25Rank', 'bm25'), ...(withFlat ? { flat: ranked('bm25FlatRank', 'bm25Flat') } : {}), qrels };
    });
}

const split = process.argv.includes('--split');
const pools = process.argv.slice(2).filter((a) => a !== '--split').map((arg) => {
  const [name, file] = arg.includes('=') ? (arg.split('=', 2) as [string, string]) : [arg, arg];
  const all = judged(file);
  const relevant = all.filter((q) => [...q.qrels.values()].some((g) => g > 0));
  return { name, fit: fitFusion(split ? relevant.filter((_, i) => i % 2 === 0) : all), heldBack: relevant.filter((_, i) => i % 2 === 1) };
});
if (pools.length === 0) {
  process.stderr.write('usage: fit-fusion.ts name=features.jsonl [name=features.jsonl …]\n');
  process.exit(2);
}
const names = Object.keys(pools[0]!.fit.figures);
const mean = (name: string) => pools.reduce((s, p) => s + p.fit.figures[name]!, 0) / pools.length;
const fusions = names.filter((n) => n !== 'bm25' && n !== 'dense');
const best = fusions.reduce((a, b) => (mean(b) > mean(a) + 1e-12 ? b : a));
console.log(`| fusion | ${pools.map((p) => `${p.name} (${p.fit.questions} q)`).join(' | ')} | mean |`);
console.log(`|---|${pools.map(() => '---:').join('|')}|---:|`);
for (const n of names) console.log(`| ${n === best ? `**${n}**` : n} | ${pools.map((p) => p.fit.figures[n]!.toFixed(3)).join(' | ')} | ${mean(n).toFixed(3)} |`);
console.log(`\nbest over the pools: ${best} (mean nDCG@10 ${mean(best).toFixed(3)}; BM25 alone ${mean('bm25').toFixed(3)})`);

if (split) {
  const parse = (name: string): FusionSetting => {
    if (name === 'rrf') return { kind: 'rrf', rrfK: 60 };
    const m = /^linear:([\d.]+)(?:\+flat:([\d.]+))?$/.exec(name)!;
    return m[2] ? { kind: 'linear', dense: Number(m[1]), depth: 100, flat: Number(m[2]) } : { kind: 'linear', dense: Number(m[1]), depth: 100 };
  };
  const rows: Array<[string, FusionSetting | 'bm25']> = [
    ['BM25 alone', 'bm25'],
    ['former profile (linear:0.2)', parse('linear:0.2')],
    [`picked on the even half (${best})`, parse(best)],
    ['the built-in profile (fitted on all)', BUILTIN_PROFILE.fusion],
  ];
  console.log(`\nheld back (odd-numbered questions): | fusion | ${pools.map((p) => `${p.name} (${p.heldBack.length} q)`).join(' | ')} | mean |`);
  for (const [label, f] of rows) {
    const figs = pools.map((p) => meanNdcg(p.heldBack, (q) => (f === 'bm25' ? q.lexical.map((r) => r.id) : fusedRanking(q, f))));
    console.log(`| ${label} | ${figs.map((x) => x.toFixed(3)).join(' | ')} | ${(figs.reduce((a, b) => a + b, 0) / figs.length).toFixed(3)} |`);
  }
}
