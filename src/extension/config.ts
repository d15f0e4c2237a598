/**
 * Reads the `canopy.*` settings (and `files.exclude`) from the VS Code configuration into the
 * core's typed CanopySettings. The only place the extension reads configuration.
 */
import * as vscode from 'vscode';
import { type CanopySettings, defaultSettings, resolveSettings, settingKeys } from '../core/config/settings';
import { userEncoderFolder } from '../core/config/trust';
import type { EncoderConfig } from '../core/encode/encoder';

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

/**
 * The encoder the settings ask for, after Workspace Trust (an untrusted workspace loads no
 * user-supplied model); `note` says why the configured folder is not used.
 */
export function encoderFromSettings(settings: CanopySettings, trusted: boolean): { config: EncoderConfig; note?: string } {
  const { value, note } = userEncoderFolder(settings.encoderModelFolder, trusted);
  return { config: value ? { kind: 'onnx-folder', path: value } : { kind: 'builtin' }, ...(note ? { note } : {}) };
}
