/**
 * The core services of one folder and index, wired the way the CLI and the extension wire them
 * (constructors, vectra as the store), for tests: each test is its own composition root.
 * `settings` is what the tests pass with each request; `close()` stops the parse workers and
 * saves and releases the encoder.
 */
import { join } from 'node:path';
import { AdapterCheckpoints } from '../../src/core/app/adapters';
import { AskService } from '../../src/core/app/askService';
import { Embeddings } from '../../src/core/app/embeddings';
import { IndexService } from '../../src/core/app/indexService';
import { ParseWorkers } from '../../src/core/app/parseWorkers';
import { TraceStore } from '../../src/core/app/traceStore';
import { TrainingService } from '../../src/core/app/trainingService';
import { resolveSettings, type CanopySettings } from '../../src/core/config/settings';
import type { EncoderConfig } from '../../src/core/encode/encoder';
import { VectraStore } from '../../src/core/index/vectraStore';
import type { Logger } from '../../src/core/ports';
import { builtinModelDir } from '../unit/encode/support/builtinModel';

export interface TestServices {
  root: string;
  indexDir: string;
  settings: CanopySettings;
  embeddings: Embeddings;
  parseWorkers: ParseWorkers;
  index: IndexService;
  traces: TraceStore;
  ask: AskService;
  training: TrainingService;
  close(): Promise<void>;
}

export function openServices(o: { root: string; indexDir: string; settings?: Partial<CanopySettings>; encoder?: EncoderConfig; logger?: Logger }): TestServices {
  const logger = o.logger;
  const encoder = o.encoder ?? { kind: 'builtin' };
  const embeddings = new Embeddings({ indexDir: o.indexDir, encoder: () => encoder, builtinModelDir: builtinModelDir(), baseDir: o.root, ...(logger ? { logger } : {}) });
  const parseWorkers = new ParseWorkers(logger);
  const store = new VectraStore(o.indexDir);
  const index = new IndexService({ root: o.root, indexDir: o.indexDir, embeddings, parseWorkers, storeFor: () => store, ...(logger ? { logger } : {}) });
  return {
    root: o.root,
    indexDir: o.indexDir,
    settings: resolveSettings(o.settings ?? {}),
    embeddings,
    parseWorkers,
    index,
    traces: new TraceStore(join(o.indexDir, 'traces'), logger),
    ask: new AskService({ index, embeddings, adapters: new AdapterCheckpoints(o.root), ...(logger ? { logger } : {}) }),
    training: new TrainingService({ root: o.root, embeddings, parseWorkers, ...(logger ? { logger } : {}) }),
    async close() {
      await parseWorkers.close();
      await embeddings.dispose();
    },
  };
}
