/**
 * `canopy index <dir>`: indexes a folder incrementally (only changed files are re-parsed and
 * re-embedded) with a progress bar, then prints a summary: files, items, nodes, errors, time.
 */
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { resolveSettings } from '../../core/config/settings';
import { discoverFiles } from '../../core/ingest/discover';
import { supportedExtensions } from '../../core/ingest/documentFormat';
import { namedOnce, type IndexSummary } from '../../core/index/indexer';
import { type CliIO, UsageError } from '../io';
import { cliServices, storeSetting } from '../runtime';

export const indexHelp = `Usage: canopy index <dir> [options]

Index the documents of <dir> (incrementally: unchanged files are reused).

Options:
  --index <dir>        where the index lives (default <dir>/.canopy/index)
  --store <store>      local (default) | local?vectors=i8 | postgres://user@host:5432/db[?schema=…&lexical=tsvector|bm25]
                       (Postgres with pgvector; also CANOPY_STORE; password in PGPASSWORD or ~/.pgpass)
  --include <glob>     files to index (repeatable; default **/*)
  --exclude <glob>     files never to index (repeatable; added to the defaults)
  --max-file-mb <n>    skip files larger than n MB (default 50)
  --max-parse-memory-mb <n>  heap limit of the worker that parses one file, MB (default 1024)
  --max-nodes <n>      most regions one file may produce; a file with more keeps its first
                       part, with a warning (default 100000)
  --branching <B>      branching factor of the region trees, 2-4 (default 2)
  --topics             fit the topic compass with the index (canopy.topics.enabled; canopy topics --help)
  --list               only list the files that would be indexed
  --json               print one JSON object instead of a summary
  --verbose            log every file (parsed, unchanged or failed) as it goes`;

