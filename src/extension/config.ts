/**
 * Reads the `canopy.*` settings (and `files.exclude`) from the VS Code configuration into the
 * core's typed CanopySettings. The only place the extension reads configuration.
 */
import * as vscode from 'vscode';
import { type CanopySettings, defaultSettings, resolveSettings, settingKeys } from '../core/config/settings';

export function readSettings(scope?: vscode.ConfigurationScope): CanopySettings {
  const config = vscode.workspace.getConfiguration(undefined, scope);
  const partial: Partial<Record<keyof CanopySettings, unknown>> = {};
  for (const field of Object.keys(defaultSettings) as (keyof CanopySettings)[]) partial[field] = config.get(settingKeys[field]);
  return resolveSettings(partial);
}

/** `files.exclude` patterns that are switched on, as globs. */
export function readFilesExclude(scope?: vscode.ConfigurationScope): string[] {
  const table = vscode.workspace.getConfiguration('files', scope).get<Record<string, unknown>>('exclude') ?? {};
  return Object.entries(table)
    .filter(([, on]) => on === true)
    .map(([glob]) => glob);
}

/** True when a configuration change touches a setting that changes how the index is built. */
export function affectsIndex(e: vscode.ConfigurationChangeEvent): boolean {
  return ['canopy.include', 'canopy.exclude', 'canopy.maxFileSizeMB', 'canopy.maxNodesPerFile', 'canopy.branchingFactor', 'canopy.encoder.modelFolder', 'files.exclude'].some((k) =>
    e.affectsConfiguration(k),
  );
}
