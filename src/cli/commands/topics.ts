/**
 * `canopy topics fit|train`: the topic compass's offline steps over an existing index (design §4).
 * `fit` writes the metadata bank of the live generation (what indexing with
 * `canopy.topics.enabled` does); `train` trains the compass scorer from dataset qrels, gold
 * annotations, synthetic queries from the documents' structure, or an LLM teacher (when
 * CANOPY_LLM_BASE_URL / CANOPY_LLM_MODEL are set), with a seeded held-back split, and writes
 * `<index>/topic-scorer.json`, which the workspace uses whenever topics are on.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { coverage } from '../../core/annotate/overlap';
import { EmbeddingCache } from '../../core/encode/cache';
import { createEncoder } from '../../core/encode/createEncoder';
import { readAnnotations } from '../../eval/annotations';
import { CorpusIndex } from '../../core/index/corpusIndex';
import { paths } from '../../core/index/layout';
import { LocalStore } from '../../core/index/localStore';
import { OpenAiCompatibleChatModel } from '../../core/llm/openaiProvider';
import { HybridRetriever } from '../../core/retrieve/hybrid';
import { indexProfile } from '../../core/retrieve/profile';
import { candidatesOf } from '../../core/topics/decision';
import { bankFor, trainOnIndex } from '../../core/topics/compassIndex';
import { fitIndexTopics, writeTopicScorer } from '../../core/topics/indexTopics';
import { rememberLastQuery } from '../../core/topics/retriever';
import type { TrainingQuery } from '../../core/topics/trainIndex';
import { type CliIO, UsageError } from '../io';
import { cliLogger, defaultIndexDir, packageRoot, requireFolder } from '../runtime';

export const topicsHelp = `Usage: canopy topics fit|train [options]

The topic compass (MCompassRAG): corpus topics that re-rank the hybrid retrieval, no LLM at query time.

  fit      fit the topic model and metadata bank of the index's live generation (topics-<N>.bin)
  train    train the compass scorer and write <index>/topic-scorer.json

Options:
  --dir <dir>            the indexed folder (default .)
  --index <dir>          the index (default <dir>/.canopy/index)
  --k <n>                topics K for fit (default: by corpus size, √N in [8, 100])
  --refit                fit again even when the generation has a bank
train, one source:
  --qrels <tsv> --queries <jsonl>   dataset qrels (query-id, corpus-id, score; header line) and
                         queries ({_id, text}); a corpus id names an item by id, title or file name
  --annotations <file>   gold annotations JSONL (the items their anchors overlap are the gold)
  --synthetic [n]        n synthetic queries from the documents' structure (default min(500, items))
  --teacher [n]          n queries from an LLM teacher (needs CANOPY_LLM_BASE_URL, CANOPY_LLM_MODEL)
  --seed <n>             seed of the split, the sample and the training (default 1)
  --holdout <share>      share of queries held back and reported, never trained on (default 0.2)
  --epochs <n>           training epochs (default 30)
  --hidden <n>           scorer hidden units, 0 = linear (default 8)
  --json                 print the checkpoint's training record as JSON`;

function num(value: string | undefined, flag: string, check: (n: number) => boolean): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || !check(n)) throw new UsageError(`${flag} has an invalid value "${value}"`);
  return n;
}

const readJsonl = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

export async function runTopics(args: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'fit' && sub !== 'train') throw new UsageError('topics needs a subcommand: fit or train');
  // --synthetic / --teacher take an optional count: a following flag or nothing means the default.
  const norm = rest.flatMap((a, i) => ((a === '--synthetic' || a === '--teacher') && (rest[i + 1] === undefined || rest[i + 1]!.startsWith('--')) ? [a, ''] : [a]));
  const { values } = parseArgs({
    args: norm,
    options: {
      dir: { type: 'string' },
      index: { type: 'string' },
      k: { type: 'string' },
      refit: { type: 'boolean' },
      qrels: { type: 'string' },
      queries: { type: 'string' },
      annotations: { type: 'string' },
      synthetic: { type: 'string' },
      teacher: { type: 'string' },
      seed: { type: 'string' },
      holdout: { type: 'string' },
      epochs: { type: 'string' },
      hidden: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const root = requireFolder(values.dir ?? '.', io);
  const indexDir = values.index ? path.resolve(io.cwd, values.index) : defaultIndexDir(root);
  const logger = cliLogger(io, true);
  const store = new LocalStore(indexDir);
  const corpus = await CorpusIndex.open(store);
  const k = num(values.k, '--k', (n) => Number.isInteger(n) && n >= 1);
  if (sub === 'fit') {
    const started = Date.now();
    const bank = values.refit
      ? await fitIndexTopics(indexDir, store, corpus.generation, corpus.manifest.files, corpus.manifest.encoderId, k ? { k } : {})
      : await bankFor(corpus, store, { fit: true, ...(k ? { topics: { k } } : {}), logger });
    if (!bank) throw new UsageError('the index holds no items');
    io.out(`topics: K = ${bank.model.k} over ${bank.size} items, generation ${corpus.generation} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    for (let t = 0; t < Math.min(bank.model.k, 10); t++) io.out(`  ${t}: ${bank.model.labels[t]}`);
    return 0;
  }
  const sources = [values.qrels, values.annotations, values.synthetic, values.teacher].filter((v) => v !== undefined).length;
  if (sources !== 1) throw new UsageError('train needs exactly one of --qrels, --annotations, --synthetic, --teacher');
  const seed = num(values.seed, '--seed', Number.isInteger) ?? 1;
  const holdout = num(values.holdout, '--holdout', (n) => n >= 0 && n < 1);
  const epochs = num(values.epochs, '--epochs', (n) => Number.isInteger(n) && n >= 1);
  const hidden = num(values.hidden, '--hidden', (n) => Number.isInteger(n) && n >= 0 && n <= 64);
  const modelFolder = io.env.CANOPY_ENCODER_FOLDER;
  const encoder = await createEncoder(modelFolder ? { kind: 'onnx-folder', path: modelFolder } : { kind: 'builtin' }, { builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'), baseDir: root });
  if (encoder.id !== corpus.manifest.encoderId) throw new UsageError(`the index was built with encoder ${corpus.manifest.encoderId}, this run has ${encoder.id}`);
  const cache = await EmbeddingCache.open({ dir: paths(indexDir).embeddings, encoder, logger });
  try {
    const embedQuery = rememberLastQuery(async (text: string, signal?: AbortSignal) => (await cache.getOrEncode([text], encoder, signal))[0]!);
    // The scorer learns to re-rank the candidates a question gets today: the default retrieval (the encoder's profile).
    const fusion = (await indexProfile(indexDir, corpus.manifest.encoderId)).fusion;
    const hybrid = new HybridRetriever(corpus, embedQuery, { dense: true, bm25: true, fusion });
    const bank = await bankFor(corpus, store, { fit: true, ...(k ? { topics: { k } } : {}), logger });
    if (!bank) throw new UsageError('the index holds no items');
    let queries: TrainingQuery[] | undefined;
    if (values.qrels) {
      if (!values.queries) throw new UsageError('--qrels needs --queries <jsonl>');
      queries = await qrelQueries(path.resolve(io.cwd, values.qrels), path.resolve(io.cwd, values.queries), corpus);
    } else if (values.annotations) queries = await annotationQueries(path.resolve(io.cwd, values.annotations), corpus);
    const count = num(values.synthetic || values.teacher || undefined, '--synthetic/--teacher', (n) => Number.isInteger(n) && n >= 1);
    let llm: OpenAiCompatibleChatModel | undefined;
    if (values.teacher !== undefined) {
      const baseUrl = io.env.CANOPY_LLM_BASE_URL;
      const model = io.env.CANOPY_LLM_MODEL;
      if (!baseUrl || !model) throw new UsageError('--teacher needs CANOPY_LLM_BASE_URL and CANOPY_LLM_MODEL (and CANOPY_LLM_API_KEY when the endpoint needs a key)');
      llm = new OpenAiCompatibleChatModel({ baseUrl, model, ...(io.env.CANOPY_LLM_API_KEY ? { apiKey: io.env.CANOPY_LLM_API_KEY } : {}) });
    }
    const source = values.qrels ? 'qrels' : values.annotations ? 'annotations' : values.teacher !== undefined ? 'teacher' : 'synthetic';
    const { checkpoint } = await trainOnIndex(
      { corpus, bank, hybrid, embedQuery, source, candidates: candidatesOf(fusion), ...(queries ? { queries } : {}), ...(count ? { count } : {}), ...(llm ? { llm } : {}), logger },
      { seed, ...(holdout !== undefined ? { holdout } : {}), ...(epochs ? { epochs } : {}), ...(hidden !== undefined ? { hidden } : {}), onProgress: (m) => io.err(m) },
    );
    const file = await writeTopicScorer(indexDir, checkpoint);
    const t = checkpoint.training;
    if (values.json) io.out(JSON.stringify({ file, training: t }));
    else {
      io.out(`topic scorer (${t.source}): ${t.trainQueries} training queries, ${t.heldOutQueries} held back, seed ${t.seed}`);
      io.out(`loss: ${t.losses[0]} → ${t.losses[t.losses.length - 1]}`);
      if (t.candidates) io.out(`candidates: ${t.candidates}`);
      for (const [key, v] of Object.entries(t.heldOut ?? {})) io.out(`  held back ${key}: hybrid ${v.hybrid.toFixed(4)}, compass ${v.compass.toFixed(4)}`);
      for (const n of t.notes ?? []) io.out(`  note: ${n}`);
      io.out(`checkpoint: ${file}`);
    }
    return 0;
  } finally {
    await cache.save();
    await encoder.dispose();
  }
}

/** Items a dataset corpus id names: by item id, title, or file name without its extension. */
function itemResolver(corpus: CorpusIndex): (id: string) => string[] {
  const byKey = new Map<string, string[]>();
  const add = (key: string, item: string) => byKey.set(key, [...(byKey.get(key) ?? []), item]);
  for (const [file, entry] of Object.entries(corpus.manifest.files)) {
    const base = path.posix.basename(file).replace(/\.[^.]+$/, '');
    for (const id of entry.items) {
      add(id, id);
      add(base, id);
    }
  }
  return (id) => [...new Set(byKey.get(id) ?? [])];
}

