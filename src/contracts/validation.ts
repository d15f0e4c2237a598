/**
 * The building blocks the schemas of src/contracts and src/protocol are made of, with the house's
 * size limits, and the one way a failed check becomes a sentence naming the first problem and
 * where it is: `trace.rounds[0].retrieved[2].tree.children[3].id must be a string`.
 *
 * The schemas are zod's (`zod/mini`: the same library as `zod`, in the build that bundles only
 * what is used — the webview bundles these schemas, and the full build would more than double
 * its size). Every type that crosses a boundary is inferred from its schema, never restated.
 */
import * as z from 'zod/mini';

/** Longest string any schema accepts (characters). */
export const MAX_STRING = 1_000_000;
/** Most entries of a list, unless the schema says otherwise. */
export const MAX_LIST = 100_000;

/** A string of at most MAX_STRING characters. */
export const str = z.string().check(z.maxLength(MAX_STRING));
/** A name or id a request refers to: 1 to 1000 characters. */
const shortStrProblem = 'must be a non-empty string of at most 1000 characters';
export const shortStr = z.string({ error: () => shortStrProblem }).check(z.minLength(1, shortStrProblem), z.maxLength(1000, shortStrProblem));
/** A finite number (NaN and ±Infinity are refused). */
export const num = z.number();
export const bool = z.boolean();
/** Only the type problem: range problems keep their own words. */
const intProblem = (issue: z.core.$ZodRawIssue) => (issue.code === 'invalid_type' ? 'must be an integer' : undefined);
/** A safe integer. */
export const int = z.int({ error: intProblem });
/** A safe integer ≥ 0. */
export const count = z.int({ error: intProblem }).check(z.nonnegative());
/** A share: a finite number from 0 to 1. */
export const share = z.number().check(z.gte(0, 'must be from 0 to 1'), z.lte(1, 'must be from 0 to 1'));

/** A range of allowed values, inclusive. */
export interface Range {
  readonly min: number;
  readonly max: number;
}

/** A safe integer in the range. */
export function intIn(range: Range) {
  const problem = `must be from ${range.min} to ${range.max}`;
  return z.int({ error: intProblem }).check(z.gte(range.min, problem), z.lte(range.max, problem));
}

/** A finite number in the range. */
export function numIn(range: Range) {
  const problem = `must be from ${range.min} to ${range.max}`;
  return z.number().check(z.gte(range.min, problem), z.lte(range.max, problem));
}

/** A list of at most `max` entries. */
export function list<T extends z.core.SomeType>(item: T, max = MAX_LIST) {
  return z.array(item).check(z.maxLength(max));
}

/** A box on a PDF page in points, [x0, y0, x1, y1]. */
export const box = z.tuple([num, num, num, num], { error: 'must be four finite numbers' });

/** A box whose corners are in order: x0 ≤ x1 and y0 ≤ y1. */
export const orderedBox = box.check(z.refine(([x0, y0, x1, y1]) => x0 <= x1 && y0 <= y1, 'must have x0 ≤ x1 and y0 ≤ y1'));

/** The outcome of a check: the value as the schema reads it, or the first problem in words. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** How a key the schema does not allow is described (the protocol says "is not part of the protocol"). */
export interface CheckOptions {
  unknownKey?: string;
}

/**
 * Checks a value against a schema. `root` names the value in the problem (`trace`, `params`…).
 * Does not throw for plain data (what JSON.parse or postMessage delivers): unexpected values,
 * `__proto__` keys and (for the recursive trace tree) excessive depth are problems like any other.
 */
export function check<S extends z.core.$ZodType>(schema: S, value: unknown, root: string, options: CheckOptions = {}): Checked<z.output<S>> {
  const result = z.safeParse(schema, value, { error: describeIssue });
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  if (!issue) return { ok: false, problem: `${root} is not valid` };
  if (issue.code === 'unrecognized_keys') {
    return { ok: false, problem: `${pathText(root, [...issue.path, issue.keys[0] ?? '?'])} ${options.unknownKey ?? 'is not a known field'}` };
  }
  return { ok: false, problem: `${pathText(root, issue.path)} ${issue.message}` };
}

/** `root.a[3].b` */
export function pathText(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return out;
}

const article = (word: string) => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

const typeWords: Record<string, string> = {
  number: 'a finite number',
  int: 'an integer',
  array: 'a list',
  tuple: 'a list',
  nonoptional: 'present',
};

/** The message of an issue that its schema gave none, without the path (check() adds it). */
function describeIssue(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${typeWords[issue.expected] ?? article(issue.expected)}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${String(issue.maximum)} characters long`;
      if (issue.origin === 'array' || issue.origin === 'set') return `has more than ${String(issue.maximum)} entries`;
      return issue.inclusive === false ? `must be less than ${String(issue.maximum)}` : `must be ≤ ${String(issue.maximum)}`;
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${String(issue.minimum)} characters long`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at least ${String(issue.minimum)} entries`;
      return issue.inclusive === false ? `must be more than ${String(issue.minimum)}` : `must be ≥ ${String(issue.minimum)}`;
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}` : `must be one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_union': {
      const options = (issue as { options?: unknown[] }).options;
      return options && options.length > 0 ? `must be one of ${options.map(String).join(', ')}` : 'matches none of the allowed shapes';
    }
    case 'invalid_key':
      return 'has a key that is not allowed';
    case 'invalid_element':
      return 'has an entry that is not allowed';
    case 'invalid_format':
      return `must be ${article(issue.format)}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return 'has keys that are not allowed';
    case 'custom':
    default:
      return 'is not valid';
  }
}
