/**
 * Shared by the built-in encoder tests: makes sure models/use-lite is converted and current
 * (running the build step when it is missing or stale, as `npm run build:model` would), and
 * loads the TF.js oracle fixture.
 */
import { readFileSync } from 'node:fs';

export interface Reference {
  sentences: string[];
  tokens: number[][];
  embeddings: number[][];
}

let checked: string | undefined;

/**
 * The converted model folder. The check reads and hashes the converter's inputs and outputs (about
 * 0.4 s of CPU, 0.6 s with loading the converter), so it runs once per test process, not once per
 * service or encoder a test opens — and not at all under npm test, whose build step has just
 * converted or checked the folder and names it in CANOPY_TEST_MODEL_DIR (scripts/test.mjs).
 */
export function builtinModelDir(): string {
  if (checked === undefined) {
    const checkedByRunner = process.env.CANOPY_TEST_MODEL_DIR;
    if (checkedByRunner) checked = checkedByRunner;
    else {
      // Loaded only here: the converter's modules cost ~0.2 s of CPU to load.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { ensureUseLiteModel } = require('../../../../tools/convert-use/main') as typeof import('../../../../tools/convert-use/main');
      checked = ensureUseLiteModel().outDir;
    }
  }
  return checked;
}

export function loadReference(): Reference {
  return JSON.parse(readFileSync(new URL('../../../fixtures/encoder/use_lite_reference.json', import.meta.url), 'utf8')) as Reference;
}
