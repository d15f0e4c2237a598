/**
 * `canopy gold import <dataset file> --out <folder>`: writes a dataset's contexts as files under
 * the folder and appends their gold evidence to `<folder>/.canopy/annotations.jsonl` (existing
 * annotations are kept; re-importing adds nothing twice, ids are deterministic).
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { importGold } from '../../core/annotate/importGold';
import { annotationsPath, AnnotationStore } from '../../core/annotate/store';
import { type CliIO, UsageError } from '../io';

export const goldHelp = `Usage: canopy gold import <dataset file> --out <folder> [options]

Import a dataset's gold evidence (HotpotQA, 2WikiMultiHopQA, MuSiQue, TAT-QA, FeTaQA,
FinanceBench — recognised from the records) as Canopy annotations. Contexts without files are
written as one folder per question under <folder>; the annotations go to
<folder>/.canopy/annotations.jsonl.

Options:
  --out <folder>     the workspace folder to write (required)
  --limit <n>        import only the first n records
  --json             print a JSON summary`;

export async function runGold(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { out: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  });
  const [verb, file] = positionals;
  if (verb !== 'import') throw new UsageError(`unknown gold command "${verb ?? ''}"`);
  if (!file) throw new UsageError('gold import needs a dataset file');
  if (!values.out) throw new UsageError('--out <folder> is required');
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new UsageError('--limit must be a positive integer');
  const out = path.resolve(io.cwd, values.out);
  const result = await importGold(path.resolve(io.cwd, file), out, limit === undefined ? {} : { limit });
  const store = new AnnotationStore(annotationsPath(out));
  const added = await store.add(result.annotations);
  const summary = {
    dataset: result.dataset,
    questions: result.questions,
    questionsWithGold: result.questionsWithGold,
    annotations: result.annotations.length,
    added: added.length,
    files: result.files.length,
    skipped: result.skipped,
    annotationsFile: store.file,
  };
  if (values.json) io.out(JSON.stringify(summary));
  else {
    io.out(`${result.dataset}: ${result.questions} question(s), ${result.questionsWithGold} with gold; ${result.files.length} file(s) written under ${out}`);
    io.out(`${result.annotations.length} gold annotation(s), ${added.length} new, in ${store.file}`);
    for (const s of result.skipped.slice(0, 20)) io.err(`  line ${s.line}: ${s.reason}`);
    if (result.skipped.length > 20) io.err(`  … and ${result.skipped.length - 20} more skipped`);
  }
  return 0;
}
