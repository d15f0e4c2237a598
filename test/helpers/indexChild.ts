/**
 * Child process for the kill -9 tests: indexes argv[2] into argv[3] (a local index folder) — or
 * into the store argv[4] names (a postgres:// URL) — with the real parser and indexer
 * (feature-hashing embeddings for speed), printing "generation N" when done — and, with
 * CANOPY_CHILD_PROGRESS set, a "progress i/n <file>" line as each file starts, so a kill test can
 * kill it at a known point mid-way instead of after a guessed delay.
 */
import { openIndexStore } from '../../src/core/index/storeSpec';
import { indexFolder } from './indexFolder';

async function main(root: string, dir: string, store?: string): Promise<void> {
  const s = store ? openIndexStore(store, dir) : undefined;
  try {
    const progress = process.env.CANOPY_CHILD_PROGRESS ? { report: (p: { done: number; total: number; message?: string }) => void process.stdout.write(`progress ${p.done}/${p.total} ${p.message ?? ''}\n`) } : undefined;
    const summary = await indexFolder(root, dir, 10, s, progress);
    process.stdout.write(`generation ${summary.generation}\n`);
  } finally {
    await s?.close();
  }
}

const [root, dir, store] = process.argv.slice(2) as [string, string, string | undefined];
main(root, dir, store).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
