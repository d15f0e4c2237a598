/**
 * The per-stage breakdown of one index run (issue 34): where the time went in total and per file
 * (core/index/indexTimings.ts names the stages), how busy each thread was, and — measured in the
 * same run — the two references the issue's targets are stated against: pdf.js extracting every
 * page of the folder's PDFs on its own, and the encoder alone encoding every text the index
 * encoded (the distinct leaves and tables, as the embedding cache sends them).
 */
import { readFileSync } from 'node:fs';
import type { Encoder, EncoderStats } from '../../core/encode/encoder';
import { encodedNodes, encodedText } from '../../core/encode/nodeVectors';
import { normalizeText } from '../../core/encode/encoder';
import type { FileTimings, IndexTimings, StageName } from '../../core/index/indexTimings';
import { paths, readCurrent, readManifest } from '../../core/index/layout';
import type { ParsedDocument } from '../../core/ingest/parsedDocument';
import { readPdfRuns } from '../../core/ingest/pdf/pdfRuns';
import { threadCpuMs } from '../../core/threadCpu';

/** The stages in the order the tables show them. */
export const STAGE_ORDER: readonly StageName[] = ['read', 'extract', 'layout', 'tableContext', 'hierarchy', 'graph', 'semantic', 'encodeWait', 'transfer', 'tokenize', 'encode', 'vectors', 'bm25', 'write'];

export interface ThreadBusy {
  /** CPU time of the main thread (the encoder and the indexer), ms. */
  mainCpuMs?: number;
  /** CPU time of the parse workers over their parses, ms (the sum over files). */
  workerCpuMs?: number;
  /** CPU time of the whole process, ms (all threads: main, workers, GC, I/O). */
  processCpuMs: number;
}

export interface StageReport {
  wallMs: number;
  pages: number;
  /** Milliseconds per stage, in total (a worker's stages and the main thread's overlap in a pipeline). */
  totals: Partial<Record<StageName, number>>;
  files: FileTimings[];
  threads: ThreadBusy;
  encoder?: EncoderStats;
}

/** A snapshot to measure a run from. */
export interface RunStart {
  wall: number;
  mainCpu: number | undefined;
  process: NodeJS.CpuUsage;
  encoder: EncoderStats | undefined;
}

export function startRun(encoder?: Encoder): RunStart {
  return { wall: performance.now(), mainCpu: threadCpuMs(), process: process.cpuUsage(), encoder: encoder?.stats ? { ...encoder.stats } : undefined };
}

/** The report of a run measured from `start`, with the encoder's tokenising and inference added as stages. */
export function finishRun(start: RunStart, timings: IndexTimings, encoder?: Encoder): StageReport {
  const wallMs = performance.now() - start.wall;
  const cpu = process.cpuUsage(start.process);
  const main = threadCpuMs();
  const files = [...timings.files.values()];
  const workerCpu = files.reduce((a, f) => a + (f.workerCpu ?? 0), 0);
  const totals = { ...timings.totals };
  let encoderDelta: EncoderStats | undefined;
  if (encoder?.stats && start.encoder) {
    const s = encoder.stats;
    const b = start.encoder;
    encoderDelta = { calls: s.calls - b.calls, texts: s.texts - b.texts, windows: s.windows - b.windows, tokenizeMs: s.tokenizeMs - b.tokenizeMs, inferenceMs: s.inferenceMs - b.inferenceMs };
    totals.tokenize = encoderDelta.tokenizeMs;
    totals.encode = encoderDelta.tokenizeMs + encoderDelta.inferenceMs;
  }
  return {
    wallMs,
    pages: files.reduce((a, f) => a + (f.pages ?? 0), 0),
    totals,
    files,
    threads: {
      ...(main !== undefined && start.mainCpu !== undefined ? { mainCpuMs: main - start.mainCpu } : {}),
      ...(files.some((f) => f.workerCpu !== undefined) ? { workerCpuMs: workerCpu } : {}),
      processCpuMs: (cpu.user + cpu.system) / 1000,
    },
    ...(encoderDelta ? { encoder: encoderDelta } : {}),
  };
}

export interface ExtractionReference {
  files: number;
  pages: number;
  ms: number;
}

/** pdf.js alone: every page's text content of the PDFs (in this thread, one after another), as the parser reads them. */
export async function extractionAlone(pdfs: readonly string[]): Promise<ExtractionReference> {
  let pages = 0;
  const t = performance.now();
  for (const file of pdfs) {
    // A PDF the index cannot read either (encrypted, corrupt) costs what trying costs.
    const read = await readPdfRuns(file, readFileSync(file)).catch(() => undefined);
    pages += read?.pages.length ?? 0;
  }
  return { files: pdfs.length, pages, ms: performance.now() - t };
}

