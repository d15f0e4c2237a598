/**
 * `canopy store`: the index stores (src/core/index/storeSpec.ts).
 *   serve   a PGlite database (Postgres with pgvector, in WebAssembly, in this process) in a
 *           folder, served on a loopback port: try the Postgres store without installing a
 *           server, or give an editor and the CLI one shared index on this machine.
 *   info    what a store holds: its live generation, items, files, and where it is.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { PgliteHost } from '../../core/index/pgliteHost';
import { openIndexStore } from '../../core/index/storeSpec';
import { type CliIO, UsageError } from '../io';
import { defaultIndexDir, storeSetting } from '../runtime';

export const storeHelp = `Usage: canopy store serve --pglite <dir> [--port <n>] [--max-connections <n>]
       canopy store info [--store <store>] [--dir <dir>] [--index <dir>] [--json]

serve   opens (or creates) a PGlite database — Postgres with pgvector, compiled to WebAssembly —
        in <dir> and serves it on 127.0.0.1 until interrupted, printing the postgres:// URL to
        give to --store or the canopy.store setting. Only one process may open <dir> (PGlite
        does not lock it itself; Canopy does). For a shared index across machines, use a
        Postgres server with pgvector instead (README, "Choosing a store").
          --port <n>              port (default: any free port)
          --max-connections <n>   connections accepted at once (default 32; at least the
                                  clients' pool sizes: 4 per Canopy process)
info    the live generation, items and files of a store (default: the local index of --dir).`;

export async function runStore(args: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'serve') return serve(rest, io);
  if (sub === 'info') return info(rest, io);
  throw new UsageError('store needs a subcommand: serve or info');
}

async function serve(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args, options: { pglite: { type: 'string' }, port: { type: 'string' }, 'max-connections': { type: 'string' } } });
  if (!values.pglite) throw new UsageError('serve needs --pglite <dir>');
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number');
  const maxConnections = values['max-connections'] === undefined ? 32 : Number(values['max-connections']);
  if (!Number.isInteger(maxConnections) || maxConnections < 1) throw new UsageError('--max-connections must be a positive integer');
  const dir = path.resolve(io.cwd, values.pglite);
  io.err(`opening PGlite in ${dir} (a new database takes up to a minute)…`);
  const host = await PgliteHost.open(dir);
  const server = await host.serve({ port, maxConnections });
  io.out(server.url);
  io.err(`serving ${dir} at ${server.url}; Ctrl-C stops`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await host.close();
  io.err('stopped');
  return 0;
}

async function info(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args, options: { store: { type: 'string' }, dir: { type: 'string' }, index: { type: 'string' }, json: { type: 'boolean' } } });
  const root = path.resolve(io.cwd, values.dir ?? '.');
  const indexDir = values.index ? path.resolve(io.cwd, values.index) : defaultIndexDir(root);
  const store = openIndexStore(storeSetting(values.store, io).store, indexDir);
  try {
    const live = await store.liveGeneration();
    const manifest = live === undefined ? undefined : await store.readManifest(live);
    const reader = live === undefined ? undefined : await store.open(live);
    const out = {
      kind: store.kind,
      location: store.location,
      generation: live ?? null,
      items: reader?.size ?? 0,
      files: manifest ? Object.keys(manifest.files).length : 0,
      encoder: manifest?.encoderId ?? null,
    };
    await reader?.close();
    if (values.json) io.out(JSON.stringify(out));
    else io.out(live === undefined ? `${out.kind} store at ${out.location}: no index yet` : `${out.kind} store at ${out.location}: generation ${out.generation}, ${out.files} files, ${out.items} items, encoder ${out.encoder}`);
    return 0;
  } finally {
    await store.close();
  }
}
