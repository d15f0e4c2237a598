/**
 * `canopy bench index`: files/s, nodes/s and peak RSS of indexing a real folder with the
 * workspace indexer — pool documents written as one Markdown file each, or any folder (e.g. a
 * folder of PDFs) — and the time to re-index after editing one file of an N-file workspace,
 * asserting that only that file was parsed (see eval/bench/indexBench.ts).
 */
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { benchFolder, benchReindex, writeMarkdownWorkspace } from '../../eval/bench/indexBench';
import { machine, peakRssMiB } from '../../eval/bench/measure';
import { type CliIO, UsageError } from '../io';
import { packageRoot } from '../runtime';
import { benchDocs, evalCacheDir, nonNegative, positive } from './benchShared';
import { type EncoderReference, type ExtractionReference, formatStageReport, type StageReport } from '../../eval/bench/indexStages';

export const benchIndexHelp = `Usage: canopy bench index (--markdown-from <file>... | --folder <dir> | --reindex <n> --markdown-from <file>...) [options]

Options:
  --markdown-from <f>  pool / corpus JSONL whose documents are written as one Markdown file each (repeatable)
  --docs <n>           how many documents (default: all)
  --folder <dir>       index this folder as it is (e.g. a folder of PDFs)
  --reindex <n>        re-index benchmark on an n-file Markdown workspace
  --edits <n>          re-index: edits measured (default 3)
  --repeats <n>        warm re-index runs (default 2; 0 for none)
  --reference          also measure, in the same run, pdf.js alone on the folder's PDFs (before
                       the index) and the encoder alone on the texts the index encoded (after)
  --unchanged          also time re-indexing the folder with nothing changed (fresh services)
  --seed-cache <dir>   an embedding cache folder to start from (default: <cache>/embeddings)
  --cold               start from an empty embedding cache instead
  --cache <dir>        cache root (default ~/.cache/canopy-eval)
  --work <dir>         work folder (default <cache>/bench/index-…)
  --json               print one JSON object`;

export async function runBenchIndex(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'markdown-from': { type: 'string', multiple: true },
      docs: { type: 'string' },
      folder: { type: 'string' },
      reindex: { type: 'string' },
      edits: { type: 'string' },
      repeats: { type: 'string' },
      reference: { type: 'boolean' },
      unchanged: { type: 'boolean' },
      'seed-cache': { type: 'string' },
      cold: { type: 'boolean' },
      cache: { type: 'string' },
      work: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const cache = evalCacheDir(io, values.cache);
  const common = {
    encoder: { kind: 'builtin' } as const,
    builtinModelDir: path.join(packageRoot(), 'models', 'use-lite'),
    branchingFactor: 2,
    ...(values.cold ? {} : { seedCache: path.resolve(io.cwd, values['seed-cache'] ?? path.join(cache, 'embeddings')) }),
    ...(values.reference ? { reference: true } : {}),
    ...(values.unchanged ? { unchanged: true } : {}),
  };
  const repeats = nonNegative(values.repeats, '--repeats', 2);
  let result: unknown;
  if (values.reindex !== undefined) {
    const n = positive(values.reindex, '--reindex', 1000);
    const docs = benchDocs(io, values['markdown-from'], n);
    const work = path.resolve(io.cwd, values.work ?? path.join(cache, 'bench', `reindex-${n}`));
    const root = path.join(work, 'ws');
    rmSync(root, { recursive: true, force: true }); // edits change files: start from clean copies
    const files = writeMarkdownWorkspace(root, docs);
    result = { kind: 'reindex', ...(await benchReindex(root, files, work, { ...common, edits: positive(values.edits, '--edits', 3) })) };
  } else if (values.folder !== undefined) {
    const root = path.resolve(io.cwd, values.folder);
    const work = path.resolve(io.cwd, values.work ?? path.join(cache, 'bench', `index-folder-${path.basename(root)}`));
    result = { kind: 'folder', ...(await benchFolder(root, work, { ...common, repeats })) };
  } else if (values['markdown-from'] !== undefined) {
    const docs = benchDocs(io, values['markdown-from'], values.docs === undefined ? undefined : positive(values.docs, '--docs', 1));
    const work = path.resolve(io.cwd, values.work ?? path.join(cache, 'bench', `index-markdown-${docs.length}`));
    const root = path.join(work, 'ws');
    writeMarkdownWorkspace(root, docs);
    result = { kind: 'markdown', documents: docs.length, ...(await benchFolder(root, work, { ...common, repeats })) };
  } else throw new UsageError('give --markdown-from <file>, --folder <dir> or --reindex <n>');
  const out = { machine: machine(), result, peakRssMiB: peakRssMiB() };
  if (values.json) io.out(JSON.stringify(out));
  else {
    const r = result as { stages?: StageReport; reference?: { extraction?: ExtractionReference; encoder?: EncoderReference } };
    if (r.stages) io.out(`${formatStageReport(r.stages, r.reference ?? {})}\n`);
    io.out(JSON.stringify(out, null, 2));
  }
  return 0;
}
