/**
 * BENCHMARKS.md sections from `npm run bench` results: corpus-scale indexing and query latency
 * (Canopy beside the vectra peer, and how both grow with corpus size), eager against lazy node
 * vectors, workspace indexing (Markdown, PDFs, one-file re-index) and encoder throughput. Only
 * the text between the `canopy-bench` markers is replaced; everything else in the file stays.
 */
import type { CorpusBenchResult } from './corpusBench';
import type { FolderBenchResult, ReindexResult } from './indexBench';
import type { Machine } from './measure';
import type { VectorsBenchResult } from './vectorsBench';

export const BEGIN = '<!-- canopy-bench:begin (written by `npm run bench`; edit tools/bench.ts, not this text) -->';
export const END = '<!-- canopy-bench:end -->';

export interface BenchResults {
  createdAt: string;
  inputs: { pools: Array<{ file: string; docs: number }>; queries?: string; pdfDir: string | null };
  queryCount: number;
  encode?: { machine: Record<string, unknown>; results: Array<{ pieces: number; batch: number; pipelineSentencesPerSec: number }> };
  corpus?: Array<{ machine: Machine; result: CorpusBenchResult; prepared?: { texts: number; encodedTexts: number } }>;
  vectors?: { machine: Machine; result: VectorsBenchResult; peakRssMiB: number };
  index?: {
    markdown?: { machine: Machine; result: FolderBenchResult & { documents: number }; peakRssMiB: number };
    pdf?: { machine: Machine; result: FolderBenchResult; peakRssMiB: number };
    reindex?: { machine: Machine; result: ReindexResult; peakRssMiB: number };
  };
}

const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '—');
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
/** Rates: one decimal, or two significant digits below 1 (a PDF folder indexes at 0.05 files/s). */
const rate = (x: number) => (!Number.isFinite(x) ? '—' : x >= 1 ? x.toFixed(1) : x.toPrecision(2));
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '—');
const mib = (b: number) => (b / 2 ** 20).toFixed(1);

function machineLine(m: Machine | undefined): string {
  if (!m) return '';
  return `${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}; 1-minute load average at the end of the run: ${m.loadAverage1m}`;
}

