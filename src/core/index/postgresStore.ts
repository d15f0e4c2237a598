/**
 * The Postgres adapter of the storage port: Postgres with the pgvector extension, through the
 * `pg` driver and the `pgvector` package, so the CLI can index a corpus into a server and every
 * editor (and machine) answers from it. Everything lives in one schema (default `canopy`):
 *
 *   items         one row per item version: id, gen_from, gen_to, file, modality, tsvector,
 *                 embedding vector(d); an HNSW index (cosine) and a GIN index on the tsvector
 *   generations   the manifest of every committed generation
 *   meta          the live generation, the format, the vector width
 *   documents     parsed documents, content-addressed (key → JSON)
 *   blobs         per-generation side data: the BM25 index when `lexical` is `bm25`
 *   node_vectors  the node-vector cache (model, SHA-256 of the text → float32 bytes)
 *   writer_lock   the single writer's lease
 *
 * Generations without copying: a row belongs to generation G when gen_from <= G and (gen_to is
 * null or gen_to > G). Writing G+1 inserts new rows with gen_from = G+1 and ends replaced ones
 * with gen_to = G+1 — invisible to readers of G — and `commit` switches meta.live in one
 * transaction: the commit point. A writer killed before it leaves G live; the next writer's
 * `recover` deletes rows of generations above the live one and reopens the rows they ended. The
 * previous generation stays readable after a commit (readers that opened it keep working) and is
 * collected at the commit after.
 *
 * Lexical search is the database's full text (`tsvector`, `websearch_to_tsquery` with the
 * question's words joined by OR, `ts_rank_cd`), or — `lexical: 'bm25'` — Canopy's own BM25 index
 * (bm25.ts) kept beside it as a blob per generation and ranked in the client; BENCHMARKS.md
 * compares the two. The writer lock is a lease row (refreshed while the writer runs) rather than
 * an advisory lock, because PGlite's socket server runs every connection in one session.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import pgvector from 'pgvector/pg';
import type { Encoder } from '../encode/encoder';
import { normalizeText } from '../encode/encoder';
import type { VectorCache } from '../encode/vectorCache';
import { CanopyError, ErrorCodes } from '../errors';
import type { ParsedDocument } from '../ingest/parsedDocument';
import { words } from '../text/terms';
import { titleKeyOf } from '../text/titles';
import { Bm25Index } from './bm25';
import type { GenerationChanges, GenerationReader, IndexStore, SearchFilter, SearchHit } from './indexStore';
import { INDEX_FORMAT, type IndexManifest } from './layout';
import { processRuns } from '../store/atomicFile';

export interface HnswParameters {
  /** Graph degree (pgvector's `m`, default 16). */
  m: number;
  /** Candidate list while building (`ef_construction`, default 64). */
  efConstruction: number;
  /** Candidate list while searching (`hnsw.ef_search`, default 100 here; pgvector's default is 40). */
  efSearch: number;
}

export interface PostgresStoreOptions {
  /** A `postgres://` URL; or `pool`. */
  connectionString?: string;
  /** An existing pool (e.g. PGlite in-process through its node-postgres config); the store does not end it. */
  pool?: pg.Pool;
  /** Schema holding the tables (created when missing); default `canopy`. Several indexes can share a database in several schemas. */
  schema?: string;
  /** Lexical ranking: the database's full text (`tsvector`, default) or Canopy's BM25 kept beside it (`bm25`). */
  lexical?: 'tsvector' | 'bm25';
  hnsw?: Partial<HnswParameters>;
  /** Build the HNSW index after a commit (default true); without it, dense search scans exactly. */
  vectorIndex?: boolean;
  /** Connections in the pool the store makes (default 4). */
  poolSize?: number;
  /** Seconds a writer's lease lasts without being refreshed (default 60). */
  lockLeaseSeconds?: number;
  /** How the location is shown in messages (default: the URL without its password). */
  label?: string;
}

export const defaultHnsw: HnswParameters = { m: 16, efConstruction: 64, efSearch: 100 };

const INSERT_BATCH = 500;

