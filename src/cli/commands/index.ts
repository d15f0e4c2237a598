/**
 * `canopy index <dir>`: walks a folder with the same rules the extension uses and reports
 * what will be indexed, by format, and every file left out with its reason.
 */
import { parseArgs } from 'node:util';
import { resolveSettings } from '../../core/config/settings';
import { discoverFiles, type Discovery } from '../../core/ingest/discover';
import { type CliIO, UsageError } from '../io';

export const indexHelp = `Usage: canopy index <dir> [options]

Index the documents of <dir>.

Options:
  --include <glob>     files to index (repeatable; default **/*)
  --exclude <glob>     files never to index (repeatable; added to the defaults)
  --max-file-mb <n>    skip files larger than n MB (default 50)
  --no-gitignore       do not read .gitignore files
  --json               print one JSON object instead of a table`;

export async function runIndex(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      include: { type: 'string', multiple: true },
      exclude: { type: 'string', multiple: true },
      'max-file-mb': { type: 'string' },
      'no-gitignore': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('index takes exactly one folder');
  const maxMb = values['max-file-mb'] === undefined ? undefined : Number(values['max-file-mb']);
  if (maxMb !== undefined && !(maxMb > 0)) throw new UsageError('--max-file-mb must be a positive number');
  const defaults = resolveSettings({});
  const settings = resolveSettings({
    include: values.include,
    exclude: [...defaults.exclude, ...(values.exclude ?? [])],
    maxFileSizeMB: maxMb,
  });

  const started = Date.now();
  const discovery = await discoverFiles(positionals[0]!, {
    include: settings.include,
    exclude: settings.exclude,
    maxFileSizeMB: settings.maxFileSizeMB,
    respectGitignore: !values['no-gitignore'],
  });
  const seconds = (Date.now() - started) / 1000;

  if (values.json) {
    io.out(JSON.stringify(summarise(discovery, seconds)));
    return 0;
  }
  printSummary(discovery, seconds, io);
  return 0;
}

function summarise(d: Discovery, seconds: number) {
  const byFormat: Record<string, number> = {};
  for (const f of d.files) byFormat[f.format] = (byFormat[f.format] ?? 0) + 1;
  return {
    root: d.root,
    files: d.files.map((f) => ({ path: f.relPath, format: f.format, bytes: f.size })),
    byFormat,
    skipped: d.skipped,
    seconds,
  };
}

function printSummary(d: Discovery, seconds: number, io: CliIO): void {
  const s = summarise(d, seconds);
  io.out(`Corpus ${d.root}`);
  const width = Math.max(4, ...d.files.map((f) => f.relPath.length));
  io.out(`  ${'file'.padEnd(width)}  ${'format'.padEnd(9)}  bytes`);
  for (const f of d.files) io.out(`  ${f.relPath.padEnd(width)}  ${f.format.padEnd(9)}  ${f.size}`);
  const formats = Object.entries(s.byFormat)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  io.out(`${d.files.length} files (${formats || 'none'}), ${d.skipped.length} skipped, ${seconds.toFixed(2)} s`);
  for (const k of d.skipped) io.out(`  skipped ${k.relPath}: ${k.reason}`);
}