export async function runIndex(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      index: { type: 'string' },
      store: { type: 'string' },
      include: { type: 'string', multiple: true },
      exclude: { type: 'string', multiple: true },
      'max-file-mb': { type: 'string' },
      'max-parse-memory-mb': { type: 'string' },
      'max-nodes': { type: 'string' },
      branching: { type: 'string' },
      topics: { type: 'boolean' },
      list: { type: 'boolean' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('index takes exactly one folder');
  const maxMb = values['max-file-mb'] === undefined ? undefined : Number(values['max-file-mb']);
  if (maxMb !== undefined && !(maxMb > 0)) throw new UsageError('--max-file-mb must be a positive number');
  const parseMb = values['max-parse-memory-mb'] === undefined ? undefined : Number(values['max-parse-memory-mb']);
  if (parseMb !== undefined && !(Number.isInteger(parseMb) && parseMb >= 64)) throw new UsageError('--max-parse-memory-mb must be a whole number of MB, at least 64');
  const maxNodes = values['max-nodes'] === undefined ? undefined : Number(values['max-nodes']);
  if (maxNodes !== undefined && !(Number.isInteger(maxNodes) && maxNodes >= 100)) throw new UsageError('--max-nodes must be a whole number, at least 100');
  const branching = values.branching === undefined ? undefined : Number(values.branching);
  if (branching !== undefined && !(Number.isInteger(branching) && branching >= 2 && branching <= 4)) throw new UsageError('--branching must be 2, 3 or 4');
  const defaults = resolveSettings({});
  const settings = resolveSettings({
    include: values.include ?? defaults.include,
    exclude: [...defaults.exclude, ...(values.exclude ?? [])],
    maxFileSizeMB: maxMb ?? defaults.maxFileSizeMB,
    maxParseMemoryMB: parseMb ?? defaults.maxParseMemoryMB,
    maxNodesPerFile: maxNodes ?? defaults.maxNodesPerFile,
    branchingFactor: branching ?? defaults.branchingFactor,
    ...(values.topics ? { topicsEnabled: true } : {}),
    ...storeSetting(values.store, io),
  });

  if (values.list) {
    const d = await discoverFiles(positionals[0]!, { ...settings, exclude: [...settings.exclude, '**/.canopy/**'] });
    if (values.json) io.out(JSON.stringify({ root: d.root, files: d.files.map((f) => ({ path: f.relPath, format: f.format, bytes: f.size })), skipped: d.skipped }));
    else {
      for (const f of d.files) io.out(`${f.relPath}\t${f.format}\t${f.size}`);
      for (const s of d.skipped) io.out(`skipped ${s.relPath}: ${s.reason}`);
    }
    return 0;
  }

  const services = cliServices(positionals[0]!, values.index, io, values.verbose, settings.store);
  // --verbose logs a line per file on stderr, which a redrawn bar would overwrite.
  const bar = io.isTTY && !values.json && !values.verbose ? new SingleBar({ format: 'indexing [{bar}] {value}/{total} {file}', hideCursor: true, clearOnComplete: true }) : undefined;
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  let summary: IndexSummary;
  try {
    let started = false;
    summary = await services.index.index(settings, {
      signal: abort.signal,
      progress: {
        report: ({ done, total, message }) => {
          if (!bar) return;
          if (!started) {
            bar.start(total, done, { file: '' });
            started = true;
          }
          bar.update(done, { file: message ?? '' });
        },
      },
    });
    bar?.stop();
  } finally {
    process.off('SIGINT', onSigint);
    bar?.stop();
    await services.close();
  }
  if (values.json) {
    // The generation stage's summary under its own name (`topics`), as the JSON has always had it.
    const { stage, ...rest } = summary;
    const hint = emptyFolderHint(summary);
    io.out(JSON.stringify({ ...rest, ...(stage ? { [stage.name]: stage.summary } : {}), ...(hint ? { hint } : {}) }));
    return 0;
  }
  printSummary(summary, io);
  return 0;
}

/** What to say when a folder gave nothing to index: which files Canopy reads, and how to see what it found. */
export function emptyFolderHint(s: Pick<IndexSummary, 'files' | 'root' | 'skipped'>): string | undefined {
  if (s.files > 0) return undefined;
  const skipped = s.skipped.length > 0 ? ` (${s.skipped.length} file(s) skipped, listed below)` : '';
  return `no supported files in ${s.root}${skipped}: Canopy reads ${supportedExtensions.map((e) => `.${e}`).join(' ')}. "canopy index ${s.root} --list" shows what it finds; --include <glob> widens the search, --exclude narrows it.`;
}

function printSummary(s: IndexSummary, io: CliIO): void {
  if (s.rebuilt) io.out(`note: ${s.rebuilt}`);
  const hint = emptyFolderHint(s);
  if (hint) io.out(`hint: ${hint}`);
  io.out(s.unchanged ? `Indexed ${s.root}: nothing changed, generation ${s.generation} stays live` : `Indexed ${s.root} (generation ${s.generation})`);
  io.out(`  files   ${s.files} (${s.parsed} parsed, ${s.reused} unchanged, ${s.removed} removed)`);
  io.out(`  items   ${s.items}`);
  io.out(`  nodes   ${s.nodes}`);
  io.out(`  errors  ${s.errors.length}`);
  if (s.stale.length > 0) io.out(`  stale   ${s.stale.length} (their last good version is served, and answers from them say so)`);
  io.out(`  warnings ${s.warnings.length}`);
  io.out(`  skipped ${s.skipped.length}`);
  io.out(`  time    ${s.seconds.toFixed(2)} s`);
  for (const e of s.errors) io.out(`  error ${namedOnce(e.file, e.reason)} (${e.code})${s.stale.some((x) => x.file === e.file) ? '; its last good version stays indexed (stale)' : ''}`);
  for (const w of s.warnings) io.out(`  warning ${namedOnce(w.file, w.message)}`);
  for (const k of s.skipped) io.out(`  skipped ${k.file}: ${k.reason}`);
}