/** A URL with its password replaced, for messages and traces. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
  }
}

function visible(param: string): string {
  return `gen_from <= ${param} AND (gen_to IS NULL OR gen_to > ${param})`;
}

export class PostgresStore implements IndexStore {
  readonly kind = 'postgres' as const;
  readonly localDir = undefined;
  readonly location: string;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly s: string;
  private readonly lexicalMode: 'tsvector' | 'bm25';
  readonly hnsw: HnswParameters;
  private readonly registered = new WeakSet<pg.PoolClient>();
  private ready: Promise<void> | undefined;

  constructor(private readonly options: PostgresStoreOptions) {
    const schema = options.schema ?? 'canopy';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new CanopyError(ErrorCodes.badInput, `schema "${schema}" is not a plain lower-case SQL name`);
    this.s = schema;
    this.lexicalMode = options.lexical ?? 'tsvector';
    this.hnsw = { ...defaultHnsw, ...options.hnsw };
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else if (options.connectionString) {
      this.pool = new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 4 });
      this.ownsPool = true;
    } else throw new CanopyError(ErrorCodes.badInput, 'a Postgres store needs a connection string or a pool');
    // An idle connection that breaks (server restart) must not crash the process.
    this.pool.on('error', () => undefined);
    this.location = options.label ?? `${options.connectionString ? redactUrl(options.connectionString) : 'postgres (pool)'} schema ${schema}`;
  }

  get lexicalRanking(): 'tsvector' | 'bm25' {
    return this.lexicalMode;
  }

  // ---- plumbing ----

  /**
   * Why a connection failed, with its own code: a database that does not exist (E_NOT_FOUND), a
   * refused login (E_FORBIDDEN), else a server that cannot be reached — refused, timed out, an
   * unknown host (E_UNREACHABLE).
   */
  private connectError(err: unknown): CanopyError {
    const { code, message } = err as { code?: unknown; message?: unknown };
    const reason = typeof message === 'string' ? message : String(err);
    if (code === '3D000') return new CanopyError(ErrorCodes.notFound, `the Postgres store ${this.location}: ${reason}`, { cause: err });
    if (code === '28P01' || code === '28000') return new CanopyError(ErrorCodes.forbidden, `the Postgres store ${this.location} refused the login: ${reason}`, { cause: err });
    return new CanopyError(ErrorCodes.unreachable, `cannot reach the Postgres store ${this.location}: ${reason}`, { cause: err });
  }

  private async client(): Promise<pg.PoolClient> {
    let c: pg.PoolClient;
    try {
      c = await this.pool.connect();
    } catch (err) {
      throw this.connectError(err);
    }
    if (!this.registered.has(c)) {
      try {
        await pgvector.registerTypes(c);
      } catch (err) {
        c.release();
        throw new CanopyError(ErrorCodes.badInput, `the Postgres store ${this.location} has no pgvector extension (CREATE EXTENSION vector): ${(err as Error).message}`, { cause: err });
      }
      await c.query(`SET hnsw.ef_search = ${this.hnsw.efSearch}`).catch(() => undefined);
      // Keep scanning the HNSW graph until enough rows pass the generation and modality filters (pgvector >= 0.8).
      await c.query(`SET hnsw.iterative_scan = relaxed_order`).catch(() => undefined);
      this.registered.add(c);
    }
    return c;
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    await this.ensureSchema();
    const c = await this.client();
    try {
      return await c.query<R>(sql, params);
    } finally {
      c.release();
    }
  }

  private async transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ensureSchema();
    const c = await this.client();
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  private ensureSchema(): Promise<void> {
    this.ready ??= (async () => {
      const c = await this.pool.connect().catch((err: unknown) => {
        throw this.connectError(err);
      });
      try {
        const ext = await c.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`);
        if (ext.rowCount === 0) await c.query('CREATE EXTENSION IF NOT EXISTS vector');
        const s = this.s;
        await c.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${s}.meta (key text PRIMARY KEY, value text NOT NULL)`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${s}.generations (generation integer PRIMARY KEY, manifest text NOT NULL, committed_at timestamptz NOT NULL DEFAULT now())`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${s}.documents (key text PRIMARY KEY, body text NOT NULL)`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${s}.blobs (generation integer NOT NULL, name text NOT NULL, data bytea NOT NULL, PRIMARY KEY (generation, name))`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${s}.node_vectors (model text NOT NULL, key bytea NOT NULL, vector bytea NOT NULL, PRIMARY KEY (model, key))`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${s}.writer_lock (name text PRIMARY KEY, owner text NOT NULL, host text NOT NULL, pid integer NOT NULL, expires_at timestamptz NOT NULL)`);
        const format = await c.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'format'`);
        if (format.rows[0] && Number(format.rows[0].value) !== INDEX_FORMAT) {
          throw new CanopyError(ErrorCodes.indexVersion, `the Postgres store ${this.location} has format ${format.rows[0].value}, this Canopy reads format ${INDEX_FORMAT}`);
        }
        await c.query(`INSERT INTO ${s}.meta (key, value) VALUES ('format', $1) ON CONFLICT (key) DO NOTHING`, [String(INDEX_FORMAT)]);
        // Items written before the store kept title keys have none: they are found by no title until re-indexed.
        if ((await c.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [`${s}.items`])).rows[0]?.t) {
          await c.query(`ALTER TABLE ${s}.items ADD COLUMN IF NOT EXISTS title_key text`);
          await c.query(`CREATE INDEX IF NOT EXISTS items_title_key ON ${s}.items (title_key)`);
        }
      } finally {
        c.release();
      }
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err instanceof CanopyError ? err : new CanopyError(ErrorCodes.badInput, `cannot set up the Postgres store ${this.location}: ${(err as Error).message}`, { cause: err });
    });
    return this.ready;
  }

  private async meta(key: string): Promise<string | undefined> {
    const r = await this.query<{ value: string }>(`SELECT value FROM ${this.s}.meta WHERE key = $1`, [key]);
    return r.rows[0]?.value;
  }

  /** The items table, created for vectors of `dim` dimensions at the first write. */
  private async ensureItems(dim: number): Promise<void> {
    const have = await this.meta('dim');
    if (have !== undefined) {
      if (Number(have) !== dim) {
        throw new CanopyError(ErrorCodes.badInput, `the Postgres store ${this.location} holds ${have}-d vectors and the encoder gives ${dim}-d ones: use another schema (?schema=…) for this encoder`);
      }
      return;
    }
    await this.transaction(async (c) => {
      const s = this.s;
      await c.query(`CREATE TABLE IF NOT EXISTS ${s}.items (
        id text NOT NULL, gen_from integer NOT NULL, gen_to integer,
        file text NOT NULL, modality text NOT NULL, tsv tsvector NOT NULL, embedding vector(${dim}) NOT NULL, title_key text,
        PRIMARY KEY (id, gen_from))`);
      await c.query(`CREATE INDEX IF NOT EXISTS items_title_key ON ${s}.items (title_key)`);
      await c.query(`CREATE INDEX IF NOT EXISTS items_live ON ${s}.items (gen_to, gen_from)`);
      await c.query(`CREATE INDEX IF NOT EXISTS items_tsv ON ${s}.items USING gin (tsv)`);
      await c.query(`INSERT INTO ${s}.meta (key, value) VALUES ('dim', $1)`, [String(dim)]);
    });
  }

  private async hasItems(): Promise<boolean> {
    return (await this.meta('dim')) !== undefined;
  }

  // ---- the port ----

  async lockWriter(): Promise<() => Promise<void>> {
    const owner = randomBytes(8).toString('hex');
    const host = hostname();
    const lease = this.options.lockLeaseSeconds ?? 60;
    const take = async (steal?: string) => {
      const r = await this.query<{ owner: string }>(
        `INSERT INTO ${this.s}.writer_lock (name, owner, host, pid, expires_at) VALUES ('writer', $1, $2, $3, now() + $4 * interval '1 second')
         ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, host = EXCLUDED.host, pid = EXCLUDED.pid, expires_at = EXCLUDED.expires_at
         WHERE ${this.s}.writer_lock.expires_at < now() OR ${this.s}.writer_lock.owner = $5
         RETURNING owner`,
        [owner, host, process.pid, lease, steal ?? owner],
      );
      return r.rowCount === 1;
    };
    if (!(await take())) {
      const holder = (await this.query<{ owner: string; host: string; pid: number; expires_at: Date }>(`SELECT owner, host, pid, expires_at FROM ${this.s}.writer_lock WHERE name = 'writer'`)).rows[0];
      // A writer of this machine that no longer runs (killed) leaves its lease: take it over at once.
      const dead = holder && holder.host === host && holder.pid !== process.pid && !processRuns(holder.pid);
      if (!holder || !(dead ? await take(holder.owner) : await take())) {
        throw new CanopyError(
          ErrorCodes.badInput,
          `index at ${this.location} is being written by process ${holder?.pid ?? '?'} on ${holder?.host ?? '?'} (lease until ${holder?.expires_at?.toISOString?.() ?? '?'}); try again when it has finished`,
        );
      }
    }
    const timer = setInterval(
      () => {
        void this.query(`UPDATE ${this.s}.writer_lock SET expires_at = now() + $2 * interval '1 second' WHERE name = 'writer' AND owner = $1`, [owner, lease]).catch(() => undefined);
      },
      Math.max(1000, (lease * 1000) / 3),
    );
    timer.unref();
    return async () => {
      clearInterval(timer);
      await this.query(`DELETE FROM ${this.s}.writer_lock WHERE name = 'writer' AND owner = $1`, [owner]);
    };
  }

  async recover(): Promise<void> {
    const live = await this.liveGeneration().catch(() => undefined);
    const top = live ?? 0;
    // (No query on another connection inside a transaction: PGlite's socket server would wait for it forever.)
    const items = await this.hasItems();
    await this.transaction(async (c) => {
      if (items) {
        await c.query(`DELETE FROM ${this.s}.items WHERE gen_from > $1`, [top]);
        await c.query(`UPDATE ${this.s}.items SET gen_to = NULL WHERE gen_to > $1`, [top]);
      }
      await c.query(`DELETE FROM ${this.s}.generations WHERE generation > $1`, [top]);
      await c.query(`DELETE FROM ${this.s}.blobs WHERE generation > $1`, [top]);
    });
  }

  async liveGeneration(): Promise<number | undefined> {
    const v = await this.meta('live');
    if (v === undefined) return undefined;
    const g = Number(v);
    if (!Number.isSafeInteger(g)) throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.location} is corrupt: the live generation is "${v}"`);
    return g;
  }

  async readManifest(generation: number): Promise<IndexManifest> {
    const r = await this.query<{ manifest: string }>(`SELECT manifest FROM ${this.s}.generations WHERE generation = $1`, [generation]);
    const row = r.rows[0];
    if (!row) throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.location} is corrupt: no manifest for generation ${generation}`);
    let m: IndexManifest;
    try {
      m = JSON.parse(row.manifest) as IndexManifest;
    } catch (err) {
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.location} is corrupt: the manifest of generation ${generation} is not JSON`, { cause: err });
    }
    if (m.format !== INDEX_FORMAT || m.generation !== generation || typeof m.files !== 'object') {
      throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.location} is corrupt: the manifest does not describe generation ${generation}`);
    }
    return m;
  }

  async generations(): Promise<number[]> {
    const out = new Set<number>();
    for (const r of (await this.query<{ g: number }>(`SELECT generation AS g FROM ${this.s}.generations UNION SELECT generation FROM ${this.s}.blobs`)).rows) out.add(Number(r.g));
    if (await this.hasItems()) {
      const r = await this.query<{ g: number | null }>(`SELECT max(greatest(gen_from, coalesce(gen_to, 0))) AS g FROM ${this.s}.items`);
      if (r.rows[0]?.g !== null && r.rows[0]?.g !== undefined) out.add(Number(r.rows[0].g));
    }
    const live = await this.meta('live');
    if (live !== undefined) out.add(Number(live));
    return [...out];
  }

  async putDocument(key: string, doc: ParsedDocument): Promise<void> {
    await this.query(`INSERT INTO ${this.s}.documents (key, body) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [key, JSON.stringify(doc)]);
  }

  async writeGeneration(from: number | undefined, to: number, changes: GenerationChanges): Promise<void> {
    const dim = changes.upsert[0]?.vector.length ?? (await this.meta('dim').then((d) => (d === undefined ? undefined : Number(d))));
    if (dim !== undefined) await this.ensureItems(dim);
    const s = this.s;
    if (await this.hasItems()) {
      // End the rows this generation replaces (all of them for a rebuild): readers of `from` still see them.
      if (from === undefined) await this.query(`UPDATE ${s}.items SET gen_to = $1 WHERE gen_to IS NULL`, [to]);
      else {
        const ended = [...new Set([...changes.remove, ...changes.upsert.map((u) => u.id)])];
        for (let i = 0; i < ended.length; i += 5000) {
          await this.query(`UPDATE ${s}.items SET gen_to = $1 WHERE gen_to IS NULL AND id = ANY($2::text[])`, [to, ended.slice(i, i + 5000)]);
        }
      }
      for (let i = 0; i < changes.upsert.length; i += INSERT_BATCH) {
        const batch = changes.upsert.slice(i, i + INSERT_BATCH);
        await this.query(
          `INSERT INTO ${s}.items (id, gen_from, file, modality, tsv, embedding, title_key)
           SELECT id, $1, file, modality,
                  setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B'),
                  embedding::vector, title_key
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS t(id, file, modality, title, body, embedding, title_key)`,
          [
            to,
            batch.map((u) => u.id),
            batch.map((u) => u.file),
            batch.map((u) => u.modality),
            batch.map((u) => u.title),
            batch.map((u) => u.text),
            batch.map((u) => vectorLiteral(u.vector)),
            batch.map((u) => titleKeyOf(u.title)),
          ],
        );
      }
    }
    if (this.lexicalMode === 'bm25') {
      const base = from === undefined ? Bm25Index.empty() : await this.bm25(from);
      const next = base.update(
        [...changes.remove, ...changes.upsert.map((u) => u.id)],
        changes.upsert.map((u) => ({ id: u.id, title: u.title, text: u.text, modality: u.modality })),
      );
      await this.query(`INSERT INTO ${s}.blobs (generation, name, data) VALUES ($1, 'bm25', $2) ON CONFLICT (generation, name) DO UPDATE SET data = EXCLUDED.data`, [to, next.toBuffer()]);
    }
  }

  async commit(manifest: IndexManifest): Promise<void> {
    await this.transaction(async (c) => {
      await c.query(`INSERT INTO ${this.s}.generations (generation, manifest) VALUES ($1, $2)`, [manifest.generation, JSON.stringify(manifest)]);
      await c.query(`INSERT INTO ${this.s}.meta (key, value) VALUES ('live', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [String(manifest.generation)]);
    });
    if (this.options.vectorIndex !== false) await this.ensureVectorIndex();
  }

  /** Builds the HNSW index on the item vectors when it is missing (after a bulk load, so it is built once). */
  async ensureVectorIndex(): Promise<boolean> {
    if (!(await this.hasItems())) return false;
    const exists = await this.query(`SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'items_embedding'`, [this.s]);
    if (exists.rowCount) return false;
    await this.query(`CREATE INDEX IF NOT EXISTS items_embedding ON ${this.s}.items USING hnsw (embedding vector_cosine_ops) WITH (m = ${this.hnsw.m}, ef_construction = ${this.hnsw.efConstruction})`);
    return true;
  }

  async collectGarbage(live: IndexManifest, previous: number | undefined): Promise<void> {
    const keep = Math.min(previous ?? live.generation, live.generation);
    const keys = new Set(Object.values(live.files).map((e) => e.doc));
    if (previous !== undefined) {
      const old = await this.readManifest(previous).catch(() => undefined);
      for (const e of Object.values(old?.files ?? {})) keys.add(e.doc);
    }
    const items = await this.hasItems();
    await this.transaction(async (c) => {
      if (items) await c.query(`DELETE FROM ${this.s}.items WHERE gen_to IS NOT NULL AND gen_to <= $1`, [keep]);
      await c.query(`DELETE FROM ${this.s}.generations WHERE generation < $1`, [keep]);
      await c.query(`DELETE FROM ${this.s}.blobs WHERE generation < $1`, [keep]);
      await c.query(`DELETE FROM ${this.s}.documents WHERE NOT (key = ANY($1::text[]))`, [[...keys]]);
    });
  }

  async open(generation: number): Promise<GenerationReader> {
    const s = this.s;
    const hasItems = await this.hasItems();
    const size = hasItems ? Number((await this.query<{ n: string }>(`SELECT count(*) AS n FROM ${s}.items WHERE ${visible('$1')}`, [generation])).rows[0]!.n) : 0;
    let bm25: Promise<Bm25Index> | undefined;
    const lexicalBm25 = async (text: string, k: number, filter?: SearchFilter) => {
      bm25 ??= this.bm25(generation);
      return (await bm25).query(text, k, filter?.modalities, filter?.scoring);
    };
    return {
      generation,
      size,
      dense: async (vector: Float32Array, k: number, filter?: SearchFilter): Promise<SearchHit[]> => {
        if (size === 0 || k <= 0) return [];
        const mods = filter?.modalities;
        const r = await this.query<{ id: string; distance: number }>(
          `SELECT id, embedding <=> $1 AS distance FROM ${s}.items
           WHERE ${visible('$2')}${mods ? ' AND modality = ANY($4::text[])' : ''}
           ORDER BY embedding <=> $1 LIMIT $3`,
          [pgvector.toSql(Array.from(vector)), generation, k, ...(mods ? [[...mods]] : [])],
        );
        return r.rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }));
      },
      lexical: async (text: string, k: number, filter?: SearchFilter): Promise<SearchHit[]> => {
        if (size === 0 || k <= 0) return [];
        if (this.lexicalMode === 'bm25') return lexicalBm25(text, k, filter);
        // Any of the question's words (websearch syntax never fails to parse); the database stems and drops stop words.
        const terms = words(text).filter((w) => w !== 'or');
        if (terms.length === 0) return [];
        const mods = filter?.modalities;
        const r = await this.query<{ id: string; score: number }>(
          `SELECT id, ts_rank_cd(tsv, q) AS score FROM ${s}.items, websearch_to_tsquery('english', $1) AS q
           WHERE tsv @@ q AND ${visible('$2')}${mods ? ' AND modality = ANY($4::text[])' : ''}
           ORDER BY score DESC, id LIMIT $3`,
          [terms.join(' or '), generation, k, ...(mods ? [[...mods]] : [])],
        );
        return r.rows.map((row) => ({ id: row.id, score: Number(row.score) }));
      },
      titled: async (keys: readonly string[], filter?: SearchFilter): Promise<Map<string, string[]>> => {
        const out = new Map<string, string[]>();
        const wanted = [...new Set(keys.filter((k) => k.length > 0))];
        if (size === 0 || wanted.length === 0) return out;
        const mods = filter?.modalities;
        const r = await this.query<{ id: string; title_key: string }>(
          `SELECT id, title_key FROM ${s}.items
           WHERE title_key = ANY($1::text[]) AND ${visible('$2')}${mods ? ' AND modality = ANY($3::text[])' : ''}
           ORDER BY id`,
          [wanted, generation, ...(mods ? [[...mods]] : [])],
        );
        for (const row of r.rows) {
          const list = out.get(row.title_key);
          if (list) list.push(row.id);
          else out.set(row.title_key, [row.id]);
        }
        return out;
      },
      document: async (key: string): Promise<ParsedDocument> => {
        const r = await this.query<{ body: string }>(`SELECT body FROM ${s}.documents WHERE key = $1`, [key]);
        if (!r.rows[0]) throw new Error(`document ${key} is missing`);
        return JSON.parse(r.rows[0].body) as ParsedDocument;
      },
      entries: () => this.entries(generation),
      close: async () => undefined,
    };
  }

  async entries(generation: number): Promise<Array<{ id: string; vector: Float32Array }>> {
    if (!(await this.hasItems())) return [];
    const r = await this.query<{ id: string; embedding: number[] }>(`SELECT id, embedding FROM ${this.s}.items WHERE ${visible('$1')} ORDER BY id`, [generation]);
    return r.rows.map((row) => ({ id: row.id, vector: Float32Array.from(row.embedding) }));
  }

  private async bm25(generation: number): Promise<Bm25Index> {
    const r = await this.query<{ data: Buffer }>(`SELECT data FROM ${this.s}.blobs WHERE generation = $1 AND name = 'bm25'`, [generation]);
    if (!r.rows[0]) throw new CanopyError(ErrorCodes.indexCorrupt, `index at ${this.location} has no BM25 index for generation ${generation} (it was written with lexical=tsvector; re-index with lexical=bm25)`);
    return Bm25Index.fromBuffer(r.rows[0].data);
  }

  async vectorCache(encoder: Pick<Encoder, 'id' | 'dim'>): Promise<VectorCache> {
    await this.ensureSchema();
    return new PostgresVectorCache(encoder, (sql, params) => this.query(sql, params), this.s);
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

/**
 * pgvector's text form of a float32 vector, nine significant digits per number (enough to
 * round-trip a float32; the default conversion writes up to 17, which doubles what a bulk load
 * sends and the server parses).
 */
export function vectorLiteral(v: Float32Array): string {
  let out = '[';
  for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + String(Number(v[i]!.toPrecision(9)));
  return `${out}]`;
}

type Query = <R extends pg.QueryResultRow>(sql: string, params: unknown[]) => Promise<pg.QueryResult<R>>;

/** The node-vector cache in the `node_vectors` table: float32 bytes keyed by model and SHA-256 of the normalised text. */
class PostgresVectorCache implements VectorCache {
  readonly modelId: string;
  readonly dim: number;
  private pending = new Map<string, Float32Array>();

  constructor(
    encoder: Pick<Encoder, 'id' | 'dim'>,
    private readonly run: Query,
    private readonly s: string,
  ) {
    this.modelId = encoder.id;
    this.dim = encoder.dim;
  }

  private static key(text: string): Buffer {
    return createHash('sha256').update(normalizeText(text), 'utf8').digest();
  }

  async lookup(texts: readonly string[]): Promise<Array<Float32Array | undefined>> {
    const keys = texts.map(PostgresVectorCache.key);
    const hex = keys.map((k) => k.toString('hex'));
    const found = new Map<string, Float32Array>();
    const ask: Buffer[] = [];
    hex.forEach((h, i) => {
      const p = this.pending.get(h);
      if (p) found.set(h, p);
      else if (!found.has(h)) ask.push(keys[i]!);
    });
    for (let i = 0; i < ask.length; i += 1000) {
      const r = await this.run<{ key: Buffer; vector: Buffer }>(`SELECT key, vector FROM ${this.s}.node_vectors WHERE model = $1 AND key = ANY($2::bytea[])`, [this.modelId, ask.slice(i, i + 1000)]);
      for (const row of r.rows) {
        if (row.vector.length !== this.dim * 4) continue;
        const v = new Float32Array(this.dim);
        new Uint8Array(v.buffer).set(row.vector);
        found.set(row.key.toString('hex'), v);
      }
    }
    return hex.map((h) => found.get(h));
  }

  async getOrEncode(texts: readonly string[], encoder: Encoder, signal?: AbortSignal): Promise<Float32Array[]> {
    if (encoder.id !== this.modelId || encoder.dim !== this.dim) {
      throw new CanopyError(ErrorCodes.badInput, `node-vector cache for ${this.modelId} used with encoder ${encoder.id}`);
    }
    const have = await this.lookup(texts);
    const missing = new Map<string, string>();
    texts.forEach((t, i) => {
      if (!have[i]) missing.set(PostgresVectorCache.key(t).toString('hex'), t);
    });
    if (missing.size > 0) {
      const fresh = await encoder.encode([...missing.values()], signal);
      if (fresh.length !== missing.size) throw new CanopyError(ErrorCodes.encoderFailed, `encoder returned ${fresh.length} vectors for ${missing.size} texts`);
      [...missing.keys()].forEach((k, i) => {
        const v = fresh[i]!;
        if (v.length !== this.dim) throw new CanopyError(ErrorCodes.encoderFailed, `encoder returned a ${v.length}-d vector, expected ${this.dim}`);
        this.pending.set(k, v);
      });
    }
    return texts.map((t, i) => have[i] ?? this.pending.get(PostgresVectorCache.key(t).toString('hex'))!);
  }

  async save(): Promise<void> {
    const entries = [...this.pending];
    for (let i = 0; i < entries.length; i += 1000) {
      const batch = entries.slice(i, i + 1000);
      await this.run(
        `INSERT INTO ${this.s}.node_vectors (model, key, vector) SELECT $1, k, v FROM unnest($2::bytea[], $3::bytea[]) AS t(k, v) ON CONFLICT (model, key) DO NOTHING`,
        [this.modelId, batch.map(([k]) => Buffer.from(k, 'hex')), batch.map(([, v]) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))],
      );
    }
    for (const [k] of entries) this.pending.delete(k);
  }
}
