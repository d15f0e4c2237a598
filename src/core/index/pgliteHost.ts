/**
 * PGlite (Postgres compiled to WebAssembly, with its pgvector extension) hosted in this process:
 * a real Postgres engine without a server install, for trying the Postgres store
 * (`canopy store serve`), for the tests and for the benchmarks. It can drive a `pg.Pool`
 * in-process or serve the Postgres wire protocol on a local socket, so the plain `pg` client —
 * the exact code path a user runs against their own server — reaches it.
 *
 * PGlite takes no lock on its data folder: a second process that opens the same folder corrupts
 * it (a committed row invisible, a phantom duplicate key; docs/platform-notes). So opening one
 * takes a single-owner lock file beside the folder (`<folder>.canopy-owner`, holding the owner's
 * pid and host), refused while its owner — this process included — holds it, taken over when the
 * owner on this machine no longer runs.
 *
 * The packages are loaded on first use (the CLI only; the extension never loads them).
 */
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { CanopyError, ErrorCodes } from '../errors';
import { processRuns } from '../store/atomicFile';

export interface PgliteServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface PgliteOpenOptions {
  /** A data folder dumped by `dump()` (gzip tar) to start a new database from, instead of initialising one (seconds instead of a minute). */
  template?: Uint8Array;
}

/** The lock file that makes one process the owner of a PGlite data folder. */
export function ownerLockFile(dataDir: string): string {
  return `${path.resolve(dataDir)}.canopy-owner`;
}

/** Takes the single-owner lock of a PGlite data folder; resolves to its release. */
export async function takeOwnership(dataDir: string): Promise<() => Promise<void>> {
  const file = ownerLockFile(dataDir);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const me = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await fs.open(file, 'wx');
      await handle.writeFile(JSON.stringify(me));
      await handle.close();
      return async () => {
        const now = await fs.readFile(file, 'utf8').catch(() => '');
        if (now === JSON.stringify(me)) await fs.rm(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder: { pid?: number; host?: string } = {};
      try {
        holder = JSON.parse(await fs.readFile(file, 'utf8')) as typeof holder;
      } catch {
        // A lock being written right now, or damaged: treat as held unless it stays so (below).
      }
      const stale = typeof holder.pid === 'number' && holder.host === me.host && holder.pid !== process.pid && !processRuns(holder.pid);
      if (!stale) {
        throw new CanopyError(
          ErrorCodes.badInput,
          `the PGlite data folder ${dataDir} is already open in process ${holder.pid ?? '?'} on ${holder.host ?? '?'}; PGlite takes no lock of its own and a second opener corrupts it (if that process is gone, delete ${file})`,
        );
      }
      await fs.rm(file, { force: true });
    }
  }
  throw new CanopyError(ErrorCodes.internal, `could not take the PGlite owner lock ${file}`);
}

/** The socket server's query queue (pglite-socket 0.2.17 internals, pinned). */
interface SocketQueue {
  queue: Array<{ handlerId: number; message: Uint8Array; resolve(bytes: number): void; reject(err: unknown): void; onData(data: Uint8Array): void }>;
  processing: boolean;
  db: PGlite;
  lastHandlerId: number | null;
  processQueue(): Promise<void>;
  clearQueueForHandler(handlerId: number): void;
}

/** Message types of the extended query protocol up to (not including) its Sync. */
const EXTENDED = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((c) => c.charCodeAt(0)));
const ENDS = new Set(['S', 'Q', 'X'].map((c) => c.charCodeAt(0)));

/**
 * PGlite's socket server runs one protocol *message* at a time from any connection, keeping to one
 * connection only inside an explicit transaction. But `pg` sends a parameterised query as Parse,
 * Bind, Describe, Execute, Sync: interleaved with another connection's messages in the one
 * backend, the second Parse replaces the first's unnamed statement and the first connection gets
 * the wrong rows (seen here: a count(*) answered with another query's result). This keeps every
 * connection's exchange whole, from its first message to its Sync, as a server with one backend
 * per connection would. It replaces the queue's scheduling method; the rest is the library's.
 */
export function keepExtendedQueriesWhole(q: SocketQueue): void {
  if (!Array.isArray(q?.queue) || typeof q.processQueue !== 'function' || typeof q.clearQueueForHandler !== 'function') {
    throw new CanopyError(ErrorCodes.internal, 'the PGlite socket server is not the version Canopy was built against (@electric-sql/pglite-socket 0.2.17)');
  }
  const midExchange = new Set<number>();
  const clear = q.clearQueueForHandler.bind(q);
  q.clearQueueForHandler = (handlerId: number) => {
    midExchange.delete(handlerId);
    clear(handlerId);
  };
  q.processQueue = async () => {
    if (q.processing || q.queue.length === 0) return;
    q.processing = true;
    try {
      while (q.queue.length > 0) {
        const last = q.lastHandlerId;
        const sticky = last !== null && (midExchange.has(last) || q.db.isInTransaction());
        const index = sticky ? q.queue.findIndex((e) => e.handlerId === last) : 0;
        if (index === -1) break; // that connection's next message will start the queue again
        const entry = q.queue.splice(index, 1)[0]!;
        const refusal = refuseStartup(entry.message);
        if (refusal) {
          // The client reads the error and closes the connection; PGlite never sees it.
          entry.onData(refusal);
          entry.resolve(refusal.length);
          continue;
        }
        const type = entry.message[0]!;
        let bytes = 0;
        try {
          await q.db.runExclusive(() =>
            q.db.execProtocolRawStream(entry.message, {
              onRawData: (data: Uint8Array) => {
                bytes += data.length;
                entry.onData(data);
              },
            }),
          );
        } catch (err) {
          midExchange.delete(entry.handlerId);
          entry.reject(err);
          continue;
        }
        if (EXTENDED.has(type)) midExchange.add(entry.handlerId);
        else if (ENDS.has(type)) midExchange.delete(entry.handlerId);
        q.lastHandlerId = entry.handlerId;
        entry.resolve(bytes);
      }
    } finally {
      q.processing = false;
    }
  };
}