export function renderBenchMarkdown(r: BenchResults): string {
  const out: string[] = [];
  const anyMachine = r.corpus?.[0]?.machine ?? r.vectors?.machine ?? r.index?.markdown?.machine;
  out.push('## Corpus scale: indexing, index size, memory and query latency');
  out.push('');
  out.push(`**Command**: \`npm run bench -- --data <data folder>\` (run ${r.createdAt.slice(0, 10)}; per measurement \`canopy bench corpus --pool … --docs N --engine canopy|vectra\`, each engine at each size in its own process).`);
  out.push('');
  if (anyMachine) out.push(`**Machine**: ${machineLine(anyMachine)}. Other builds and evaluations shared the 2 cores while measuring, so absolute times are noisy; each engine was measured back to back at each size.`);
  out.push('');
  out.push(
    `**Corpus**: the union of the pools found under the data folder, largest first (${r.inputs.pools.map((p) => `${p.docs.toLocaleString('en-US')} from ${p.file.split('/').slice(-2).join('/')}`).join(', ')}); "N" takes the first N documents. **Queries**: the first ${r.queryCount} questions of ${r.inputs.queries?.split('/').slice(-2).join('/') ?? '—'}.`,
  );
  out.push('');
  out.push(
    '**Method**: before measuring, each engine\'s own embedding cache is filled from the shared evaluation cache (encoding only what it lacked), so the measuring process holds just that corpus\'s vectors and every build reads them from it: build times are the indexing work *without* the encoder (the encoder\'s own throughput is below and in "## Encoder"; with the encoder cold, indexing is encoder-bound). Canopy: `runIndexer` (region trees, node vectors through the cache, vectra item vectors, MiniSearch BM25, parsed trees on disk). Peer: vectra 0.12.3 `LocalDocumentIndex` (its default 512-token chunks, one open update for all documents — stock per-document upserts clone and rewrite the whole index each time), same encoder. Build times: median of the warm rebuilds into fresh folders. Queries: Canopy runs the ask pipeline without an LLM (hybrid retrieval k = 10, CANOPY, rule critic, up to 3 rounds, extractive reader); "cold" is the first pass over the questions on a freshly opened index (trees read from disk), "warm" the second pass; "retrieval" is the hybrid retriever alone. vectra: `queryDocuments` (cosine over chunks, top 50 chunks, 10 documents) + `renderSections` at a 1,000-token budget; "retrieval" is `queryDocuments` alone. Latency in ms, p50 / p95.',
  );
  out.push('');
  if (r.corpus && r.corpus.length > 0) {
    out.push('| engine | documents | nodes (Canopy) / chunks (vectra) | build, warm (s) | documents/s | nodes/s | index on disk (MiB) | peak RSS (MiB) | query cold p50 / p95 | query warm p50 / p95 | retrieval p50 / p95 |');
    out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const { result: x } of r.corpus) {
      out.push(
        `| ${x.engine} | ${x.documents.toLocaleString('en-US')} | ${x.nodes.toLocaleString('en-US')} | ${f1(x.warmMedianSeconds)} | ${f0(x.docsPerSecond)} | ${f0(x.nodesPerSecond)} | ${mib(x.indexBytes)} | ${f0(x.peakRssMiB)} | ${f0(x.query.cold.p50)} / ${f0(x.query.cold.p95)} | ${f0(x.query.warm.p50)} / ${f0(x.query.warm.p95)} | ${f1(x.query.retrieveOnly.p50)} / ${f1(x.query.retrieveOnly.p95)} |`,
      );
    }
    out.push('');
    const sizes = [...new Set(r.corpus.map((c) => c.result.documents))].sort((a, b) => a - b);
    const get = (engine: string, n: number) => r.corpus!.find((c) => c.result.engine === engine && c.result.documents === n)?.result;
    out.push('Canopy ÷ vectra in the same run (above 1: Canopy takes more):');
    out.push('');
    out.push('| documents | build time | index on disk | peak RSS | warm query p50 (full pipeline ÷ query + render) | retrieval p50 |');
    out.push('|---:|---:|---:|---:|---:|---:|');
    for (const n of sizes) {
      const c = get('canopy', n);
      const v = get('vectra', n);
      if (!c || !v) continue;
      out.push(`| ${n.toLocaleString('en-US')} | ${f2(c.warmMedianSeconds / v.warmMedianSeconds)} | ${f2(c.indexBytes / v.indexBytes)} | ${f2(c.peakRssMiB / v.peakRssMiB)} | ${f2(c.query.warm.p50 / v.query.warm.p50)} | ${f2(c.query.retrieveOnly.p50 / v.query.retrieveOnly.p50)} |`);
    }
    if (sizes.length >= 2) {
      const [a, b] = [sizes[0]!, sizes[sizes.length - 1]!];
      out.push('');
      out.push(`Growth from ${a.toLocaleString('en-US')} to ${b.toLocaleString('en-US')} documents (×${f2(b / a)}):`);
      out.push('');
      out.push('| engine | build time | index on disk | peak RSS | warm query p50 | retrieval p50 |');
      out.push('|---|---:|---:|---:|---:|---:|');
      for (const engine of ['canopy', 'vectra']) {
        const x = get(engine, a);
        const y = get(engine, b);
        if (!x || !y) continue;
        out.push(`| ${engine} | ×${f2(y.warmMedianSeconds / x.warmMedianSeconds)} | ×${f2(y.indexBytes / x.indexBytes)} | ×${f2(y.peakRssMiB / x.peakRssMiB)} | ×${f2(y.query.warm.p50 / x.query.warm.p50)} | ×${f2(y.query.retrieveOnly.p50 / x.query.retrieveOnly.p50)} |`);
      }
    }
    out.push('');
  }
  if (r.vectors) {
    const v = r.vectors.result;
    const e = v.variants.find((x) => x.mode === 'eager')!;
    const l = v.variants.find((x) => x.mode === 'lazy')!;
    out.push('## Node vectors: eager (index time) or lazy (query time)');
    out.push('');
    out.push(`**Command**: \`canopy bench vectors --pool … --docs ${v.documents} --queries … --query-count ${v.queries}\`. Both variants start from an empty embedding cache and index the same ${v.documents.toLocaleString('en-US')} documents with the real indexer; eager encodes every leaf and table (the other node vectors are derived from them); lazy encodes only each item's own text, for its retrieval vector, and leaves the rest to the first question that compresses the item (then cached). Then ${v.queries} questions run through the ask pipeline twice (CANOPY, rule critic, up to 3 rounds).`);
    out.push('');
    out.push('| variant | index (s) | texts encoded at index time | questions, pass 1: p50 / p95 ms (texts encoded) | pass 2: p50 / p95 ms |');
    out.push('|---|---:|---:|---:|---:|');
    for (const x of [e, l]) out.push(`| ${x.mode} | ${f1(x.indexSeconds)} | ${x.indexEncodedTexts.toLocaleString('en-US')} | ${f0(x.query.first.p50)} / ${f0(x.query.first.p95)} (${x.query.encodedDuringFirst.toLocaleString('en-US')}) | ${f0(x.query.second.p50)} / ${f0(x.query.second.p95)} |`);
    out.push('');
    out.push(
      `Lazy saves ${f1(e.indexSeconds - l.indexSeconds)} s of indexing (${f0((100 * (e.indexSeconds - l.indexSeconds)) / e.indexSeconds)}%) and costs ${f0(l.query.first.mean - e.query.first.mean)} ms more per question while items are first seen; ${v.queries} questions needed ${f1(100 * v.nodesTouchedShare)}% of the texts eager indexing encodes; break-even after ${Number.isFinite(v.breakEvenQueries) ? f0(v.breakEvenQueries) : '—'} questions of first-seen items.`,
    );
    out.push('');
  }
  if (r.index) {
    out.push('## Indexing a workspace');
    out.push('');
    out.push('**Command**: `canopy bench index` (the workspace indexer end to end: discovery, the format parsers, the document graph, the indexer). "First" starts from the given embedding cache and encodes what it lacks; "warm" re-indexes into a fresh folder with that run\'s cache (no encoder work), median of the runs.');
    out.push('');
    out.push('| workspace | files | nodes | first: s (files/s, nodes/s) | warm: s (files/s, nodes/s) | peak RSS (MiB) | start |');
    out.push('|---|---:|---:|---:|---:|---:|---|');
    const row = (name: string, x: { result: FolderBenchResult; peakRssMiB: number } | undefined, start: string) => {
      if (!x) return;
      const a = x.result.first;
      out.push(
        `| ${name} | ${a.files.toLocaleString('en-US')} | ${a.nodes.toLocaleString('en-US')} | ${f1(a.seconds)} (${rate(a.filesPerSecond)}, ${f0(a.nodesPerSecond)}) | ${f1(x.result.warmMedian.seconds)} (${rate(x.result.warmMedian.filesPerSecond)}, ${f0(x.result.warmMedian.nodesPerSecond)}) | ${f0(x.peakRssMiB)} | ${start} |`,
      );
    };
    row(`pool as Markdown, one file per paragraph`, r.index.markdown, 'cache with the pool\'s sentence and paragraph vectors (headings and whole-file texts encoded)');
    row('PDFs', r.index.pdf, 'empty cache: every sentence encoded');
    out.push('');
    if (r.index.reindex) {
      const x = r.index.reindex.result;
      out.push(
        `**Re-index after one edit**: ${x.files.toLocaleString('en-US')} Markdown files indexed (${f1(x.initial.seconds)} s), then one file edited (a sentence appended) and the folder re-indexed, ${x.edits.length} times: median ${f2(x.medianSeconds)} s (${x.edits.map((e) => f2(e.seconds)).join(', ')} s). Each time the indexer's summary reported exactly 1 file parsed and ${(x.files - 1).toLocaleString('en-US')} reused (the benchmark fails otherwise). ${x.seededFrom ? `The embedding cache was seeded from ${x.seededFrom}, so it also holds vectors this workspace never uses.` : 'The embedding cache started empty, so it holds only this workspace\'s vectors, as in real use.'} A re-index reads and hashes every file, then writes a new index generation (item vectors, BM25, manifest) and a segment of the embedding cache with the new vectors (docs/encoder.md).`,
      );
      out.push('');
    }
  }
  if (r.encode) {
    out.push('## Encoder throughput in the same run');
    out.push('');
    out.push('`canopy bench encode --repeats 5` (method as in "## Encoder"): pipeline sentences/s.');
    out.push('');
    out.push('| pieces/sentence | batch | sentences/s |');
    out.push('|---:|---:|---:|');
    for (const x of r.encode.results) out.push(`| ${x.pieces} | ${x.batch} | ${f0(x.pipelineSentencesPerSec)} |`);
    out.push('');
  }
  return out.join('\n');
}

/** Replaces the text between the markers (appending the section when there are none). */
export function replaceBenchSection(doc: string, section: string): string {
  const block = `${BEGIN}\n\n${section.trim()}\n\n${END}`;
  const a = doc.indexOf('<!-- canopy-bench:begin');
  const b = doc.indexOf(END);
  if (a >= 0 && b > a) return `${doc.slice(0, a)}${block}${doc.slice(b + END.length)}`;
  const inspector = doc.search(/^## Inspector/m);
  if (inspector >= 0) return `${doc.slice(0, inspector)}${block}\n\n${doc.slice(inspector)}`;
  return `${doc.trimEnd()}\n\n${block}\n`;
}
