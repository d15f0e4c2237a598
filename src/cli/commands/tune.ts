/**
 * `canopy tune`: fits the retrieval fusion of the encoder in use (normalised BM25 + w × cosine,
 * or the design's RRF) on the workspace's own judgements and writes it as the index's retrieval
 * profile, which `canopy ask` and the extension then use (setting `canopy.retrieval.fusion` =
 * `profile`, the default). See src/core/app/tuneRetrieval.ts.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { annotationsPath, AnnotationStore } from '../../core/annotate/store';
import { questionsFromAnnotations, tuneRetrieval, type TuneQuestion } from '../../core/app/tuneRetrieval';
import { resolveSettings } from '../../core/config/settings';
import { CanopyError, ErrorCodes } from '../../core/errors';
import { type CliIO, UsageError } from '../io';
import { cliServices } from '../runtime';

export const tuneHelp = `Usage: canopy tune [--annotations <file> | --qrels <file>] [options]

Fit how retrieval fuses the dense and BM25 rankings for the encoder in use, from this workspace's
own judgements, and write it as the index's retrieval profile (<index>/retrieval-profile.json).
Every candidate (BM25 + w × cosine for w on a grid, and equal-weight RRF) is scored by mean
nDCG@10; the best one is kept. Without a tuned profile the built-in encoder's profile is used.

Options:
  --annotations <file>   gold annotations JSONL (default <dir>/.canopy/annotations.jsonl): an
                         indexed item is relevant to a question when it overlaps a gold span
  --qrels <file>         instead: JSONL lines {"question": "...", "files": ["path", ...]} or
                         {"question": "...", "files": [{"file": "path", "grade": 2}, ...]};
                         every item of a listed file is relevant
  --dir <dir>            the indexed workspace (default .)
  --index <dir>          the index folder (default <dir>/.canopy/index)
  --holdout <share>      hold back this share of the questions (seeded): fit on the rest and
                         report the fusion in use before and the fitted one on the held-back
                         questions (default 0: fit on all)
  --seed <n>             seed of the holdout split (default 1)
  --dry-run              report the fit, write nothing
  --json                 print the result as JSON`;

function qrelsFile(file: string): TuneQuestion[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CanopyError(ErrorCodes.badInput, `${file}: cannot read the qrels (${(err as Error).message})`, { file });
  }
  const out: TuneQuestion[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${file}:${i + 1}`;
    let raw: { question?: unknown; files?: unknown };
    try {
      raw = JSON.parse(line) as typeof raw;
    } catch (err) {
      throw new CanopyError(ErrorCodes.badInput, `${where}: not JSON (${(err as Error).message})`, { file });
    }
    if (typeof raw.question !== 'string' || !raw.question.trim() || !Array.isArray(raw.files)) throw new CanopyError(ErrorCodes.badInput, `${where}: needs "question" (text) and "files" (a list)`, { file });
    const files = raw.files.map((f: unknown) => {
      if (typeof f === 'string') return { file: f.replace(/\\/g, '/'), grade: 1 };
      const o = f as { file?: unknown; grade?: unknown } | null;
      if (o && typeof o.file === 'string' && (o.grade === undefined || (typeof o.grade === 'number' && o.grade >= 0))) return { file: o.file.replace(/\\/g, '/'), grade: (o.grade as number | undefined) ?? 1 };
      throw new CanopyError(ErrorCodes.badInput, `${where}: each file is a path or {"file": path, "grade": n ≥ 0}`, { file });
    });
    out.push({ question: raw.question, files });
  });
  return out;
}

export async function runTune(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      annotations: { type: 'string' },
      qrels: { type: 'string' },
      dir: { type: 'string' },
      index: { type: 'string' },
      'dry-run': { type: 'boolean' },
      holdout: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (values.annotations && values.qrels) throw new UsageError('give --annotations or --qrels, not both');
  const holdout = values.holdout === undefined ? 0 : Number(values.holdout);
  if (!(holdout >= 0 && holdout < 1)) throw new UsageError(`--holdout must be a share from 0 to below 1, not "${values.holdout}"`);
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new UsageError(`--seed must be an integer, not "${values.seed}"`);
  const services = cliServices(values.dir ?? '.', values.index, io);
  try {
    let questions: TuneQuestion[];
    let source: string;
    if (values.qrels) {
      source = path.resolve(io.cwd, values.qrels);
      questions = qrelsFile(source);
    } else {
      source = values.annotations ? path.resolve(io.cwd, values.annotations) : annotationsPath(services.root);
      const { annotations, corrupt } = await new AnnotationStore(source).read();
      for (const c of corrupt) io.err(`warn: ${c.file}:${c.line}: ${c.reason} (line skipped)`);
      questions = questionsFromAnnotations(annotations);
    }
    const corpus = await services.index.corpus(resolveSettings({}));
    const { encoder } = await services.embeddings.load();
    const settings = resolveSettings({});
    const current = await services.ask.fusion(settings, encoder.id);
    const result = await tuneRetrieval({ corpus, indexDir: services.indexDir, encoderId: encoder.id, embedQuery: services.embeddings.embedQuery, questions, source, dryRun: values['dry-run'] === true, holdout, seed, current });
    if (values.json) {
      io.out(JSON.stringify(result, null, 2));
      return 0;
    }
    const f = result.profile.fusion;
    io.out(`questions: ${result.fit.questions} judged${result.unjudged.length ? `, ${result.unjudged.length} left out (nothing they judge relevant is indexed)` : ''}`);
    io.out(`mean nDCG@10: BM25 ${result.fit.figures.bm25!.toFixed(3)}, dense ${result.fit.figures.dense!.toFixed(3)}, equal-weight RRF ${result.fit.figures.rrf!.toFixed(3)}`);
    io.out(`best: ${f.kind === 'linear' ? `${f.flat ? `${+(1 - f.flat).toFixed(3)} × BM25 + ${f.flat} × flat BM25` : 'BM25'} + ${f.dense} × cosine (top ${f.depth} of each)` : `RRF k=${f.rrfK}`} — nDCG@10 ${result.fit.ndcg.toFixed(3)}`);
    if (result.heldBack) {
      const h = result.heldBack;
      io.out(`held back ${h.questions} question(s): nDCG@10 ${h.before.toFixed(3)} with the fusion in use → ${h.after.toFixed(3)} fitted`);
    }
    io.out(result.file ? `wrote ${result.file} (used by canopy ask and the extension for encoder ${result.profile.encoder})` : 'dry run: nothing written');
    return 0;
  } finally {
    await services.close();
  }
}
