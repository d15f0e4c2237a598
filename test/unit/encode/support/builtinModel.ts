/**
 * Shared by the built-in encoder tests: makes sure models/use-lite is converted and current
 * (running the build step when it is missing or stale, as `npm run build:model` would), and
 * loads the TF.js oracle fixture.
 */
import { readFileSync } from 'node:fs';
import { ensureUseLiteModel } from '../../../../tools/convert-use/main';

export interface Reference {
  sentences: string[];
  tokens: number[][];
  embeddings: number[][];
}

let checked: string | undefined;

/**
 * The converted model folder. The check reads and hashes the converter's inputs and outputs (about
 * 0.4 s of CPU), so it runs once per test process, not once per service or encoder a test opens.
 */
export function builtinModelDir(): string {
  checked ??= ensureUseLiteModel().outDir;
  return checked;
}

export function loadReference(): Reference {
  return JSON.parse(readFileSync(new URL('../../../fixtures/encoder/use_lite_reference.json', import.meta.url), 'utf8')) as Reference;
}
