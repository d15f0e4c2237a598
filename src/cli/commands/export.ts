/**
 * `canopy export`: sends saved traces as OpenInference spans to an OTLP/HTTP endpoint or a file
 * (src/core/export), for answers asked before an exporter was configured.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { findSavedTrace } from '../../core/agent/operations';
import { TraceStore } from '../../core/app/traceStore';
import { type CliIO, UsageError } from '../io';
import { cliLogger, defaultIndexDir } from '../runtime';
import { exportFlagOptions, exportFlagsHelp, exporterFromFlags } from '../traceExportFlags';

export const exportHelp = `Usage: canopy export [<trace id or file name>…] [--all] (--otlp-endpoint <url> | --otlp-file <file>)

Export saved answers' traces as OpenTelemetry spans in the OpenInference conventions, e.g. to
Phoenix (--otlp-endpoint http://localhost:6006) or any OTLP backend.

Options:
  --dir <dir>            the indexed folder (default: the current folder)
  --index <dir>          the index (default <dir>/.canopy/index)
  --all                  every saved trace
${exportFlagsHelp}`;

export async function runExport(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { dir: { type: 'string' }, index: { type: 'string' }, all: { type: 'boolean' }, ...exportFlagOptions },
  });
  const exporter = exporterFromFlags(values, io);
  if (!exporter) throw new UsageError('export needs --otlp-endpoint or --otlp-file');
  if (values.all && positionals.length > 0) throw new UsageError('name traces or pass --all, not both');
  if (!values.all && positionals.length === 0) throw new UsageError('name at least one trace (id or file name), or pass --all');
  // Only the saved traces are read: no encoder, no index is opened.
  const root = path.resolve(io.cwd, values.dir ?? '.');
  const indexDir = values.index ? path.resolve(io.cwd, values.index) : defaultIndexDir(root);
  const traces = new TraceStore(path.join(indexDir, 'traces'), cliLogger(io, false));
  const refs = values.all ? (await traces.list()).map((t) => t.name) : positionals;
  let failed = 0;
  for (const ref of refs) {
    try {
      const { trace, name } = await findSavedTrace(traces, ref);
      const { spans } = await exporter.export(trace);
      io.out(`${name}: ${spans} spans → ${exporter.describe()}`);
    } catch (err) {
      failed++;
      io.err(`canopy export: ${ref}: ${(err as Error).message}`);
    }
  }
  if (refs.length === 0) io.err('canopy export: no saved traces');
  return failed > 0 ? 1 : 0;
}
