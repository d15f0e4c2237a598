/**
 * The CLI's trace-export flags, shared by `canopy ask`, `canopy mcp` and `canopy export`:
 * `--otlp-endpoint <url>` (OTLP/HTTP, e.g. Phoenix at http://localhost:6006), `--otlp-file <file>`
 * (OTLP JSON lines) and `--otlp-header name=value` (repeatable; header values such as API keys can
 * also come from OTEL_EXPORTER_OTLP_HEADERS, which the OpenTelemetry exporter reads itself).
 */
import * as path from 'node:path';
import { bpeTokenCounter } from '../core/compress/tokens';
import type { TraceExporter } from '../core/export/otlpExport';
import { type CliIO, UsageError } from './io';

declare const CANOPY_VERSION: string | undefined;

export const exportFlagOptions = {
  'otlp-endpoint': { type: 'string' },
  'otlp-file': { type: 'string' },
  'otlp-header': { type: 'string', multiple: true },
  'otlp-project': { type: 'string' },
} as const;

export const exportFlagsHelp = `  --otlp-endpoint <url>  export every answer's trace as OpenInference spans to an OTLP/HTTP
                         endpoint (e.g. Phoenix: http://localhost:6006)
  --otlp-file <file>     ... or append them to a file as OTLP JSON lines
  --otlp-header <k=v>    a request header for the endpoint (repeatable)
  --otlp-project <name>  openinference.project.name (default canopy)`;

export function exporterFromFlags(
  values: { 'otlp-endpoint'?: string | undefined; 'otlp-file'?: string | undefined; 'otlp-header'?: string[] | undefined; 'otlp-project'?: string | undefined },
  io: CliIO,
): TraceExporter | undefined {
  const endpoint = values['otlp-endpoint'];
  const file = values['otlp-file'];
  if (!endpoint && !file) {
    if (values['otlp-header']?.length || values['otlp-project']) throw new UsageError('--otlp-header and --otlp-project need --otlp-endpoint or --otlp-file');
    return undefined;
  }
  const headers: Record<string, string> = {};
  for (const h of values['otlp-header'] ?? []) {
    const eq = h.indexOf('=');
    if (eq <= 0) throw new UsageError(`--otlp-header must be name=value, not "${h}"`);
    headers[h.slice(0, eq).trim()] = h.slice(eq + 1).trim();
  }
  const tokens = bpeTokenCounter();
  // The OpenTelemetry exporter is required only when a trace is to be exported.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { TraceExporter } = require('../core/export/otlpExport') as typeof import('../core/export/otlpExport');
  try {
    return new TraceExporter({
      ...(endpoint ? { endpoint } : {}),
      ...(file ? { file: path.resolve(io.cwd, file) } : {}),
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(values['otlp-project'] ? { project: values['otlp-project'] } : {}),
      version: typeof CANOPY_VERSION === 'string' ? CANOPY_VERSION : 'dev',
      mapping: { countTokens: (t) => tokens.count(t) },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
