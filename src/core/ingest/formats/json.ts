/**
 * JSON and JSONL. String values with at least `minWords` words become paragraphs of sentence
 * leaves (context: their JSON path); each object that is an array element — and each JSONL line —
 * becomes a `record` holding its text fields, with its short scalar fields summarised in its
 * context. An array element or JSONL line without long text is one `row` leaf (its exact source),
 * cut into its fields when it is larger than an item may be. The hierarchy builder then packs
 * records into items within the item budget, so a file of many records is many items, each with
 * its exact anchors. Anchors point into
 * the file's own text: a leaf's range covers the escaped source characters, so for strings
 * without escapes the slice equals the text, and with escapes `JSON.parse('"' + slice + '"')` does.
 */

import { paragraphNode } from '../draftNodes';
import { JsonNode, JsonSyntaxError, mapJsonString, parseJsonWithPositions } from '../jsonSource';
import type { DraftDocument, DraftNode, ParseWarning } from '../parsedDocument';
import { sizeUnits, wordCount } from '../sentences';
import { TextAnchorer } from '../textAnchors';
import { titleFromPath } from './titles';
import { CanopyError, ErrorCodes } from '../../errors';
import { pushAll } from '../../arrays';

export interface JsonOptions {
  minWords: number;
  /** A record without text fields larger than this (sentences.ts `sizeUnits`) is cut into its fields (default: no cut). */
  maxUnits?: number;
}

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** "key: value; …" of an object's short scalar fields (at most ~160 chars). */
function scalarSummary(node: JsonNode, minWords: number): string {
  if (node.type !== 'object') return '';
  const parts: string[] = [];
  for (const { key, value } of node.entries) {
    if (value.type === 'string' && wordCount(value.value) < minWords && value.value.trim()) parts.push(`${key}: ${value.value.trim()}`);
    else if (value.type === 'number' || value.type === 'boolean') parts.push(`${key}: ${value.raw}`);
  }
  const s = parts.join('; ');
  return s.length <= 160 ? s : `${s.slice(0, 159)}…`;
}

class JsonWalker {
  constructor(
    private readonly text: string,
    private readonly anchorer: TextAnchorer,
    private readonly minWords: number,
    private readonly maxUnits = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * A record without text fields as evidence: one `row` leaf of its exact source, or — when that
   * is larger than an item may be — a `record` of its fields (`"key": value`, or an array's
   * elements), each cut the same way, so no leaf outgrows an item and the reader's cap.
   */
  row(node: JsonNode, from = node.start, context?: string): DraftNode {
    const text = this.text.slice(from, node.end);
    const leaf = (): DraftNode => ({ kind: 'row', modality: 'text', text, anchor: this.anchorer.anchor(from, node.end), children: [] });
    if (sizeUnits(text) <= this.maxUnits || (node.type !== 'object' && node.type !== 'array')) return leaf();
    const children = node.type === 'object' ? node.entries.map((e) => this.row(e.value, e.keyStart)) : node.items.map((item) => this.row(item));
    if (children.length === 0) return leaf();
    return { kind: 'record', modality: 'text', text: '', anchor: this.anchorer.anchor(from, node.end), ...(context ? { context } : {}), children };
  }

  /** Text-bearing draft nodes of a value. */
  nodes(node: JsonNode, path: string, asRecord: boolean): DraftNode[] {
    switch (node.type) {
      case 'string': {
        if (wordCount(node.value) < this.minWords) return [];
        const p = paragraphNode(this.anchorer, mapJsonString(this.text, node));
        if (!p) return [];
        p.context = path;
        return [p];
      }
      case 'array': {
        const out: DraftNode[] = [];
        let rows = 0;
        node.items.forEach((item, i) => {
          const inner = this.nodes(item, childPath(path, i), true);
          if (inner.length > 0 || item.type !== 'object' || item.entries.length === 0) {
            pushAll(out, inner);
            return;
          }
          // An object without text fields is a record all the same: its exact source is one row.
          const row = this.row(item, item.start, childPath(path, i));
          if (row.kind === 'row') row.anchor.row = rows;
          rows++;
          out.push(row);
        });
        return out;
      }
      case 'object': {
        const out: DraftNode[] = [];
        for (const { key, value } of node.entries) pushAll(out, this.nodes(value, childPath(path, key), value.type === 'array'));
        if (!asRecord || out.length === 0) return out;
        return [this.record(node, path, out)];
      }
      default:
        return [];
    }
  }

  record(node: JsonNode, path: string, children: DraftNode[], label?: string): DraftNode {
    const summary = scalarSummary(node, this.minWords);
    const context = [label ?? path, summary].filter((s) => s.length > 0).join(' — ');
    return { kind: 'record', modality: 'text', text: '', anchor: this.anchorer.anchor(node.start, node.end), context, children };
  }
}

function syntaxError(file: string, anchorer: TextAnchorer, err: JsonSyntaxError, what: string): CanopyError {
  const pos = anchorer.lines.position(err.offset);
  return new CanopyError(ErrorCodes.parseFailed, `${file}: invalid ${what} — ${err.message.replace(/ at offset \d+$/, '')} at line ${pos.line}, column ${pos.column + 1}.`, {
    file,
    cause: err,
  });
}

export function parseJson(file: string, text: string, options: JsonOptions): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  let root: JsonNode;
  try {
    root = parseJsonWithPositions(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw syntaxError(file, anchorer, err, 'JSON');
    throw err;
  }
  const children = new JsonWalker(text, anchorer, options.minWords, options.maxUnits).nodes(root, '$', false);
  return { file, format: 'json', title: titleFromPath(file), root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children }, warnings: [] };
}

export function parseJsonLines(file: string, text: string, options: JsonOptions): DraftDocument {
  const anchorer = new TextAnchorer(file, text);
  const walker = new JsonWalker(text, anchorer, options.minWords, options.maxUnits);
  const warnings: ParseWarning[] = [];
  const children: DraftNode[] = [];
  const badLines: number[] = [];
  let lineNo = 0;
  let rowIndex = 0;
  const re = /\r\n|\n|\r|$/g;
  let start = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    lineNo++;
    const end = m.index;
    let s = start;
    let e = end;
    while (s < e && /\s/.test(text[s]!)) s++;
    while (e > s && /\s/.test(text[e - 1]!)) e--;
    if (e > s) {
      try {
        const value = parseJsonWithPositions(text, s, e);
        const inner = walker.nodes(value, '$', false);
        if (inner.length > 0) children.push(walker.record(value, '$', inner, `line ${lineNo}`));
        else {
          const row = walker.row(value, s, `line ${lineNo}`);
          if (row.kind === 'row') row.anchor.row = rowIndex;
          children.push(row);
        }
        rowIndex++;
      } catch (err) {
        if (!(err instanceof JsonSyntaxError)) throw err;
        badLines.push(lineNo);
      }
    }
    if (m[0].length === 0) break;
    start = m.index + m[0].length;
  }
  if (badLines.length > 0) {
    const shown = badLines.slice(0, 5).join(', ') + (badLines.length > 5 ? ', …' : '');
    warnings.push({ file, code: 'jsonlBadLine', message: `${file}: ${badLines.length} line(s) are not valid JSON and were skipped (line ${shown}).` });
  }
  return { file, format: 'jsonl', title: titleFromPath(file), root: { kind: 'document', modality: 'text', text: '', anchor: { file }, children }, warnings };
}
