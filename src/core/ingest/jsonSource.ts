/**
 * JSON with source positions: every value knows its [start, end) in the text (and every object
 * entry where its key starts), and every string can be decoded into a MappedText whose
 * characters map back to the exact source characters (an escape such as `\n` or `\u00e9` maps
 * to its whole escape sequence). JSON.parse loses positions, and notebooks and JSON fields need
 * anchors into the file's own text. Parsing is jsonc-parser's (strict: no comments, no trailing
 * commas), whose tree gives every node's offset and length; this module maps its tree and its
 * first error, and decodes a string's escapes back to their source characters.
 */

import { createScanner, type Node, parseTree, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { MappedText, MappedTextBuilder } from './textAnchors';

export type JsonNode =
  | { type: 'object'; start: number; end: number; entries: Array<{ key: string; /** Where the key's opening quote is. */ keyStart: number; value: JsonNode }> }
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

const parseOptions = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false } as const;

/** What jsonc-parser's error codes (by name: its enums are const enums) mean, in a message's words. */
const ERROR_WORDS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'bad number',
  PropertyNameExpected: 'expected a key',
  ValueExpected: 'expected a value',
  ColonExpected: "expected ':'",
  CommaExpected: "expected ','",
  CloseBraceExpected: "expected ',' or '}'",
  CloseBracketExpected: "expected ',' or ']'",
  EndOfFileExpected: 'unexpected text after the value',
  InvalidCommentToken: 'comments are not JSON',
  UnexpectedEndOfComment: 'unterminated comment',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'bad number',
  InvalidUnicode: 'bad \\u escape',
  InvalidEscapeCharacter: 'bad escape',
  InvalidCharacter: 'control character in string',
};

const describeParseError = (code: ParseError['error']) => ERROR_WORDS[printParseErrorCode(code)] ?? printParseErrorCode(code);

/** jsonc-parser's SyntaxKind values for brackets and the end (a const enum, so not importable as values). */
const TOKEN = { openBrace: 1, closeBrace: 2, openBracket: 3, closeBracket: 4, eof: 17 } as const;

/**
 * The deepest nesting of text[from, to) by jsonc-parser's scanner (no recursion), so a value nested
 * deeper than `maxDepth` is refused before the recursive parser could overflow the stack.
 */
function tooDeepAt(text: string, from: number, to: number): number | undefined {
  const scanner = createScanner(text.slice(from, to), true);
  let depth = 0;
  for (let token: number = scanner.scan(); token !== TOKEN.eof; token = scanner.scan()) {
    if (token === TOKEN.openBrace || token === TOKEN.openBracket) {
      if (++depth > maxDepth) return from + scanner.getTokenOffset();
    } else if (token === TOKEN.closeBrace || token === TOKEN.closeBracket) depth--;
  }
  return undefined;
}

/** jsonc-parser's node → ours, offsets moved by `shift` (the start of the slice it parsed). */
function fromTree(text: string, node: Node, shift: number): JsonNode {
  const start = node.offset + shift;
  const end = start + node.length;
  switch (node.type) {
    case 'object':
      return {
        type: 'object',
        start,
        end,
        entries: (node.children ?? []).map((prop) => ({
          key: String(prop.children![0]!.value),
          keyStart: prop.offset + shift,
          value: fromTree(text, prop.children![1]!, shift),
        })),
      };
    case 'array':
      return { type: 'array', start, end, items: (node.children ?? []).map((c) => fromTree(text, c, shift)) };
    case 'string':
      return { type: 'string', start, end, value: node.value as string, escaped: text.slice(start + 1, end - 1).includes('\\') };
    case 'number':
    case 'boolean':
    case 'null':
      return { type: node.type, start, end, raw: text.slice(start, end) };
    default:
      throw new JsonSyntaxError('expected a value', start);
  }
}

/**
 * Parses one JSON value spanning text[from, to) (whitespace around it allowed) with jsonc-parser
 * in strict mode (no comments, no trailing commas); the first error is thrown as a
 * JsonSyntaxError at its offset.
 */
export function parseJsonWithPositions(text: string, from = 0, to = text.length): JsonNode {
  const deep = tooDeepAt(text, from, to);
  if (deep !== undefined) throw new JsonSyntaxError(`nesting too deep at offset ${deep}`, deep);
  const slice = from === 0 && to === text.length ? text : text.slice(from, to);
  const errors: ParseError[] = [];
  const tree = parseTree(slice, errors, parseOptions);
  const first = errors[0];
  if (first) throw new JsonSyntaxError(`${describeParseError(first.error)} at offset ${from + first.offset}`, from + first.offset);
  if (!tree) throw new JsonSyntaxError(`unexpected end at offset ${to}`, to);
  return fromTree(text, tree, from);
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
