/**
 * Region trees for evaluation items, built with the project's own hierarchy code (the same
 * `buildItems` every parser feeds): a paragraph becomes paragraph → (B-ary groups) → sentences,
 * using the dataset's own sentence split where it has one so gold sentence ids map exactly; a
 * table becomes table → (groups) → rows with the header travelling with every row; a file (PDF,
 * an annotated workspace file) is parsed by `parseFile` itself. Each built source records which
 * leaf holds which dataset sentence / row, for `gold.ts`.
 */
import { promises as fs } from 'node:fs';
import { leavesOf } from '../core/compress/baselines';
import { buildItems } from '../core/ingest/hierarchy';
import type { DraftNode } from '../core/ingest/parsedDocument';
import { parseFile } from '../core/ingest/parseFile';
import { sentenceSpans } from '../core/ingest/sentences';
import { TextAnchorer } from '../core/ingest/textAnchors';
import type { Item } from '../contracts/region';
import type { ContextSource, PoolDoc } from './datasets/types';

/** Items never split by length here: a dataset paragraph or table is one item (PDFs are cut by parseFile). */
const NO_SPLIT = Number.MAX_SAFE_INTEGER;

export interface BuiltSource {
  key: string;
  items: Item[];
  /** Dataset sentence index (sentences/spans sources) or data row index (tables) → leaf id. */
  leafByIndex: Map<number, string>;
  /** For text sources: the source text the leaves' char anchors point into. */
  text?: string;
}

function trimmed(text: string, s: number, e: number): [number, number] | undefined {
  while (s < e && /\s/.test(text[s]!)) s++;
  while (e > s && /\s/.test(text[e - 1]!)) e--;
  return e > s ? [s, e] : undefined;
}

/** Sentence leaves over `text` from spans; returns the leaves and, per span index, its leaf position. */
function sentenceDraft(file: string, text: string, spans: Array<[number, number]>): { leaves: DraftNode[]; positions: Map<number, number> } {
  const anchorer = new TextAnchorer(file, text);
  const leaves: DraftNode[] = [];
  const positions = new Map<number, number>();
  spans.forEach(([s0, e0], i) => {
    const t = trimmed(text, s0, e0);
    if (!t) return;
    positions.set(i, leaves.length);
    leaves.push({ kind: 'sentence', modality: 'text', text: text.slice(t[0], t[1]), anchor: anchorer.anchor(t[0], t[1]), children: [] });
  });
  return { leaves, positions };
}

function paragraphItem(file: string, title: string, text: string, spans: Array<[number, number]>, branchingFactor: number): { item: Item | undefined; leafByIndex: Map<number, string> } {
  const { leaves, positions } = sentenceDraft(file, text, spans);
  const leafByIndex = new Map<number, string>();
  if (leaves.length === 0) return { item: undefined, leafByIndex };
  const root: DraftNode = { kind: 'paragraph', modality: 'text', text: '', anchor: { file }, children: leaves };
  const [item] = buildItems({ file, format: 'text', title, root, warnings: [] }, { branchingFactor, itemMaxWords: NO_SPLIT });
  if (!item) return { item: undefined, leafByIndex };
  const ids = leavesOf(item.root).map((l) => l.id);
  for (const [i, pos] of positions) leafByIndex.set(i, ids[pos]!);
  return { item, leafByIndex };
}

/** A paragraph given as a list of sentences (HotpotQA's split: `sentences.join('')` is the paragraph). */
export function sentencesItem(file: string, title: string, sentences: string[], branchingFactor: number): { item: Item | undefined; leafByIndex: Map<number, string>; text: string } {
  let text = '';
  const spans: Array<[number, number]> = [];
  for (const s of sentences) {
    spans.push([text.length, text.length + s.length]);
    text += s;
  }
  return { ...paragraphItem(file, title, text, spans, branchingFactor), text };
}

/** A paragraph of text, cut at the given spans or by Canopy's sentence splitter. */
export function textItem(file: string, title: string, text: string, spans: Array<[number, number]> | undefined, branchingFactor: number) {
  return paragraphItem(file, title, text, spans ?? sentenceSpans(text), branchingFactor);
}

