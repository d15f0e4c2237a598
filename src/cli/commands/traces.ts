/**
 * `canopy traces`: the saved answers of an index — how many and how big (`info`), and deleting
 * the oldest beyond a retention (`prune`; every answer applies the settings' retention itself).
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { describeRetention, formatBytes, TraceStore, type TraceRetention } from '../../core/app/traceStore';
import { defaultSettings } from '../../core/config/settings';
import { type CliIO, UsageError } from '../io';
import { cliLogger, defaultIndexDir } from '../runtime';

export const tracesHelp = `Usage: canopy traces info|prune [--dir <dir>] [--index <dir>] [options]

Every answer is saved as one gzip-compressed trace (0.1–0.3 MB; 0.9–2.2 MB of JSON) in
<index>/traces (the CLI's index: <dir>/.canopy/index). After each answer the oldest are deleted
beyond ${defaultSettings.tracesMaxCount} traces or ${defaultSettings.tracesMaxSizeMB} MB (VS Code: canopy.traces.maxCount, canopy.traces.maxSizeMB).

info    how many traces are saved and how much disk they take
prune   delete the oldest traces beyond a retention (default: the settings' defaults)

Options:
  --dir <dir>            the indexed folder (default: the current folder)
  --index <dir>          the index (default <dir>/.canopy/index)
  --max-count <n>        prune: keep at most n traces, newest first (0 = no limit on the count)
  --max-size-mb <n>      prune: keep at most n MB of them (0 = no limit on the size)
  --json                 print one JSON object`;

function count(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`${flag} must be a number of at least 0`);
  return n;
}

export async function runTraces(args: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'info' && sub !== 'prune') throw new UsageError('traces needs a subcommand: info or prune');
  const { values } = parseArgs({
    args: rest,
    options: { dir: { type: 'string' }, index: { type: 'string' }, 'max-count': { type: 'string' }, 'max-size-mb': { type: 'string' }, json: { type: 'boolean' } },
  });
  const root = path.resolve(io.cwd, values.dir ?? '.');
  const indexDir = values.index ? path.resolve(io.cwd, values.index) : defaultIndexDir(root);
  const store = new TraceStore(path.join(indexDir, 'traces'), cliLogger(io, false));
  if (sub === 'info') {
    if (values['max-count'] !== undefined || values['max-size-mb'] !== undefined) throw new UsageError('--max-count and --max-size-mb are options of traces prune');
    // A prune with no limits deletes nothing and measures everything.
    const { kept, bytes } = await store.prune({ maxCount: 0, maxBytes: 0 });
    if (values.json) io.out(JSON.stringify({ dir: store.dir, traces: kept, bytes }));
    else io.out(`${kept} saved trace(s), ${formatBytes(bytes)}, in ${store.dir}`);
    return 0;
  }
  const retention: TraceRetention = {
    maxCount: Math.round(count(values['max-count'], '--max-count', defaultSettings.tracesMaxCount)),
    maxBytes: Math.round(count(values['max-size-mb'], '--max-size-mb', defaultSettings.tracesMaxSizeMB) * 1024 * 1024),
  };
  const result = await store.prune(retention);
  if (values.json) io.out(JSON.stringify({ dir: store.dir, retention, deleted: result.deleted, kept: result.kept, bytes: result.bytes, freed: result.freed }));
  else io.out(`pruned ${store.dir} to ${describeRetention(retention)}: ${result.deleted.length} deleted (${formatBytes(result.freed)} freed), ${result.kept} kept (${formatBytes(result.bytes)})`);
  return 0;
}
