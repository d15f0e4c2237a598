/**
 * The one table of the file formats Canopy reads, by extension. Discovery (discover.ts) uses it
 * to decide which files of a folder to index and parseFile.ts to pick the parser, so a format the
 * parser reads is always found by the walk (two tables once drifted apart and .log, .mdown, .mkd,
 * .xhtml and .bmp files were parsed by nothing because nothing found them).
 */

export type DocumentFormat = 'markdown' | 'text' | 'pdf' | 'csv' | 'tsv' | 'html' | 'notebook' | 'json' | 'jsonl' | 'subtitles' | 'image';

/** Extension (lower case, no dot) → format. */
const formatsByExtension: Readonly<Record<string, DocumentFormat>> = Object.freeze({
  md: 'markdown',
  markdown: 'markdown',
  mdown: 'markdown',
  mkd: 'markdown',
  mdx: 'markdown',
  txt: 'text',
  text: 'text',
  log: 'text',
  rst: 'text',
  pdf: 'pdf',
  csv: 'csv',
  tsv: 'tsv',
  tab: 'tsv',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  ipynb: 'notebook',
  json: 'json',
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  vtt: 'subtitles',
  srt: 'subtitles',
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  gif: 'image',
  webp: 'image',
  svg: 'image',
  bmp: 'image',
});

/** Extensions (lower case, no dot) Canopy reads. */
export const supportedExtensions: readonly string[] = Object.freeze(Object.keys(formatsByExtension));

/**
 * The format a file is read as, or undefined when Canopy does not read it. The extension is what
 * follows the last dot of the file name, as `path.extname` has it: a name that only starts with
 * a dot (`.md`, `.gitignore`) has none.
 */
export function formatForPath(relPath: string): DocumentFormat | undefined {
  const base = relPath.slice(Math.max(relPath.lastIndexOf('/'), relPath.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const ext = base.slice(dot + 1).toLowerCase();
  return Object.prototype.hasOwnProperty.call(formatsByExtension, ext) ? formatsByExtension[ext] : undefined;
}
