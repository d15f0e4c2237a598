/**
 * Node-encoder adapter training on a folder's gold annotations (design §10; `canopy train` and
 * the extension's Train command): node and query vectors come through the shared embedding
 * cache, and every candidate file is parsed in the parse workers, under the same memory and time
 * limits as indexing. On the same split, the retrieval fusion and the node-score weights are
 * fitted too (`scoringFit.ts`) and, where better on the held-back questions, written into the
 * index's retrieval profile for later questions; and the reader model is fine-tuned on the same
 * gold spans and written beside the index when it puts [1] on gold for more held-back questions
 * (train/readerFit.ts).
 */
import { bpeTokenCounter, type TokenCounter } from '../compress/tokens';
import type { CanopySettings } from '../config/settings';
import { silentLogger, type Logger } from '../ports';
import { prepareRun, trainPrepared, type TrainRunOptions, type TrainRunReport } from '../train/run';
import { fitReader } from '../train/readerFit';
import { builtinReaderModel } from '../judge/models';
import type { Embeddings } from './embeddings';
import type { IndexService } from './indexService';
import type { ParseWorkers } from './parseWorkers';
import { askConfiguration, fitScoring } from './scoringFit';

export interface TrainingServiceConfig {
  /** The workspace folder the annotations' paths are relative to. */
  root: string;
  embeddings: Embeddings;
  parseWorkers: ParseWorkers;
  /** The index the retrieval fusion is fitted over and whose retrieval profile receives the fitted weights; without it only the node-score weights are fitted, and nothing is written. */
  index?: IndexService;
  tokens?: TokenCounter;
  logger?: Logger;
}

/** What a training request chooses; the service supplies the folder, the vectors and the parser. */
export type TrainRequest = Omit<TrainRunOptions, 'root' | 'embed' | 'encoderId' | 'dim' | 'tokens' | 'logger' | 'parse'> & {
  /** Also fit the retrieval fusion and the node-score weights (default true). */
  fitScoring?: boolean;
  /** Report the scoring fit but write no retrieval profile. */
  scoringDryRun?: boolean;
  /**
   * Fit to and report the configuration the workspace's ask uses, writing the checkpoint only when
   * it is better there (default true; issue 36). False: the plain rule's report alone and the
   * checkpoint written as before (tests and research scripts of the plain rule).
   */
  askFit?: boolean;
};

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
    const { fitScoring: fit = true, scoringDryRun = false, askFit = true, ...recipe } = request;
    try {
      const options: TrainRunOptions = {
        branchingFactor: s.branchingFactor,
        ...recipe,
        root,
        embed: embeddings.embedTexts,
        encoderId: encoder.id,
        dim: encoder.dim,
        tokens: this.tokens,
        logger: this.log,
        parse: (rel, bytes, options) => parseWorkers.parse(s.maxParseMemoryMB, rel, bytes, options),
      };
      // What an ask in this workspace decides with: the run fits to it, reports it, and writes a
      // checkpoint only when it improves there (issue 36).
      if (askFit && !options.ask) options.ask = await askConfiguration(s, encoder.id, this.config.index?.indexDir);
      const prepared = await prepareRun(options);
      const report = await trainPrepared(prepared, options);
      if (!fit) return report;
      const index = this.config.index;
      let corpus;
      let corpusProblem: string | undefined;
      if (!index) corpusProblem = 'no index';
      else {
        try {
          corpus = await index.corpus(s);
        } catch (err) {
          corpusProblem = `the index cannot be opened (${(err as Error).message})`;
        }
      }
      report.scoring = await fitScoring({
        prepared,
        encoderId: encoder.id,
        indexDir: index?.indexDir ?? '',
        ...(corpus ? { corpus } : {}),
        ...(corpusProblem ? { corpusProblem } : {}),
        embedQuery: embeddings.embedQuery,
        tokens: this.tokens,
        source: request.annotationsFile,
        dryRun: scoringDryRun || !index,
        ...(report.ask ? { ask: report.ask } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      // The reader model, fine-tuned on the same gold spans and written beside the index only when better there.
      report.reader = await fitReader(prepared, {
        base: builtinReaderModel(),
        compressor: (options.ask ?? (await askConfiguration(s, encoder.id, index?.indexDir))).compressor,
        nodeScore: (options.ask ?? (await askConfiguration(s, encoder.id, index?.indexDir))).nodeScore,
        tokens: this.tokens,
        ...(index ? { indexDir: index.indexDir } : {}),
        dryRun: scoringDryRun || !index,
        ...(request.signal ? { signal: request.signal } : {}),
      });
      return report;
    } finally {
      await embeddings.save();
    }
  }
}
