/**
 * The built-in judgment models, shipped in the repository as small JSON files (judge/models/*.json)
 * written by the training script (tools/judge: `npm run train:judge`, seeded, from the development
 * data). Parsed once, on first use.
 */
import { LinearModel } from './linearModel';
import criticFile from './models/critic.json';
import readerFile from './models/reader.json';

let reader: LinearModel | undefined;

/** The reader model: the probability that a leaf of the kept evidence answers the question. */
export function builtinReaderModel(): LinearModel {
  return (reader ??= LinearModel.from(readerFile, 'the built-in reader model (src/core/judge/models/reader.json)'));
}

let critic: LinearModel | undefined;

/** The critic model: the probability that the kept evidence already holds the answer. */
export function builtinCriticModel(): LinearModel {
  return (critic ??= LinearModel.from(criticFile, 'the built-in critic model (src/core/judge/models/critic.json)'));
}
