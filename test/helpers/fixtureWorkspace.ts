/**
 * A CanopyWorkspace over a copy of a fixture folder, indexed with the real built-in encoder (the
 * model `npm run build` converts): what the agent, MCP and export tests ask questions of.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CanopyWorkspace } from '../../src/core/app/workspace';
import { resolveSettings } from '../../src/core/config/settings';

export const fixturesDir = fileURLToPath(new URL('../fixtures', import.meta.url));
export const builtinModelDir = fileURLToPath(new URL('../../models/use-lite', import.meta.url));

export interface FixtureWorkspace {
  root: string;
  indexDir: string;
  workspace: CanopyWorkspace;
  dispose(): Promise<void>;
}

/** Copies `fixtures/<name>` to a temp folder, indexes it (index in `<tmp>/index`) and returns the workspace. */
export async function indexedFixture(name: string): Promise<FixtureWorkspace> {
  const tmp = mkdtempSync(join(tmpdir(), `canopy-${name}-`));
  const root = join(tmp, 'workspace');
  cpSync(join(fixturesDir, name), root, { recursive: true });
  const indexDir = join(tmp, 'index');
  const workspace = new CanopyWorkspace({
    root,
    indexDir,
    settings: resolveSettings({}),
    encoder: { kind: 'builtin' },
    builtinModelDir,
  });
  const summary = await workspace.index();
  if (summary.errors.length > 0) throw new Error(`indexing ${name} failed: ${JSON.stringify(summary.errors)}`);
  return {
    root,
    indexDir,
    workspace,
    async dispose() {
      await workspace.dispose();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
