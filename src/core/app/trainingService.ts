/**
 * Node-encoder adapter training on a folder's gold annotations (design §10; `canopy train` and
 * the extension's Train command): node and query vectors come through the shared embedding
 * cache, and every candidate file is parsed in the parse workers, under the same memory and time
 * limits as indexing.
 */
import { bpeTokenCounter, type TokenCounter } from '../compress/tokens';
import type { CanopySettings } from '../config/settings';
import { silentLogger, type Logger } from '../ports';
import { runTraining, type TrainRunOptions, type TrainRunReport } from '../train/run';
import type { Embeddings } from './embeddings';
import type { ParseWorkers } from './parseWorkers';

export interface TrainingServiceConfig {
  /** The workspace folder the annotations' paths are relative to. */
  root: string;
  embeddings: Embeddings;
  parseWorkers: ParseWorkers;
  tokens?: TokenCounter;
  logger?: Logger;
}

/** What a training request chooses; the service supplies the folder, the vectors and the parser. */
export type TrainRequest = Omit<TrainRunOptions, 'root' | 'embed' | 'encoderId' | 'dim' | 'tokens' | 'logger' | 'parse'>;

export class TrainingService {
  private readonly log: Logger;
  private readonly tokens: TokenCounter;

  constructor(private readonly config: TrainingServiceConfig) {
    this.log = config.logger ?? silentLogger;
    this.tokens = config.tokens ?? bpeTokenCounter();
  }

  /** Trains with these settings (branching factor, parse memory limit) and the request's recipe. */
  async train(s: CanopySettings, request: TrainRequest): Promise<TrainRunReport> {
    const { embeddings, parseWorkers, root } = this.config;
    const { encoder } = await embeddings.load();
    try {
      return await runTraining({
        branchingFactor: s.branchingFactor,
        ...request,
        root,
        embed: embeddings.embedTexts,
        encoderId: encoder.id,
        dim: encoder.dim,
        tokens: this.tokens,
        logger: this.log,
        parse: (rel, bytes, options) => parseWorkers.parse(s.maxParseMemoryMB, rel, bytes, options),
      });
    } finally {
      await embeddings.save();
    }
  }
}
