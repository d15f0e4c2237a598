/**
 * Dense-only retrieval on a BEIR-format set (e.g. SciFact) with the built-in encoder:
 * encode title + text of every document (long ones with the windowed normalised-mean
 * strategy), encode the judged queries, rank all documents by cosine (brute force), and
 * report nDCG@10 and how long encoding took. Not part of the tests.
 *
 *   node --import tsx tools/eval-scifact-dense.ts --dir /path/to/beir_scifact
 *   node --import tsx tools/eval-scifact-dense.ts --corpus c0.jsonl --corpus c1.jsonl \
 *        --queries queries.jsonl --qrels qrels/test.tsv [--model-dir models/use-lite]
 *        [--cache DIR] [--limit-docs N] [--k 10] [--json]
 *
 * Schemas: corpus lines {_id, title, text}; query lines {_id, text}; qrels TSV
 * `query-id  corpus-id  score` with a header line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EmbeddingCache } from '../src/core/encode/cache';
import { UseLiteEncoder } from '../src/core/encode/useLiteEncoder';
import { meanNdcgAtK, type Qrels } from '../src/core/retrieve/metrics';
import { defaultOutDir } from './convert-use/main';

interface Doc {
  _id: string;
  title?: string;
  text?: string;
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

function readQrels(path: string): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  const lines = readFileSync(path, 'utf8').split('\n').slice(1);
  for (const line of lines) {
    const [q, d, s] = line.trim().split('\t');
    if (!q || !d || s === undefined) continue;
    let m = out.get(q);
    if (!m) out.set(q, (m = new Map()));
    m.set(d, Number(s));
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      corpus: { type: 'string', multiple: true },
      queries: { type: 'string' },
      qrels: { type: 'string' },
      'model-dir': { type: 'string' },
      cache: { type: 'string' },
      'limit-docs': { type: 'string' },
      k: { type: 'string' },
      batch: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  let corpusFiles = values.corpus ?? [];
  let queriesFile = values.queries;
  let qrelsFile = values.qrels;
  if (values.dir) {
    const dir = resolve(values.dir);
    if (corpusFiles.length === 0) corpusFiles = readdirSync(dir).filter((f) => /^corpus.*\.jsonl$/.test(f)).sort().map((f) => join(dir, f));
    queriesFile ??= join(dir, 'queries.jsonl');
    qrelsFile ??= join(dir, 'qrels', readdirSync(join(dir, 'qrels')).filter((f) => f.endsWith('.tsv')).sort()[0] ?? 'test.tsv');
  }
  if (corpusFiles.length === 0 || !queriesFile || !qrelsFile) {
    throw new Error('give --dir <beir folder>, or --corpus (repeatable), --queries and --qrels');
  }
  const k = Number(values.k ?? 10);
  const log = (m: string): void => {
    process.stderr.write(`${m}\n`);
  };

  let docs = corpusFiles.flatMap((f) => readJsonl<Doc>(f));
  if (values['limit-docs']) docs = docs.slice(0, Number(values['limit-docs']));
  const qrels = readQrels(qrelsFile);
  const queries = readJsonl<Doc>(queriesFile).filter((q) => qrels.has(q._id));
  log(`${docs.length} documents, ${queries.length} judged queries (${qrelsFile})`);

  const encoder = await UseLiteEncoder.create({ modelDir: values['model-dir'] ? resolve(values['model-dir']) : defaultOutDir, batchSize: Number(values.batch ?? 32) });
  const cache = values.cache ? await EmbeddingCache.open({ dir: resolve(values.cache), encoder }) : undefined;
  const encode = (texts: string[]): Promise<Float32Array[]> => (cache ? cache.getOrEncode(texts, encoder) : encoder.encode(texts));
  const docTexts = docs.map((d) => `${d.title ?? ''} ${d.text ?? ''}`.trim());
  const pieces = docTexts.map((t) => encoder.countPieces(t));
  const windows = docTexts.reduce((a, t) => a + encoder.windows(t).length, 0);

  const t0 = performance.now();
  const docVecs: Float32Array[] = [];
  const chunk = 256;
  for (let i = 0; i < docTexts.length; i += chunk) {
    docVecs.push(...(await encode(docTexts.slice(i, i + chunk))));
    log(`encoded ${Math.min(i + chunk, docTexts.length)}/${docTexts.length} documents (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  const docSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const queryVecs = await encode(queries.map((q) => q.text ?? ''));
  const querySeconds = (performance.now() - t1) / 1000;
  await cache?.save();
  await encoder.dispose();

  // Brute-force cosine (vectors are unit length, so the dot product), keeping the top k.
  const t2 = performance.now();
  const runs = new Map<string, string[]>();
  queries.forEach((q, qi) => {
    const qv = queryVecs[qi] as Float32Array;
    const top: { id: string; s: number }[] = [];
    docVecs.forEach((dv, di) => {
      let s = 0;
      for (let j = 0; j < qv.length; j++) s += (qv[j] as number) * (dv[j] as number);
      if (top.length < k || s > (top[top.length - 1] as { s: number }).s) {
        top.push({ id: docs[di]?._id as string, s });
        top.sort((a, b) => b.s - a.s);
        if (top.length > k) top.pop();
      }
    });
    runs.set(
      q._id,
      top.map((t) => t.id),
    );
  });
  const searchSeconds = (performance.now() - t2) / 1000;
  const judged = new Map<string, Qrels>([...qrels].filter(([q]) => runs.has(q)));
  const { mean, queries: scored } = meanNdcgAtK(runs, judged, k);

  const sorted = [...pieces].sort((a, b) => a - b);
  const result = {
    encoder: encoder.id,
    documents: docs.length,
    windows,
    medianDocPieces: sorted[Math.floor(sorted.length / 2)],
    docsOver128Pieces: pieces.filter((p) => p > 128).length,
    queries: scored,
    [`ndcg@${k}`]: Math.round(mean * 10000) / 10000,
    docEncodeSeconds: Math.round(docSeconds * 10) / 10,
    docsPerSecond: Math.round((docs.length / docSeconds) * 10) / 10,
    queryEncodeSeconds: Math.round(querySeconds * 10) / 10,
    searchSeconds: Math.round(searchSeconds * 10) / 10,
    cached: cache !== undefined,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else for (const [key, v] of Object.entries(result)) process.stdout.write(`${key}: ${v}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`eval-scifact-dense: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
