/**
 * The open pool as a real Canopy index, cached: every pool document is written once as a small
 * JSON file (`{id, title, text, spans}`) under the cache folder and indexed with the project's
 * own `runIndexer` (vectra item vectors, MiniSearch BM25, parsed trees on disk, node vectors
 * through the embedding cache), with a parse function that builds each document's tree from the
 * dataset's own sentence spans. A finished index is marked complete and reopened as is on reruns
 * (no re-indexing, no re-embedding).
 */
import { createHash } from 'node:crypto';
import { existsSync, promises as fs, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_VECTOR_RECIPE } from '../core/encode/nodeVectors';
import { CanopyError, ErrorCodes } from '../core/errors';
import { CorpusIndex } from '../core/index/corpusIndex';
import { runIndexer, type IndexSummary } from '../core/index/indexer';
import { INDEX_FORMAT, paths, TITLE_KEYS } from '../core/index/layout';
import { LocalStore } from '../core/index/localStore';
import type { Discovery, DiscoveredFile } from '../core/ingest/discover';
import type { ParsedDocument } from '../core/ingest/parsedDocument';
import { silentLogger, type Logger } from '../core/ports';
import { writeFileAtomic } from '../core/store/atomicFile';
import type { PoolDoc } from './datasets/types';
import type { EvalEmbeddings } from './embeddings';
import { poolDocItem } from './items';

/** Bump when pool trees are built differently. */
export const POOL_PARSER_VERSION = 'eval-pool-1';

export interface PoolIndex {
  dir: string;
  corpus: CorpusIndex;
  docOfItem: Map<string, string>;
  itemOfDoc: Map<string, string>;
  docs: Map<string, PoolDoc>;
  /** Set when this call built (or completed) the index. */
  built?: IndexSummary;
}

const sha = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');

export function poolFileOf(docId: string): string {
  const h = sha(docId);
  return `d/${h.slice(0, 2)}/${h.slice(2, 24)}.json`;
}

/** A parse function for pool files: the dataset's spans (or Canopy's splitter) → one item. */
export function poolParser(branchingFactor: number) {
  return async (relPath: string, bytes: Uint8Array): Promise<ParsedDocument> => {
    const doc = JSON.parse(Buffer.from(bytes).toString('utf8')) as PoolDoc;
    const { item } = poolDocItem(relPath, doc, branchingFactor);
    const items = item ? [item] : [];
    let nodes = 0;
    let leaves = 0;
    const walk = (n: { children: unknown[] }): void => {
      nodes++;
      if (n.children.length === 0) leaves++;
      for (const c of n.children) walk(c as { children: unknown[] });
    };
    for (const it of items) walk(it.root);
    return { file: relPath, format: 'json', title: doc.title, items, warnings: [], stats: { bytes: bytes.length, parseMs: 0, leaves, nodes } };
  };
}

/** Writes the pool documents as files (only those missing or changed) and returns the discovery over them. */
export async function writePoolFiles(filesDir: string, docs: PoolDoc[]): Promise<{ discovery: Discovery; docOfFile: Map<string, string> }> {
  const files: DiscoveredFile[] = [];
  const docOfFile = new Map<string, string>();
  for (const doc of docs) {
    const relPath = poolFileOf(doc.id);
    const abs = join(filesDir, relPath);
    const body = JSON.stringify({ id: doc.id, title: doc.title, text: doc.text, ...(doc.spans ? { spans: doc.spans } : {}) });
    let st = existsSync(abs) ? statSync(abs) : undefined;
    if (!st || st.size !== Buffer.byteLength(body)) {
      await fs.mkdir(join(filesDir, relPath.slice(0, relPath.lastIndexOf('/'))), { recursive: true });
      await fs.writeFile(abs, body);
      st = statSync(abs);
    }
    docOfFile.set(relPath, doc.id);
    files.push({ relPath, absPath: abs, format: 'json', size: st.size, mtimeMs: st.mtimeMs });
  }
  files.sort((a, b) => (a.relPath < b.relPath ? -1 : 1));
  return { discovery: { root: filesDir, files, skipped: [] }, docOfFile };
}

export interface PoolIndexOptions {
  cacheDir: string;
  branchingFactor: number;
  embeddings: EvalEmbeddings;
  /**
   * `lazy`: only item root vectors are encoded (retrieval studies that never score nodes); the
   * index is cached apart from the eager one, which the evaluation's compression needs.
   */
  nodeVectors?: 'eager' | 'lazy';
  logger?: Logger;
  signal?: AbortSignal;
}

/** Key of a pool: its documents' content, the branching factor, the tree builder, the encoder and the node-vector recipe. */
export function poolKey(docs: PoolDoc[], branchingFactor: number, encoderId: string): string {
  const h = createHash('sha256');
  h.update(`${POOL_PARSER_VERSION}\0${branchingFactor}\0${encoderId}\0${NODE_VECTOR_RECIPE}\0`);
  for (const d of docs) h.update(`${d.id}\0${d.title}\0${d.text}\0${JSON.stringify(d.spans ?? null)}\n`);
  return h.digest('hex').slice(0, 16);
}

