/**
 * Line-by-line reading of evaluation files with errors that name the file and the line: every
 * dataset reader goes through here, so "a schema error names the file and line" holds for all of
 * them. Fields are checked with the small `Fields` helper, whose messages say which field of which
 * line was wrong and what was expected.
 */
import { readFileSync } from 'node:fs';
import { CanopyError, ErrorCodes } from '../../core/errors';

/** A schema or syntax error in one line of an evaluation file. */
export class EvalDataError extends CanopyError {
  constructor(
    readonly path: string,
    readonly line: number,
    detail: string,
  ) {
    super(ErrorCodes.badInput, `${path}:${line}: ${detail}`, { file: path });
    this.name = 'EvalDataError';
  }
}

export interface JsonLine {
  line: number;
  value: unknown;
}

/** Non-blank lines of a JSONL file, parsed; a line that is not JSON is an EvalDataError. */
export function readJsonLines(path: string, text?: string): JsonLine[] {
  let body: string;
  try {
    body = text ?? readFileSync(path, 'utf8');
  } catch (err) {
    throw new CanopyError(ErrorCodes.notFound, `${path}: cannot read (${(err as Error).message})`, { file: path, cause: err });
  }
  const out: JsonLine[] = [];
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.trim() === '') continue;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) });
    } catch (err) {
      throw new EvalDataError(path, i + 1, `not valid JSON (${(err as Error).message})`);
    }
  }
  return out;
}

/** Tab-separated qrels (`query-id corpus-id score`, header line first). */
export function readQrels(path: string): Map<string, Map<string, number>> {
  const text = readFileSync(path, 'utf8');
  const out = new Map<string, Map<string, number>>();
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.trim() === '') continue;
    const parts = raw.split('\t');
    if (parts.length < 3) throw new EvalDataError(path, i + 1, 'expected "query-id<TAB>corpus-id<TAB>score"');
    const score = Number(parts[2]);
    if (!Number.isFinite(score)) throw new EvalDataError(path, i + 1, `score "${parts[2]}" is not a number`);
    let m = out.get(parts[0]!);
    if (!m) out.set(parts[0]!, (m = new Map()));
    m.set(parts[1]!, score);
  }
  return out;
}

type Obj = Record<string, unknown>;

/** Typed access to one JSON object with errors naming the file, the line and the field. */
export class Fields {
  constructor(
    readonly obj: Obj,
    readonly path: string,
    readonly line: number,
    private readonly prefix = '',
  ) {}

  static of(value: unknown, path: string, line: number): Fields {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new EvalDataError(path, line, 'expected a JSON object');
    return new Fields(value as Obj, path, line);
  }

  fail(detail: string): never {
    throw new EvalDataError(this.path, this.line, detail);
  }

  private name(key: string): string {
    return `"${this.prefix}${key}"`;
  }

  has(key: string): boolean {
    return this.obj[key] !== undefined && this.obj[key] !== null;
  }

  string(key: string): string {
    const v = this.obj[key];
    if (typeof v !== 'string') this.fail(`field ${this.name(key)} must be a string${v === undefined ? ' (missing)' : ''}`);
    return v;
  }

  optString(key: string): string | undefined {
    return this.has(key) ? this.string(key) : undefined;
  }

  /** A string or a number, as a string (ids are sometimes numbers). */
  id(key: string): string {
    const v = this.obj[key];
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    this.fail(`field ${this.name(key)} must be a string or number id${v === undefined ? ' (missing)' : ''}`);
  }

  number(key: string): number {
    const v = this.obj[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(`field ${this.name(key)} must be a number${v === undefined ? ' (missing)' : ''}`);
    return v;
  }

  boolean(key: string): boolean {
    const v = this.obj[key];
    if (typeof v !== 'boolean') this.fail(`field ${this.name(key)} must be true or false${v === undefined ? ' (missing)' : ''}`);
    return v;
  }

  array(key: string): unknown[] {
    const v = this.obj[key];
    if (!Array.isArray(v)) this.fail(`field ${this.name(key)} must be an array${v === undefined ? ' (missing)' : ''}`);
    return v;
  }

  optArray(key: string): unknown[] | undefined {
    return this.has(key) ? this.array(key) : undefined;
  }

  object(key: string): Fields {
    const v = this.obj[key];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(`field ${this.name(key)} must be an object${v === undefined ? ' (missing)' : ''}`);
    return new Fields(v as Obj, this.path, this.line, `${this.prefix}${key}.`);
  }

  /** Elements of an array field that must be objects. */
  objects(key: string): Fields[] {
    return this.array(key).map((v, i) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(`${this.name(key)}[${i}] must be an object`);
      return new Fields(v as Obj, this.path, this.line, `${this.prefix}${key}[${i}].`);
    });
  }

  strings(key: string): string[] {
    return this.array(key).map((v, i) => {
      if (typeof v !== 'string') this.fail(`${this.name(key)}[${i}] must be a string`);
      return v;
    });
  }

  /** An array of `[string|number, ...]` tuples checked by `check`. */
  tuples<T>(key: string, check: (t: unknown[], i: number) => T | undefined, expected: string): T[] {
    return this.array(key).map((v, i) => {
      const r = Array.isArray(v) ? check(v, i) : undefined;
      if (r === undefined) this.fail(`${this.name(key)}[${i}] must be ${expected}`);
      return r;
    });
  }
}
