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

export function builtinModelDir(): string {
  return ensureUseLiteModel().outDir;
}

export function loadReference(): Reference {
  return JSON.parse(readFileSync(new URL('../../../fixtures/encoder/use_lite_reference.json', import.meta.url), 'utf8')) as Reference;
}
