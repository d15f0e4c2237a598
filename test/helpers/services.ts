/**
 * The core services of one folder and index, wired the way the CLI and the extension wire them
 * (constructors, the store `settings.store` names: local by default), for tests: each test is its own composition root.
 * `settings` is what the tests pass with each request; `close()` stops the parse workers and
 * saves and releases the encoder.
 */
import { join } from 'node:path';
import { AdapterCheckpoints } from '../../src/core/app/adapters';
import { AskService } from '../../src/core/app/askService';
import { Embeddings } from '../../src/core/app/embeddings';
import { IndexService } from '../../src/core/app/indexService';
import { IndexStores } from '../../src/core/app/indexStores';
import { ParseWorkers } from '../../src/core/app/parseWorkers';
import { TraceStore } from '../../src/core/app/traceStore';
import { TrainingService } from '../../src/core/app/trainingService';
import { resolveSettings, type CanopySettings } from '../../src/core/config/settings';
import type { EncoderConfig } from '../../src/core/encode/encoder';
import type { Logger } from '../../src/core/ports';
import { builtinModelDir } from '../unit/encode/support/builtinModel';

export interface TestServices {
  root: string;
  indexDir: string;
  settings: CanopySettings;
  embeddings: Embeddings;
  parseWorkers: ParseWorkers;
  stores: IndexStores;
  index: IndexService;
  traces: TraceStore;
  ask: AskService;
  training: TrainingService;
  close(): Promise<void>;
}

export function openServices(o: { root: string; indexDir: string; settings?: Partial<CanopySettings>; encoder?: EncoderConfig; logger?: Logger }): TestServices {
  const logger = o.logger;
  const encoder = o.encoder ?? { kind: 'builtin' };
  const settings = resolveSettings(o.settings ?? {});
  const stores = new IndexStores(o.indexDir);
  const embeddings = new Embeddings({ store: () => stores.get(settings.store), encoder: () => encoder, builtinModelDir: builtinModelDir(), baseDir: o.root, ...(logger ? { logger } : {}) });
  const parseWorkers = new ParseWorkers(logger);
  const index = new IndexService({ root: o.root, indexDir: o.indexDir, embeddings, parseWorkers, storeFor: stores.storeFor, ...(logger ? { logger } : {}) });
  return {
    root: o.root,
    indexDir: o.indexDir,
    settings,
    embeddings,
    parseWorkers,
    stores,
    index,
    traces: new TraceStore(join(o.indexDir, 'traces'), logger),
    ask: new AskService({ index, embeddings, adapters: new AdapterCheckpoints(o.root), ...(logger ? { logger } : {}) }),
    training: new TrainingService({ root: o.root, embeddings, parseWorkers, index, ...(logger ? { logger } : {}) }),
    async close() {
      await parseWorkers.close();
      await embeddings.dispose();
      await stores.close();
    },
  };
}
