/**
 * A real Postgres engine for tests: PGlite with pgvector, in memory, served over a loopback
 * socket so the stores under test use the plain `pg` client exactly as against a server. A new
 * PGlite database takes a minute to initialise on a busy 2-core machine, so the first start
 * dumps its data folder as a template (in the temp folder, per PGlite version) and later starts
 * load it.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgliteHost } from '../../src/core/index/pgliteHost';

const version = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string }).version;
export const templateFile = join(tmpdir(), `canopy-pglite-template-${version}.tgz`);

/** The template data folder (created on first use). */
export async function pgliteTemplate(): Promise<Uint8Array> {
  if (existsSync(templateFile)) return readFileSync(templateFile);
  const host = await PgliteHost.open(undefined);
  const bytes = await host.dump();
  await host.close();
  const tmp = `${templateFile}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, templateFile);
  return bytes;
}

export interface ServedPglite {
  host: PgliteHost;
  url: string;
  close(): Promise<void>;
}

/** An in-memory PGlite (or one in `dataDir`) served on a loopback port. */
export async function servePglite(dataDir?: string, maxConnections = 64): Promise<ServedPglite> {
  const host = await PgliteHost.open(dataDir, { template: await pgliteTemplate() });
  const server = await host.serve({ maxConnections });
  return { host, url: server.url, close: () => host.close() };
}
