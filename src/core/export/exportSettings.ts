/**
 * The trace export the settings ask for (`canopy.export.*`), under the Workspace Trust policy of
 * core/config/trust.ts: exported spans carry document text (the reader input, region texts), so
 * in an untrusted workspace they go to no endpoint off this machine — the same rule as a remote LLM.
 */
import * as path from 'node:path';
import type { CanopySettings } from '../config/settings';
import type { TrustGate } from '../config/trust';
import { isLoopbackHost } from '../llm/openaiProvider';
import { tracesUrl, type TraceExportConfig } from './otlpExport';

export function exportConfigFromSettings(settings: Pick<CanopySettings, 'exportOtlpEndpoint' | 'exportFile' | 'exportProject'>, root: string, trusted: boolean): TrustGate<TraceExportConfig | undefined> {
  const notes: string[] = [];
  let endpoint = settings.exportOtlpEndpoint || undefined;
  if (endpoint && !trusted) {
    let host = '';
    try {
      host = new URL(tracesUrl(endpoint)).hostname;
    } catch {
      // a malformed endpoint is reported when the exporter is built
    }
    if (!isLoopbackHost(host)) {
      notes.push(`the workspace is not trusted, so no trace (it holds document text) is exported to ${endpoint}`);
      endpoint = undefined;
    }
  }
  const file = settings.exportFile ? path.resolve(root, settings.exportFile) : undefined;
  if (!endpoint && !file) return { value: undefined, ...(notes.length ? { note: notes.join('; ') } : {}) };
  return {
    value: { ...(endpoint ? { endpoint } : {}), ...(file ? { file } : {}), project: settings.exportProject },
    ...(notes.length ? { note: notes.join('; ') } : {}),
  };
}
