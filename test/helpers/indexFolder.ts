/**
 * Indexes a folder with the real discovery, parser and indexer and cheap feature-hashing
 * embeddings (no graph): the set-up the crash, fault and watcher tests share. The indexer
 * encodes for the parse (`semanticEdges`), as the IndexService has it do, so those tests run
 * the pipeline the hosts run: parses ahead, encoder calls across files, writes behind. The index goes to
 * the local store in `dir`, or to `store` when given.
 */
import type { IndexStore } from '../../src/core/index/indexStore';
import { runIndexer, type IndexSummary } from '../../src/core/index/indexer';
import { LocalStore } from '../../src/core/index/localStore';
import { discoverFiles } from '../../src/core/ingest/discover';
import { parseFile } from '../../src/core/ingest/parseFile';
import type { ProgressSink } from '../../src/core/ports';
import { hashEmbeddings } from './hashEmbeddings';

export async function indexFolder(root: string, dir: string, maxFileSizeMB = 1, store?: IndexStore, progress?: ProgressSink): Promise<IndexSummary> {
  return runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB }), {
    store: store ?? new LocalStore(dir),
    parse: (rel, bytes) => parseFile(rel, bytes, { graph: false }),
    embeddings: hashEmbeddings(),
    parserVersion: 'test',
    branchingFactor: 2,
    semanticEdges: true,
    ...(progress ? { progress } : {}),
  });
}
