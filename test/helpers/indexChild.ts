/**
 * Child process for the kill -9 test: indexes argv[2] into argv[3] with the real parser and
 * indexer (feature-hashing embeddings for speed), printing "generation N" when done.
 */
import { indexFolder } from './indexFolder';

async function main(root: string, dir: string): Promise<void> {
  const summary = await indexFolder(root, dir, 10);
  process.stdout.write(`generation ${summary.generation}\n`);
}

const [root, dir] = process.argv.slice(2) as [string, string];
main(root, dir).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
