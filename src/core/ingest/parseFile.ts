/**
 * The one entry point the indexer calls: bytes of one workspace file → a ParsedDocument (items
 * with their region trees, PDF pages, the document graph, per-file warnings). Picks the parser by
 * extension, enforces the size and time limits, and turns every failure into a CanopyError that
 * names the file and the reason, so one bad file never takes the indexer down.
 */

import { CanopyError, ErrorCodes, throwIfCancelled } from '../errors';
import { documentTraits } from '../profiles/profiles';
import type { Item, RegionNode } from '../../contracts/region';
import { decodeText } from './decodeText';
import { parseDelimited } from './formats/delimited';
import { parseHtml } from './formats/html';
import { parseImageFile } from './formats/image';
import { parseJson, parseJsonLines } from './formats/json';
import { parseMarkdown } from './formats/markdown';
import { parseNotebook } from './formats/notebook';
import { parsePlainText } from './formats/plainText';
import { parseSubtitles } from './formats/subtitles';
import { titleFromPath } from './formats/titles';
import { buildDocumentGraph, type GraphOptions } from './graph';
import { buildItemsCapped } from './hierarchy';
import { formatForPath, type DocumentFormat } from './documentFormat';
import type { DraftDocument, ParseOptions, ParsedDocument, ParseStages, ParseWarning } from './parsedDocument';
import { threadCpuMs } from '../threadCpu';
import { parsePdf } from './pdf/pdfParser';
import { annotateTables } from './tableContext';

export const defaultParseOptions = Object.freeze({
  branchingFactor: 2,
  itemMaxWords: 1000,
  maxBytes: 50 * 1024 * 1024,
  timeLimitMs: 120_000,
  /** Regions one file may produce (`canopy.maxNodesPerFile`): ~10 times a 150-page annual report. */
  maxNodes: 100_000,
});

/** The document's opening text in reading order: its first leaves, up to a few thousand characters (profiles/profiles.ts reads them). */
function openingText(items: readonly Item[], max = 6000): string {
  const parts: string[] = [];
  let length = 0;
  const walk = (n: RegionNode): boolean => {
    if (n.children.length === 0) {
      parts.push(n.header ? `${n.header}\n${n.text}` : n.text);
      length += n.text.length + 1;
      return length < max;
    }
    for (const c of n.children) if (!walk(c)) return false;
    return true;
  };
  for (const it of items) if (!walk(it.root)) break;
  return parts.join('\n');
}

function countNodes(items: Item[]): { nodes: number; leaves: number } {
  let nodes = 0;
  let leaves = 0;
  const walk = (n: RegionNode): void => {
    nodes++;
    if (n.children.length === 0) leaves++;
    for (const c of n.children) walk(c);
  };
  for (const it of items) walk(it.root);
  return { nodes, leaves };
}

async function draftFor(file: string, format: DocumentFormat, bytes: Uint8Array, options: ParseOptions, deadline: number, stages: ParseStages): Promise<DraftDocument> {
  if (format === 'pdf') {
    const timeLimitMs = options.timeLimitMs ?? defaultParseOptions.timeLimitMs;
    const onProgress = options.onProgress;
    return parsePdf(file, bytes, {
      deadline,
      timeLimitMs,
      signal: options.signal,
      standardFontDataUrl: options.pdfStandardFontDataUrl,
      stages,
      ...(onProgress ? { onPage: (done: number, total: number) => onProgress({ step: 'pages', done, total }) } : {}),
    });
  }
  if (format === 'image') return parseImageFile(file);
  const decoded = decodeText(file, bytes, options.invalidUtf8 ?? 'replace');
  const text = decoded.text;
  let draft: DraftDocument;
  switch (format) {
    case 'markdown':
      draft = parseMarkdown(file, text);
      break;
    case 'text':
      draft = parsePlainText(file, text);
      break;
    case 'csv':
    case 'tsv':
      draft = parseDelimited(file, text, format);
      break;
    case 'html':
      draft = parseHtml(file, text);
      break;
    case 'notebook':
      draft = parseNotebook(file, text);
      break;
    case 'json':
      draft = parseJson(file, text, { minWords: options.jsonMinWords ?? 4, maxUnits: options.itemMaxWords ?? defaultParseOptions.itemMaxWords });
      break;
    case 'jsonl':
      draft = parseJsonLines(file, text, { minWords: options.jsonMinWords ?? 4, maxUnits: options.itemMaxWords ?? defaultParseOptions.itemMaxWords });
      break;
    case 'subtitles':
      draft = parseSubtitles(file, text);
      break;
  }
  draft.warnings.unshift(...decoded.warnings);
  return draft;
}

