/**
 * `npm run bench`: runs the benchmarks, each measurement in its own process (so peak RSS is that
 * measurement's), and rewrites Canopy's own sections of BENCHMARKS.md between the
 * `canopy-bench` markers (the "## Encoder" section above them and any "## Inspector" section are
 * left alone).
 *
 *   npm run bench -- --data /path/to/data [--only corpus,index,vectors,encode,realdocs] [--sizes 10000,all]
 *                    [--query-count 50] [--repeats 3] [--results out.json] [--from-json results.json]
 *                    [--skip-pdf] [--merge vectors=<file>] [--merge index.pdf=<file>]
 *
 * `--merge key=<file>` takes a measurement made by a separate `canopy bench … --json` run
 * (vectors, index.markdown, index.pdf, index.reindex, encode) into the results; `realdocs=<file>`
 * takes a `canopy bench realdocs --out <file>` report.
 *
 * `realdocs` (the real-document benchmark of issue 16, `canopy bench realdocs --data <dir>`) has
 * its own section of BENCHMARKS.md between its own markers; it is rewritten only when the results
 * hold a real-document report.
 *
 * Inputs are found by shape under --data (nothing is named): pools and corpora (`pool*.jsonl`,
 * `corpus*.jsonl`, SQuAD `articles.jsonl`) one folder down, largest first, as the corpus; the
 * questions file beside the largest pool for query latency; the folder with the most PDFs for
 * the PDF indexing figure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { detectSchema } from '../src/eval/datasets/detect';
import { readJsonLines } from '../src/eval/datasets/jsonl';
import { renderBenchMarkdown, replaceBenchSection, type BenchResults as CoreBenchResults } from '../src/eval/bench/benchReport';
import type { RealDocsReport } from '../src/eval/bench/realDocs';
import { renderRealDocsMarkdown, replaceRealDocsSection } from '../src/eval/bench/realDocsReport';

type BenchResults = CoreBenchResults & { realdocs?: RealDocsReport };

const repo = resolve(__dirname, '..');

function lines(file: string): number {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').length;
}

interface Inputs {
  pools: Array<{ file: string; docs: number }>;
  queries?: string;
  pdfDir?: string;
}

function findInputs(data: string): Inputs {
  const pools: Inputs['pools'] = [];
  let pdfDir: string | undefined;
  let pdfCount = 0;
  const walk = (dir: string, depth: number) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (depth < 2) walk(p, depth + 1);
        continue;
      }
      if (/^(pool|corpus).*\.jsonl$/.test(name) || name === 'articles.jsonl') pools.push({ file: p, docs: name === 'articles.jsonl' ? 0 : lines(p) });
    }
    const pdfs = readdirSync(dir).filter((n) => n.toLowerCase().endsWith('.pdf')).length;
    if (pdfs > pdfCount) {
      pdfCount = pdfs;
      pdfDir = dir;
    }
  };
  walk(data, 0);
  // SQuAD articles hold several paragraphs per line: count paragraphs.
  for (const p of pools) if (p.docs === 0) p.docs = readJsonLines(p.file).reduce((a, l) => a + ((l.value as { paragraphs?: unknown[] }).paragraphs?.length ?? 0), 0);
  // Group by folder; the largest pool first (its folder's questions drive latency).
  const byDir = new Map<string, Inputs['pools']>();
  for (const p of pools) {
    const d = resolve(p.file, '..');
    byDir.set(d, [...(byDir.get(d) ?? []), p]);
  }
  const dirs = [...byDir.entries()].sort((a, b) => b[1].reduce((s, x) => s + x.docs, 0) - a[1].reduce((s, x) => s + x.docs, 0));
  let queries: string | undefined;
  const top = dirs[0]?.[0];
  if (top) {
    for (const name of readdirSync(top).sort()) {
      if (!name.endsWith('.jsonl') || /^(pool|corpus)/.test(name) || name === 'articles.jsonl') continue;
      const first = readJsonLines(join(top, name))[0];
      if (first && 'schema' in detectSchema(first.value)) {
        queries = join(top, name);
        break;
      }
    }
  }
  return { pools: dirs.flatMap(([, ps]) => ps), ...(queries ? { queries } : {}), ...(pdfDir ? { pdfDir } : {}) };
}

function canopy(args: string[]): unknown {
  const started = Date.now();
  process.stderr.write(`bench: canopy ${args.join(' ')}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', "require('./src/cli/main.ts').main(process.argv.slice(1)).then((c) => { process.exitCode = c; })", '--', ...args], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`canopy ${args.join(' ')} failed (exit ${r.status})`);
  process.stderr.write(`bench: done in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const out = r.stdout.trim().split('\n');
  return JSON.parse(out[out.length - 1]!);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      only: { type: 'string' },
      sizes: { type: 'string' },
      'query-count': { type: 'string' },
      repeats: { type: 'string' },
      results: { type: 'string' },
      'from-json': { type: 'string' },
      file: { type: 'string' },
      'skip-pdf': { type: 'boolean' },
      merge: { type: 'string', multiple: true },
    },
  });
  const benchFile = resolve(repo, values.file ?? 'BENCHMARKS.md');
  let results: BenchResults;
  if (values['from-json']) results = JSON.parse(readFileSync(resolve(values['from-json']), 'utf8')) as BenchResults;
  else {
    const data = values.data ?? process.env.CANOPY_BENCH_DATA;
    if (!data || !existsSync(data)) throw new Error('give the data folder: npm run bench -- --data <dir> (or set CANOPY_BENCH_DATA)');
    const inputs = findInputs(resolve(data));
    const only = new Set((values.only ?? 'encode,corpus,vectors,index,realdocs').split(','));
    // The pool benchmarks need pools and questions; the real-document one finds its own inputs.
    if ((inputs.pools.length === 0 || !inputs.queries) && ['corpus', 'vectors', 'index'].some((k) => only.has(k))) throw new Error(`no pools or questions found under ${data}`);
    const queries = inputs.queries ?? '';
    const total = inputs.pools.reduce((a, p) => a + p.docs, 0);
    const sizes = (values.sizes ?? '10000,all').split(',').map((s) => (s === 'all' ? total : Math.min(total, Number(s))));
    const q = values['query-count'] ?? '50';
    const repeats = values.repeats ?? '3';
    const poolArgs = inputs.pools.flatMap((p) => ['--pool', p.file]);
    results = { createdAt: new Date().toISOString(), inputs: { pools: inputs.pools.map((p) => ({ file: p.file, docs: p.docs })), queries: inputs.queries, pdfDir: inputs.pdfDir ?? null }, queryCount: Number(q) } as BenchResults;
    const cache = join(process.env.CANOPY_EVAL_CACHE ?? join(homedir(), '.cache', 'canopy-eval'));
    const save = () => values.results && writeFileSync(resolve(values.results), JSON.stringify(results, null, 1));
    if (only.has('encode')) {
      results.encode = canopy(['bench', 'encode', '--repeats', '5', '--json']) as BenchResults['encode'];
      save();
    }
    if (only.has('corpus')) {
      results.corpus = [];
      for (const n of sizes) {
        for (const engine of ['canopy', 'vectra']) {
          const common = [...poolArgs, '--docs', String(n), '--queries', queries, '--query-count', q, '--engine', engine];
          const prepared = canopy(['bench', 'corpus', ...common, '--prepare', '--json']) as { prepared: unknown };
          const r = canopy(['bench', 'corpus', ...common, '--repeats', repeats, '--json']) as { machine: unknown; result: unknown };
          results.corpus.push({ ...(r as object), prepared: prepared.prepared } as NonNullable<BenchResults['corpus']>[number]);
          save();
        }
      }
    }
    if (only.has('vectors')) {
      results.vectors = canopy(['bench', 'vectors', ...poolArgs, '--docs', '2000', '--queries', queries, '--query-count', q, '--json']) as BenchResults['vectors'];
      save();
    }
    if (only.has('index')) {
      const first = inputs.pools[0]!;
      const group = inputs.pools.filter((p) => resolve(p.file, '..') === resolve(first.file, '..'));
      const md = group.flatMap((p) => ['--markdown-from', p.file]);
      // Seed from the corpus run's own cache when it exists, else from the shared embedding cache.
      const corpusSeed = join(cache, 'bench', `corpus-canopy-${Math.min(sizes[0]!, total)}`, 'emb');
      const seed = existsSync(corpusSeed) ? corpusSeed : join(cache, 'embeddings');
      results.index = {};
      results.index.markdown = canopy(['bench', 'index', ...md, '--seed-cache', seed, '--json']) as never;
      save();
      results.index.reindex = canopy(['bench', 'index', '--reindex', '1000', ...md, '--seed-cache', seed, '--json']) as never;
      save();
      if (inputs.pdfDir && !values['skip-pdf']) {
        results.index.pdf = canopy(['bench', 'index', '--folder', inputs.pdfDir, '--cold', '--repeats', '1', '--json']) as never;
        save();
      }
    }
    if (only.has('realdocs')) {
      results.realdocs = canopy(['bench', 'realdocs', '--data', resolve(data), '--json']) as RealDocsReport;
      save();
    }
  }
  for (const m of values.merge ?? []) {
    const eq = m.indexOf('=');
    const key = m.slice(0, eq);
    const text = readFileSync(resolve(m.slice(eq + 1)), 'utf8').trim();
    // A realdocs report is written pretty-printed by --out; the others are one JSON line at the end.
    const value = JSON.parse(key === 'realdocs' ? text : text.split('\n').pop()!) as never;
    if (key === 'vectors' || key === 'encode' || key === 'realdocs') (results as unknown as Record<string, unknown>)[key] = value;
    else if (key.startsWith('index.')) (results.index ??= {})[key.slice(6) as 'pdf' | 'markdown' | 'reindex'] = value;
    else throw new Error(`--merge: unknown key ${key}`);
  }
  if (values.results) writeFileSync(resolve(values.results), JSON.stringify(results, null, 1));
  let current = existsSync(benchFile) ? readFileSync(benchFile, 'utf8') : '# Benchmarks\n';
  if (results.realdocs) current = replaceRealDocsSection(current, renderRealDocsMarkdown(results.realdocs));
  // `--only realdocs` leaves the pool benchmarks' section as it is.
  if (results.encode || results.corpus || results.vectors || results.index) current = replaceBenchSection(current, renderBenchMarkdown(results));
  writeFileSync(benchFile, current);
  process.stderr.write(`bench: wrote ${benchFile}\n`);
}

main();