/** The one database a served PGlite holds (`canopy store serve` prints it in its URL). */
export const PGLITE_DATABASE = 'postgres';

/** The parameters of a startup message (protocol 3.0), or undefined when the message is another. */
function startupParams(message: Uint8Array): Map<string, string> | undefined {
  if (message.length < 8) return undefined;
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  if (view.getInt32(4) !== 196608 || view.getInt32(0) !== message.length) return undefined;
  const parts = new TextDecoder().decode(message.subarray(8)).split('\0');
  const params = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length && parts[i] !== ''; i += 2) params.set(parts[i]!, parts[i + 1]!);
  return params;
}

/** An ErrorResponse message (severity FATAL) with an SQLSTATE code. */
function errorResponse(sqlState: string, message: string): Uint8Array {
  const fields = [`SFATAL`, `VFATAL`, `C${sqlState}`, `M${message}`].map((f) => `${f}\0`).join('') + '\0';
  const body = new TextEncoder().encode(fields);
  const out = new Uint8Array(1 + 4 + body.length);
  out[0] = 'E'.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}

/**
 * PGlite holds one database and would answer a connection to any name as if it were that one: a
 * typo in a store URL (`…/canopy` for `…/postgres`) would then index into the one database
 * unnoticed. A startup naming another database is refused as a Postgres server refuses it
 * (SQLSTATE 3D000, "database … does not exist").
 */
function refuseStartup(message: Uint8Array): Uint8Array | undefined {
  const params = startupParams(message);
  if (!params) return undefined;
  const database = params.get('database') ?? params.get('user') ?? '';
  if (database === PGLITE_DATABASE) return undefined;
  return errorResponse('3D000', `database "${database}" does not exist: this PGlite server (canopy store serve) holds one database, "${PGLITE_DATABASE}" — connect to …/${PGLITE_DATABASE}`);
}

export class PgliteHost {
  private readonly servers = new Set<{ stop(): Promise<void> }>();
  private readonly pools = new Set<pg.Pool>();

  private constructor(
    readonly db: PGlite,
    readonly dataDir: string | undefined,
    private readonly release: () => Promise<void>,
  ) {}

  /** Opens (or creates) a database in `dataDir` — or in memory when undefined — with pgvector installed. */
  static async open(dataDir: string | undefined, options: PgliteOpenOptions = {}): Promise<PgliteHost> {
    const release = dataDir ? await takeOwnership(dataDir) : async () => undefined;
    try {
      const { PGlite } = await import('@electric-sql/pglite');
      const { vector } = await import('@electric-sql/pglite-pgvector');
      const fresh = !dataDir || !(await fs.access(path.join(dataDir, 'PG_VERSION')).then(
        () => true,
        () => false,
      ));
      const db = await PGlite.create(dataDir ?? 'memory://', {
        extensions: { vector },
        ...(fresh && options.template ? { loadDataDir: new Blob([new Uint8Array(options.template)]) } : {}),
      });
      await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
      return new PgliteHost(db, dataDir, release);
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** A `pg.Pool` that drives this database in-process (one connection; no socket). */
  async pool(): Promise<pg.Pool> {
    const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
    const pool = new pg.Pool(createPgConfig(this.db) as unknown as pg.PoolConfig);
    this.pools.add(pool);
    return pool;
  }

  /**
   * Serves the database on a loopback socket for the plain `pg` client. `maxConnections` must be
   * at least the clients' pool size (the socket server refuses connections beyond it); queries
   * still run one at a time, and a transaction holds the others back until it ends.
   */
  async serve(options: { host?: string; port?: number; maxConnections?: number } = {}): Promise<PgliteServer> {
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const host = options.host ?? '127.0.0.1';
    const server = new PGLiteSocketServer({ db: this.db, host, port: options.port ?? 0, maxConnections: options.maxConnections ?? 16 });
    keepExtendedQueriesWhole((server as unknown as { queryQueue: SocketQueue }).queryQueue);
    await server.start();
    const port = Number(server.getServerConn().split(':').pop());
    const entry = { stop: () => server.stop() };
    this.servers.add(entry);
    return {
      url: `postgres://postgres@${host}:${port}/${PGLITE_DATABASE}`,
      port,
      stop: async () => {
        this.servers.delete(entry);
        await server.stop();
      },
    };
  }

  /** The data folder as a gzip tar (a template for `open`). */
  async dump(): Promise<Uint8Array> {
    const blob = await this.db.dumpDataDir('gzip');
    return new Uint8Array(await blob.arrayBuffer());
  }

  async close(): Promise<void> {
    for (const s of [...this.servers]) await s.stop().catch(() => undefined);
    this.servers.clear();
    for (const p of [...this.pools]) await p.end().catch(() => undefined);
    this.pools.clear();
    try {
      await this.db.close();
    } finally {
      await this.release();
    }
  }
}
