/**
 * Writes (--write) or checks the digest of indexing the repository's fixtures
 * (test/helpers/indexDigest.ts): test/fixtures/index-digest/expected.json is the reference the
 * index-digest test compares every later indexing path against. Regenerate it only for a change
 * that is meant to change the index's content (a parser change, a new PARSER_VERSION), and say so
 * in the commit.
 *
 *   node --import tsx tools/index-digest.ts [--write]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compareDigests, fixtureIndexDigest, type IndexDigest } from '../test/helpers/indexDigest';

const expectedFile = fileURLToPath(new URL('../test/fixtures/index-digest/expected.json', import.meta.url));

async function main(): Promise<void> {
  const digest = await fixtureIndexDigest();
  if (process.argv.includes('--write')) {
    writeFileSync(expectedFile, `${JSON.stringify(digest, null, 1)}\n`);
    console.log(`wrote ${expectedFile} (${Object.keys(digest.files).length} files)`);
    return;
  }
  const diff = compareDigests(JSON.parse(readFileSync(expectedFile, 'utf8')) as IndexDigest, digest);
  console.log(diff.length === 0 ? 'the same index content' : diff.join('\n'));
  process.exitCode = diff.length === 0 ? 0 : 1;
}

void main();