/**
 * Parses one file. `relPath` is workspace-relative (forward slashes; backslashes are converted).
 * Throws CanopyError (unsupported extension, too large, binary, encrypted/corrupt PDF, invalid
 * encoding when rejected, malformed JSON/notebook) or CancelledError; never anything else.
 */
export async function parseFile(relPath: string, bytes: Uint8Array, options: ParseOptions = {}): Promise<ParsedDocument> {
  const file = relPath.replace(/\\/g, '/');
  const started = Date.now();
  const cpu0 = threadCpuMs();
  // Where the time goes (core/index/indexTimings.ts); a PDF's extraction and layout are split in parsePdf.
  const stages: ParseStages = {};
  let mark = performance.now();
  const lap = (stage: Exclude<keyof ParseStages, 'cpu'>): void => {
    const now = performance.now();
    stages[stage] = (stages[stage] ?? 0) + now - mark;
    mark = now;
  };
  const format = formatForPath(file);
  if (format === undefined) {
    const base = file.slice(file.lastIndexOf('/') + 1);
    const dot = base.lastIndexOf('.');
    const ext = dot > 0 ? base.slice(dot) : '(none)';
    throw new CanopyError(ErrorCodes.unsupportedFormat, `${file}: unsupported file type ${ext}; not indexed.`, { file });
  }
  const maxBytes = options.maxBytes ?? defaultParseOptions.maxBytes;
  if (bytes.length > maxBytes) {
    throw new CanopyError(
      ErrorCodes.fileTooLarge,
      `${file}: ${(bytes.length / 1048576).toFixed(1)} MB is over the ${(maxBytes / 1048576).toFixed(1)} MB limit; not indexed.`,
      { file },
    );
  }
  throwIfCancelled(options.signal);
  const timeLimitMs = options.timeLimitMs ?? defaultParseOptions.timeLimitMs;
  const deadline = started + timeLimitMs;
  // Past the deadline, the next stage of a non-PDF file is not started: it fails with E_TIME_LIMIT. (PDF pages
  // are also bounded while they are read, see pdfRuns.ts; the text parsers are synchronous and
  // linear in the input, so the size limit bounds them.)
  const checkDeadline = (stage: string) => {
    if (Date.now() <= deadline) return;
    throw new CanopyError(
      ErrorCodes.timeLimit,
      `${file}: ${stage} took ${((Date.now() - started) / 1000).toFixed(1)} s, past the per-file time limit of ${(timeLimitMs / 1000).toFixed(timeLimitMs < 10_000 ? 1 : 0)} s; not indexed.`,
      { file },
    );
  };
  try {
    const empty = format !== 'image' && (bytes.length === 0 || (format !== 'pdf' && isBlankText(bytes)));
    const draft: DraftDocument = empty
      ? {
          file,
          format,
          title: titleFromPath(file),
          root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children: [] },
          warnings: [{ file, code: 'empty', message: `${file}: the file is empty; nothing to index.` }],
        }
      : await draftFor(file, format, bytes, options, deadline, stages);
    if (format !== 'pdf') lap('layout');
    else mark = performance.now(); // parsePdf timed its own stages
    throwIfCancelled(options.signal);
    // A PDF is bounded page by page while it is read and keeps the pages read before the limit
    // (with a 'timeLimit' warning); its layout is linear in what was read, so it is not refused here.
    if (format !== 'pdf') checkDeadline(`parsing (${format})`);
    // Every table's caption, units and grouping label rows, from the structure just parsed.
    annotateTables(draft.root);
    lap('tableContext');
    const maxNodes = options.maxNodes ?? defaultParseOptions.maxNodes;
    const { items, cut } = buildItemsCapped(draft, {
      branchingFactor: options.branchingFactor ?? defaultParseOptions.branchingFactor,
      itemMaxWords: options.itemMaxWords ?? defaultParseOptions.itemMaxWords,
      maxNodes,
    });
    const warnings: ParseWarning[] = draft.warnings;
    if (cut) {
      const cap = cut.cap.toLocaleString('en-US');
      if (cut.keptItems === 0) {
        throw new CanopyError(
          ErrorCodes.fileTooLarge,
          `${file}: its first part alone has more than ${cap} regions, the per-file cap (canopy.maxNodesPerFile); not indexed.`,
          { file },
        );
      }
      const last = items[items.length - 1]!.root.anchor;
      const upTo = last.page !== undefined ? ` (up to p. ${(last.pageEnd ?? last.page) + 1})` : last.endLine !== undefined ? ` (up to line ${last.endLine})` : '';
      warnings.push({
        file,
        code: 'nodeCap',
        message: `${file}: more than ${cap} regions, the per-file cap (canopy.maxNodesPerFile); only its first ${cut.keptItems} of ${cut.totalItems} parts${upTo} are indexed (${cut.keptNodes.toLocaleString('en-US')} regions).`,
      });
    }
    // The document's language and the profiles it fits, read once from its opening text (profiles/profiles.ts).
    if (items.length > 0) {
      const traits = documentTraits(openingText(items));
      for (const item of items) item.traits = traits;
    }
    lap('hierarchy');
    if (items.length === 0 && !warnings.some((w) => w.code === 'empty' || w.code === 'noTextLayer')) {
      warnings.push({ file, code: 'empty', message: `${file}: no text found; nothing to index.` });
    }
    const doc: ParsedDocument = {
      file,
      format: draft.format,
      title: draft.title,
      items,
      warnings,
      stats: { bytes: bytes.length, parseMs: 0, ...countNodes(items) },
    };
    if (draft.pages) doc.pages = draft.pages;
    if (options.graph !== false) {
      if (format !== 'pdf') checkDeadline('building the region tree');
      const input = { file, title: draft.title, items, ...(draft.pages ? { pages: draft.pages } : {}) };
      const graphOptions: GraphOptions = {};
      if (options.semanticNeighbours !== undefined) graphOptions.semanticNeighbours = options.semanticNeighbours;
      if (options.signal) graphOptions.signal = options.signal;
      const onProgress = options.onProgress;
      if (onProgress) graphOptions.onProgress = (done, total) => onProgress({ step: 'encoding', done, total });
      graphOptions.stages = stages;
      mark = performance.now();
      try {
        doc.graph = await buildDocumentGraph(input, options.embed ? { ...graphOptions, embed: options.embed } : graphOptions);
      } catch (err) {
        if (!options.embed || (err instanceof Error && err.name === 'CancelledError')) throw err;
        // A failing encoder costs the semantic edges, not the file.
        const reason = err instanceof Error ? err.message : String(err);
        warnings.push({ file, code: 'noSemanticEdges', message: `${file}: semantic graph edges left out — the encoder failed (${reason}).` });
        doc.graph = await buildDocumentGraph(input, graphOptions);
      }
    }
    doc.stats.parseMs = Date.now() - started;
    const cpu1 = threadCpuMs();
    if (cpu0 !== undefined && cpu1 !== undefined) stages.cpu = cpu1 - cpu0;
    doc.stats.stages = stages;
    return doc;
  } catch (err) {
    if (err instanceof CanopyError) throw err;
    if (err instanceof Error && err.name === 'CancelledError') throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new CanopyError(ErrorCodes.parseFailed, `${file}: could not be parsed as ${format} (${reason}).`, { file, cause: err });
  }
}

/** True when the bytes are only whitespace (and BOMs) — such a file has nothing to index. */
function isBlankText(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x0b || b === 0x0c) continue;
    if (i === 0 && b === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
      i += 2;
      continue;
    }
    return false;
  }
  return true;
}
