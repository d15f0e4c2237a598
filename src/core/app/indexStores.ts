/**
 * The index stores of one host, chosen by the `canopy.store` setting (`--store` in the CLI): the
 * services ask `storeFor(settings)` on every request, and the same setting returns the same store
 * object (its connections, its open generation), so a changed setting switches the store on the
 * next request. Every store opened is closed with the host.
 */
import type { CanopySettings } from '../config/settings';
import type { IndexStore } from '../index/indexStore';
import { openIndexStore, parseStoreSpec } from '../index/storeSpec';

export class IndexStores {
  private readonly stores = new Map<string, IndexStore>();

  /** `indexDir`: where a local store lives. */
  constructor(private readonly indexDir: string) {}

  /** The store a spec names (`local`, `local?vectors=i8`, `postgres://…`); CanopyError(E_BAD_INPUT) for a bad one. */
  get(spec: string | undefined): IndexStore {
    // Keyed by the parsed spec, so `local` and the empty default are one store.
    const key = JSON.stringify(parseStoreSpec(spec));
    let store = this.stores.get(key);
    if (!store) {
      store = openIndexStore(spec, this.indexDir);
      this.stores.set(key, store);
    }
    return store;
  }

  /** The store of a request's settings (IndexService's `storeFor`). */
  readonly storeFor = (settings: Pick<CanopySettings, 'store'>): IndexStore => this.get(settings.store);

  /** Closes every store opened here (connections, an in-process database and its lock). */
  async close(): Promise<void> {
    const stores = [...this.stores.values()];
    this.stores.clear();
    await Promise.allSettled(stores.map((s) => s.close()));
  }
}