async function qrelQueries(qrelsFile: string, queriesFile: string, corpus: CorpusIndex): Promise<TrainingQuery[]> {
  const resolve = itemResolver(corpus);
  const gold = new Map<string, Set<string>>();
  for (const line of readFileSync(qrelsFile, 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.trim().split('\t');
    if (!q || !d || !(Number(s) > 0)) continue;
    const set = gold.get(q) ?? new Set<string>();
    resolve(d).forEach((i) => set.add(i));
    gold.set(q, set);
  }
  const out: TrainingQuery[] = [];
  for (const rec of readJsonl(queriesFile)) {
    const id = String(rec._id ?? rec.id ?? '');
    const text = String(rec.text ?? rec.question ?? '');
    const positives = gold.get(id);
    if (id && text && positives && positives.size > 0) out.push({ id, text, positives: [...positives].sort() });
  }
  return out;
}

async function annotationQueries(file: string, corpus: CorpusIndex): Promise<TrainingQuery[]> {
  const byQuestion = new Map<string, Set<string>>();
  for (const a of readAnnotations(file)) {
    if (!corpus.hasFile(a.file)) continue;
    const doc = await corpus.document(a.file);
    const set = byQuestion.get(a.question) ?? new Set<string>();
    for (const item of doc.items) if (coverage(item.root.anchor, a.anchors) > 0 || doc.items.length === 1) set.add(item.id);
    byQuestion.set(a.question, set);
  }
  return [...byQuestion]
    .filter(([, s]) => s.size > 0)
    .map(([question, s], i) => ({ id: `annotation:${i}`, text: question, positives: [...s].sort() }));
}
