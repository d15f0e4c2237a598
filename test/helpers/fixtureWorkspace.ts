/**
 * A copy of a fixture folder indexed with the real built-in encoder (the model `npm run build`
 * converts), with the core services over it (test/helpers/services.ts) and the agent operations
 * the hosts build on them: what the agent, MCP, chat and export tests ask questions of.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentOperations } from '../../src/core/agent/operations';
import { openServices, type TestServices } from './services';

export const fixturesDir = fileURLToPath(new URL('../fixtures', import.meta.url));

export interface IndexedFixture {
  root: string;
  indexDir: string;
  services: TestServices;
  /** The agent operations over the services, with the services' settings. */
  agent: AgentOperations;
  dispose(): Promise<void>;
}

/** Copies `fixtures/<name>` to a temp folder, indexes it (index in `<tmp>/index`) and opens its services. */
export async function indexedFixture(name: string): Promise<IndexedFixture> {
  const tmp = mkdtempSync(join(tmpdir(), `canopy-${name}-`));
  const root = join(tmp, 'workspace');
  cpSync(join(fixturesDir, name), root, { recursive: true });
  const indexDir = join(tmp, 'index');
  const services = openServices({ root, indexDir });
  const summary = await services.index.index(services.settings);
  if (summary.errors.length > 0) throw new Error(`indexing ${name} failed: ${JSON.stringify(summary.errors)}`);
  return {
    root,
    indexDir,
    services,
    agent: new AgentOperations({ asker: services.ask, traces: services.traces, settings: () => services.settings }),
    async dispose() {
      await services.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
