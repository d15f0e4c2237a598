/**
 * Which index store to use, from one string — the `canopy.store` setting and the CLI's
 * `--store` flag:
 *
 *   local                       the local store in the index folder (default)
 *   local?vectors=i8            …with int8 item vectors and exact rescoring (a quarter of the memory)
 *   postgres://user@host:5432/db[?schema=canopy&lexical=tsvector|bm25&ef_search=100&m=16&ef_construction=64]
 *                               Postgres with pgvector (also postgresql://); other URL parameters
 *                               (sslmode, …) go to the driver. Put the password in PGPASSWORD or
 *                               ~/.pgpass rather than in the URL of a setting.
 */
import { CanopyError, ErrorCodes } from '../errors';
import type { IndexStore } from './indexStore';
import { LocalStore } from './localStore';
import type { PostgresStoreOptions } from './postgresStore';

/** The Postgres adapter and its driver, required only for a postgres:// store (the local store never loads them). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const postgres = () => require('./postgresStore') as typeof import('./postgresStore');
const redactUrl = (url: string): string => postgres().redactUrl(url);

export type StoreSpec = { kind: 'local'; vectorEncoding: 'f32' | 'i8' } | { kind: 'postgres'; options: PostgresStoreOptions & { connectionString: string } };

const CANOPY_PARAMS = ['schema', 'lexical', 'ef_search', 'm', 'ef_construction'];

function positiveInt(value: string | null, name: string, spec: string): number | undefined {
  if (value === null) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CanopyError(ErrorCodes.badInput, `store ${redactUrl(spec)}: ${name} must be a positive integer, not "${value}"`);
  return n;
}

export function parseStoreSpec(spec: string | undefined): StoreSpec {
  const s = (spec ?? '').trim();
  if (s === '' || s === 'local') return { kind: 'local', vectorEncoding: 'f32' };
  if (s.startsWith('local?')) {
    const params = new URLSearchParams(s.slice('local?'.length));
    for (const key of params.keys()) if (key !== 'vectors') throw new CanopyError(ErrorCodes.badInput, `store ${s}: unknown parameter "${key}" (the local store takes vectors=f32|i8)`);
    const v = params.get('vectors') ?? 'f32';
    if (v !== 'f32' && v !== 'i8') throw new CanopyError(ErrorCodes.badInput, `store ${s}: vectors must be f32 or i8, not "${v}"`);
    return { kind: 'local', vectorEncoding: v };
  }
  if (/^postgres(ql)?:\/\//.test(s)) {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      throw new CanopyError(ErrorCodes.badInput, `store ${redactUrl(s)} is not a valid URL`);
    }
    const p = url.searchParams;
    const lexical = p.get('lexical') ?? 'tsvector';
    if (lexical !== 'tsvector' && lexical !== 'bm25') throw new CanopyError(ErrorCodes.badInput, `store ${redactUrl(s)}: lexical must be tsvector or bm25, not "${lexical}"`);
    const efSearch = positiveInt(p.get('ef_search'), 'ef_search', s);
    const m = positiveInt(p.get('m'), 'm', s);
    const efConstruction = positiveInt(p.get('ef_construction'), 'ef_construction', s);
    const schema = p.get('schema') ?? undefined;
    for (const name of CANOPY_PARAMS) p.delete(name);
    const connectionString = url.toString();
    return {
      kind: 'postgres',
      options: {
        connectionString,
        lexical,
        ...(schema ? { schema } : {}),
        hnsw: { ...(efSearch ? { efSearch } : {}), ...(m ? { m } : {}), ...(efConstruction ? { efConstruction } : {}) },
        label: `${redactUrl(connectionString)}${schema ? ` schema ${schema}` : ''}`,
      },
    };
  }
  throw new CanopyError(ErrorCodes.badInput, `unknown store "${redactUrl(s)}": use "local" or a postgres:// URL`);
}

/** The store a spec names; a local store lives in `indexDir`. */
export function openIndexStore(spec: string | undefined, indexDir: string): IndexStore {
  const parsed = parseStoreSpec(spec);
  return parsed.kind === 'local' ? new LocalStore(indexDir, { vectorEncoding: parsed.vectorEncoding }) : new (postgres().PostgresStore)(parsed.options);
}