/** A table: header rows travel with every data row (`header`), rows are the leaves. */
export function tableItem(file: string, title: string, rows: string[][], headerRows: number, branchingFactor: number): { item: Item | undefined; leafByIndex: Map<number, string> } {
  const header = rows
    .slice(0, headerRows)
    .map((r) => r.join(' | '))
    .join('\n');
  const data = rows.slice(headerRows);
  const leafByIndex = new Map<number, string>();
  const leaves: DraftNode[] = [];
  const positions = new Map<number, number>();
  data.forEach((cells, i) => {
    const text = cells.join(' | ');
    if (text.replace(/[|\s]/g, '') === '') return; // an empty row carries nothing
    positions.set(i, leaves.length);
    const leaf: DraftNode = { kind: 'row', modality: 'table', text, anchor: { file, row: i }, cells, children: [] };
    if (header) leaf.header = header;
    leaves.push(leaf);
  });
  if (leaves.length === 0) return { item: undefined, leafByIndex };
  const root: DraftNode = { kind: 'table', modality: 'table', text: '', anchor: { file }, children: leaves, title };
  if (header) root.header = header;
  const [item] = buildItems({ file, format: 'csv', title, root, warnings: [] }, { branchingFactor, itemMaxWords: NO_SPLIT });
  if (!item) return { item: undefined, leafByIndex };
  const ids = leavesOf(item.root).map((l) => l.id);
  for (const [i, pos] of positions) leafByIndex.set(i, ids[pos]!);
  return { item, leafByIndex };
}

/** Parsed files, shared between questions on the same file and between branching factors' runs. */
export class ParsedFileCache {
  private readonly parsed = new Map<string, Promise<Item[]>>();

  get(path: string, relPath: string, branchingFactor: number): Promise<Item[]> {
    const key = `${branchingFactor}\0${path}`;
    let p = this.parsed.get(key);
    if (!p) {
      p = fs.readFile(path).then(async (bytes) => (await parseFile(relPath, bytes, { branchingFactor, graph: false })).items);
      this.parsed.set(key, p);
      // Keep a handful of large documents, not every one ever read.
      if (this.parsed.size > 8) this.parsed.delete(this.parsed.keys().next().value!);
    }
    return p;
  }
}

/** The items of one question's given context. `prefix` makes ids unique per question. */
export async function buildContext(context: ContextSource[], prefix: string, branchingFactor: number, files: ParsedFileCache): Promise<BuiltSource[]> {
  const out: BuiltSource[] = [];
  for (const c of context) {
    const file = `${prefix}/${c.key}`;
    switch (c.kind) {
      case 'sentences': {
        const r = sentencesItem(file, c.title, c.sentences, branchingFactor);
        out.push({ key: c.key, items: r.item ? [r.item] : [], leafByIndex: r.leafByIndex, text: r.text });
        break;
      }
      case 'text': {
        const r = textItem(file, c.title, c.text, c.spans, branchingFactor);
        out.push({ key: c.key, items: r.item ? [r.item] : [], leafByIndex: r.leafByIndex, text: c.text });
        break;
      }
      case 'table': {
        const r = tableItem(file, c.title, c.rows, c.headerRows, branchingFactor);
        out.push({ key: c.key, items: r.item ? [r.item] : [], leafByIndex: r.leafByIndex });
        break;
      }
      case 'file':
        out.push({ key: c.key, items: await files.get(c.path, c.relPath, branchingFactor), leafByIndex: new Map() });
        break;
      default: {
        const never: never = c;
        throw new Error(`unknown context source ${JSON.stringify(never)}`);
      }
    }
  }
  return out;
}

/** One pool document as one item (paragraph → groups → sentences), for the open-pool index. */
export function poolDocItem(file: string, doc: PoolDoc, branchingFactor: number): { item: Item | undefined; leafByIndex: Map<number, string> } {
  return textItem(file, doc.title, doc.text, doc.spans, branchingFactor);
}
