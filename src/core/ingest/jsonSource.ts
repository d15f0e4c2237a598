/**
 * A JSON reader that keeps source positions: every value knows its [start, end) in the text, and
 * every string can be decoded into a MappedText whose characters map back to the exact source
 * characters (an escape such as `\n` or `\u00e9` maps to its whole escape sequence). JSON.parse
 * loses positions, and notebooks and JSON fields need anchors into the file's own text.
 */

import { MappedText, MappedTextBuilder } from './textAnchors';

export type JsonNode =
  | { type: 'object'; start: number; end: number; entries: Array<{ key: string; value: JsonNode }> }
  | { type: 'array'; start: number; end: number; items: JsonNode[] }
  | { type: 'string'; start: number; end: number; value: string; escaped: boolean }
  | { type: 'number' | 'boolean' | 'null'; start: number; end: number; raw: string };

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

const maxDepth = 512;

/** Parses one JSON value spanning text[from, to) (whitespace around it allowed). */
export function parseJsonWithPositions(text: string, from = 0, to = text.length): JsonNode {
  let i = from;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at offset ${i}`, i);
  };
  const ws = (): void => {
    while (i < to) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const str = (): JsonNode => {
    const start = i;
    i++; // opening quote
    let value = '';
    let escaped = false;
    let runStart = i;
    while (true) {
      if (i >= to) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 34) {
        value += text.slice(runStart, i);
        i++;
        return { type: 'string', start, end: i, value, escaped };
      }
      if (c === 92) {
        value += text.slice(runStart, i);
        escaped = true;
        const e = text[i + 1];
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
          value += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
          const d = e === undefined ? undefined : map[e];
          if (d === undefined) fail('bad escape');
          value += d;
          i += 2;
        }
        runStart = i;
        continue;
      }
      if (c < 32) fail('control character in string');
      i++;
    }
  };
  const val = (depth: number): JsonNode => {
    if (depth > maxDepth) fail('nesting too deep');
    ws();
    if (i >= to) fail('unexpected end');
    const c = text[i];
    const start = i;
    if (c === '{') {
      i++;
      const entries: Array<{ key: string; value: JsonNode }> = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { type: 'object', start, end: i, entries };
      }
      while (true) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str() as Extract<JsonNode, { type: 'string' }>;
        ws();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        entries.push({ key: k.value, value: val(depth + 1) });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { type: 'object', start, end: i, entries };
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const items: JsonNode[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { type: 'array', start, end: i, items };
      }
      while (true) {
        items.push(val(depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { type: 'array', start, end: i, items };
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    const lit = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, Math.min(to, i + 64)));
    if (!lit) fail('unexpected character');
    i += lit![0].length;
    const raw = lit![0];
    return { type: raw === 'true' || raw === 'false' ? 'boolean' : raw === 'null' ? 'null' : 'number', start, end: i, raw };
  };
  const root = val(0);
  ws();
  if (i < to) fail('unexpected text after the value');
  return root;
}

/** The decoded string with each character mapped to its source characters (escapes as a whole). */
export function mapJsonString(text: string, node: Extract<JsonNode, { type: 'string' }>): MappedText {
  if (!node.escaped) return MappedText.identity(node.value, node.start + 1);
  const b = new MappedTextBuilder();
  let i = node.start + 1;
  const end = node.end - 1;
  while (i < end) {
    if (text[i] === '\\') {
      if (text[i + 1] === 'u') {
        b.pushDecoded(String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)), i, i + 6);
        i += 6;
      } else {
        const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        b.pushDecoded(map[text[i + 1]!] ?? '', i, i + 2);
        i += 2;
      }
      continue;
    }
    let j = i;
    while (j < end && text[j] !== '\\') j++;
    b.pushVerbatim(text.slice(i, j), i);
    i = j;
  }
  return b.build();
}