/** The distinct texts (by the cache's normalised form) the live generation's documents give the encoder, in index order. */
export async function encodedTextsOf(indexDir: string): Promise<string[]> {
  const generation = await readCurrent(indexDir);
  if (generation === undefined) return [];
  const manifest = await readManifest(indexDir, generation);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const entry of Object.values(manifest.files)) {
    let doc: ParsedDocument;
    try {
      doc = JSON.parse(readFileSync(paths(indexDir).doc(entry.doc), 'utf8')) as ParsedDocument;
    } catch {
      continue;
    }
    for (const item of doc.items) {
      for (const n of encodedNodes(item.root)) {
        const text = encodedText(n);
        const key = normalizeText(text);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(text);
      }
    }
  }
  return out;
}

export interface EncoderReference {
  texts: number;
  ms: number;
  tokenizeMs: number;
  inferenceMs: number;
}

/** The encoder alone on `texts`, in calls of `perCall` (the graph's calls are 256), timed. */
export async function encoderAlone(encoder: Encoder, texts: readonly string[], perCall = 256): Promise<EncoderReference> {
  const before = encoder.stats ? { ...encoder.stats } : undefined;
  const t = performance.now();
  for (let i = 0; i < texts.length; i += perCall) await encoder.encode(texts.slice(i, i + perCall));
  const ms = performance.now() - t;
  const s = encoder.stats;
  return { texts: texts.length, ms, tokenizeMs: s && before ? s.tokenizeMs - before.tokenizeMs : 0, inferenceMs: s && before ? s.inferenceMs - before.inferenceMs : 0 };
}

const f0 = (ms: number | undefined) => (ms === undefined ? '—' : (ms / 1000).toFixed(1));
const ms0 = (ms: number | undefined) => (ms === undefined ? '—' : Math.round(ms).toLocaleString('en-US'));

/** The report as Markdown: the stage table in total (seconds, share of the wall time) and the slowest files. */
export function formatStageReport(r: StageReport, refs: { extraction?: ExtractionReference; encoder?: EncoderReference } = {}, topFiles = 10): string {
  const lines: string[] = [];
  const wall = r.wallMs;
  lines.push(`wall ${f0(wall)} s${r.pages ? `, ${r.pages} pages (${(r.pages / (wall / 1000)).toFixed(1)} pages/s)` : ''}, ${r.files.length} files parsed`);
  const t = r.threads;
  lines.push(`CPU: main thread ${f0(t.mainCpuMs)} s, parse workers ${f0(t.workerCpuMs)} s, process ${f0(t.processCpuMs)} s`);
  if (refs.extraction) lines.push(`reference, same run: pdf.js alone ${f0(refs.extraction.ms)} s for ${refs.extraction.pages} pages`);
  if (refs.encoder) lines.push(`reference, same run: encoder alone ${f0(refs.encoder.ms)} s for ${refs.encoder.texts} texts (tokenising ${f0(refs.encoder.tokenizeMs)} s)`);
  const ref = Math.max(refs.extraction?.ms ?? 0, refs.encoder?.ms ?? 0);
  if (ref > 0) lines.push(`wall / max(references) = ${(wall / ref).toFixed(2)}`);
  lines.push('', '| stage | s | share of wall |', '|---|---:|---:|');
  for (const s of STAGE_ORDER) {
    const ms = r.totals[s];
    if (ms === undefined) continue;
    lines.push(`| ${s} | ${f0(ms)} | ${((100 * ms) / wall).toFixed(0)}% |`);
  }
  const files = [...r.files].sort((a, b) => b.wall - a.wall).slice(0, topFiles);
  if (files.length > 0) {
    const shown = STAGE_ORDER.filter((s) => files.some((f) => f.stages[s] !== undefined));
    lines.push('', `slowest ${files.length} files, ms:`, '', `| file | pages | regions | texts | ${shown.join(' | ')} | worker CPU | wall |`, `|---|---:|---:|---:|${shown.map(() => '---:|').join('')}---:|---:|`);
    for (const f of files) lines.push(`| ${f.file} | ${f.pages ?? ''} | ${f.regions} | ${f.encodedTexts} | ${shown.map((s) => ms0(f.stages[s])).join(' | ')} | ${ms0(f.workerCpu)} | ${ms0(f.wall)} |`);
  }
  return lines.join('\n');
}
