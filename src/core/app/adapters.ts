/**
 * The node-encoder adapter a question uses (design §10): the checkpoint a request names, else
 * the `canopy.adapter.checkpoint` setting, relative paths taken from the workspace folder. The
 * loaded checkpoint is kept until its file changes. A checkpoint that cannot be used (missing,
 * corrupt, another encoder) is not an error: the caller gets the reason and asks with the
 * untrained encoder; `loadAdapter` is the strict variant.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { loadAdapter, type LoadedAdapter } from '../train/checkpoint';

export interface AdapterChoice {
  adapter?: LoadedAdapter;
  /** Why the configured checkpoint is not used, when one is configured and cannot be. */
  problem?: string;
}

export class AdapterCheckpoints {
  private cached: { file: string; mtimeMs: number; loaded: LoadedAdapter } | undefined;

  constructor(private readonly root: string) {}

  /** `checkpoint` ('' = none) resolved against the folder and loaded for `encoderId`. */
  async choose(checkpoint: string, encoderId: string): Promise<AdapterChoice> {
    const setting = checkpoint.trim();
    if (!setting) return {};
    const file = path.resolve(this.root, setting);
    try {
      const mtimeMs = (await fs.stat(file).catch(() => undefined))?.mtimeMs ?? -1;
      if (this.cached?.file === file && this.cached.mtimeMs === mtimeMs && mtimeMs >= 0 && this.cached.loaded.checkpoint.baseEncoderId === encoderId) {
        return { adapter: this.cached.loaded };
      }
      const loaded = await loadAdapter(file, encoderId);
      this.cached = { file, mtimeMs, loaded };
      return { adapter: loaded };
    } catch (err) {
      this.cached = undefined;
      return { problem: `${(err as Error).message}; asking with the untrained encoder` };
    }
  }
}
