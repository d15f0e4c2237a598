/**
 * Child process for the kill -9 test: indexes argv[2] into argv[3] with the real parser and
 * indexer (feature-hashing embeddings for speed), printing "generation N" when done.
 */
import { runIndexer } from '../../src/core/index/indexer';
import { VectraStore } from '../../src/core/index/vectraStore';
import { discoverFiles } from '../../src/core/ingest/discover';
import { parseFile } from '../../src/core/ingest/parseFile';
import { hashEmbeddings } from './hashEmbeddings';

async function main(root: string, dir: string): Promise<void> {
  const discovery = await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 10 });
  const summary = await runIndexer(discovery, {
    dir,
    store: new VectraStore(dir),
    parse: (rel, bytes) => parseFile(rel, bytes, { graph: false }),
    embeddings: hashEmbeddings(),
    parserVersion: 'test',
    branchingFactor: 2,
  });
  process.stdout.write(`generation ${summary.generation}\n`);
}

const [root, dir] = process.argv.slice(2) as [string, string];
main(root, dir).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
