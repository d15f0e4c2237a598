/**
 * Indexes a folder with the real discovery, parser and indexer and cheap feature-hashing
 * embeddings (no graph): the set-up the crash, fault and watcher tests share.
 */
import { runIndexer, type IndexSummary } from '../../src/core/index/indexer';
import { VectraStore } from '../../src/core/index/vectraStore';
import { discoverFiles } from '../../src/core/ingest/discover';
import { parseFile } from '../../src/core/ingest/parseFile';
import { hashEmbeddings } from './hashEmbeddings';

export async function indexFolder(root: string, dir: string, maxFileSizeMB = 1): Promise<IndexSummary> {
  return runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB }), {
    dir,
    store: new VectraStore(dir),
    parse: (rel, bytes) => parseFile(rel, bytes, { graph: false }),
    embeddings: hashEmbeddings(),
    parserVersion: 'test',
    branchingFactor: 2,
  });
}