export interface BuildOptions {
  branchingFactor: number;
  embeddings: Pick<EvalEmbeddings, 'id' | 'embedTexts' | 'save'>;
  /** Node vectors at index time (the product's behaviour) or only item root vectors (lazy). */
  nodeVectors?: 'eager' | 'lazy';
  logger?: Logger;
  signal?: AbortSignal;
}

/**
 * Indexes pool files into `indexDir` with `runIndexer`. Lazy mode encodes only one text per item,
 * its leaves joined (a pool paragraph's own text), and hands it back for every leaf, so the
 * derived root vector is that text's vector and no leaf is encoded: what an indexer that leaves
 * node vectors to query time would cost. The indexer stores only item vectors.
 */
export async function indexPoolFiles(discovery: Discovery, indexDir: string, options: BuildOptions): Promise<IndexSummary> {
  const log = options.logger ?? silentLogger;
  const real = options.embeddings.embedTexts;
  const embed =
    options.nodeVectors === 'lazy'
      ? async (texts: string[], signal?: AbortSignal) => {
          if (texts.length === 0) return [];
          const [root] = await real([texts.join(' ')], signal);
          return texts.map(() => root!);
        }
      : real;
  let last = 0;
  return runIndexer(
    discovery,
    {
      store: new LocalStore(indexDir),
      parse: poolParser(options.branchingFactor),
      embeddings: { id: options.embeddings.id, embed, persist: () => options.embeddings.save() },
      parserVersion: POOL_PARSER_VERSION,
      branchingFactor: options.branchingFactor,
      logger: log,
      progress: {
        report: ({ done, total }) => {
          if (done - last >= 500 || done === total) {
            last = done;
            log.log('info', `pool index: ${done}/${total} documents`);
          }
        },
      },
    },
    options.signal,
  );
}

/** The format of the index a cached pool holds, from its CURRENT pointer; undefined when unreadable. */
/** Whether a cached pool index is of this Canopy's index format and title keys. */
function cachedIsCurrent(indexDir: string): boolean {
  try {
    const current = JSON.parse(readFileSync(paths(indexDir).current, 'utf8')) as { format?: unknown; generation?: unknown };
    if (current.format !== INDEX_FORMAT || typeof current.generation !== 'number') return false;
    const manifest = JSON.parse(readFileSync(paths(indexDir).manifest(current.generation), 'utf8')) as { titleKeys?: unknown };
    return manifest.titleKeys === TITLE_KEYS;
  } catch {
    return false;
  }
}

export async function openPoolIndex(docs: PoolDoc[], options: PoolIndexOptions): Promise<PoolIndex> {
  const log = options.logger ?? silentLogger;
  const key = poolKey(docs, options.branchingFactor, options.embeddings.id);
  const lazy = options.nodeVectors === 'lazy';
  const dir = join(options.cacheDir, `pool-${lazy ? 'lazy-' : ''}${key}`);
  const indexDir = join(dir, 'index');
  const marker = join(dir, 'complete.json');
  const store = new LocalStore(indexDir);
  const { discovery, docOfFile } = await writePoolFiles(join(dir, 'files'), docs);
  let built: IndexSummary | undefined;
  // A cached pool index of an older index format or title keys (written by an earlier Canopy) is rebuilt.
  if (existsSync(marker) && !cachedIsCurrent(indexDir)) {
    log.log('info', `pool index ${indexDir} has an older index format or title keys: rebuilding it`);
    rmSync(marker, { force: true });
    rmSync(indexDir, { recursive: true, force: true });
  }
  if (!existsSync(marker)) {
    log.log('info', `indexing ${docs.length} pool documents into ${indexDir} (first run; cached afterwards)`);
    built = await indexPoolFiles(discovery, indexDir, { branchingFactor: options.branchingFactor, embeddings: options.embeddings, ...(lazy ? { nodeVectors: 'lazy' as const } : {}), logger: log, ...(options.signal ? { signal: options.signal } : {}) });
    if (built.errors.length > 0) {
      throw new CanopyError(ErrorCodes.internal, `pool index: ${built.errors.length} document(s) failed, first: ${built.errors[0]!.file}: ${built.errors[0]!.reason}`);
    }
    await writeFileAtomic(marker, JSON.stringify({ documents: docs.length, items: built.items, nodes: built.nodes, seconds: built.seconds, encoder: options.embeddings.id }));
  }
  const corpus = await CorpusIndex.open(store, { maxCachedDocs: 4096 });
  const docOfItem = new Map<string, string>();
  const itemOfDoc = new Map<string, string>();
  for (const [file, entry] of Object.entries(corpus.manifest.files)) {
    const docId = docOfFile.get(file);
    if (docId === undefined) continue;
    for (const id of entry.items) {
      docOfItem.set(id, docId);
      itemOfDoc.set(docId, id);
    }
  }
  const out: PoolIndex = { dir, corpus, docOfItem, itemOfDoc, docs: new Map(docs.map((d) => [d.id, d])) };
  if (built) out.built = built;
  return out;
}
