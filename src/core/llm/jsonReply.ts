/**
 * Pulls one JSON object out of a model's reply. Models asked for "only JSON" still wrap it in
 * code fences, put prose before or after it, think aloud in `<think>` blocks first, or leave a
 * trailing comma. This finds the object without trusting any of that; whether the object means
 * anything is for the caller to validate.
 */

export type JsonReply = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/**
 * The first JSON object in `text` (fenced blocks first) for which `accept` holds. Reasoning
 * blocks are skipped: an object inside `<think>` is the model's draft, not its answer.
 */
export function extractJsonObject(text: string, accept: (value: Record<string, unknown>) => boolean = () => true): JsonReply {
  const visible = stripThinking(text);
  if (!visible.trim()) return { ok: false, reason: text.trim() ? 'the reply holds only reasoning, no answer' : 'the reply is empty' };
  const fenced = [...visible.matchAll(/```[a-zA-Z0-9_-]*[^\S\n]*\n?([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  let sawObject = false;
  for (const source of [...fenced, visible]) {
    for (const candidate of objectCandidates(source)) {
      const value = parseLenient(candidate);
      if (value === undefined) continue;
      sawObject = true;
      if (accept(value)) return { ok: true, value };
    }
  }
  return { ok: false, reason: sawObject ? 'the reply holds JSON, but not an object of the expected shape' : 'the reply holds no JSON object' };
}

function stripThinking(text: string): string {
  const closed = text.replace(/<think(?:ing)?>[\s\S]*?<\/think(?:ing)?>/gi, '');
  // An unclosed block (the answer was cut off while thinking) hides everything after it.
  const open = closed.search(/<think(?:ing)?>/i);
  return open >= 0 ? closed.slice(0, open) : closed;
}

/** Replies are untrusted: bound the scan so a reply full of braces costs milliseconds, not minutes. */
const MAX_SCAN = 100_000;
const MAX_STARTS = 64;

/** Balanced `{…}` spans, string- and escape-aware, in order of their opening brace. */
function* objectCandidates(text: string): Generator<string> {
  const source = text.slice(0, MAX_SCAN);
  let starts = 0;
  for (let start = source.indexOf('{'); start >= 0 && starts++ < MAX_STARTS; start = source.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    let escaped = false;
    for (let i = start; i < source.length; i++) {
      const c = source[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        yield source.slice(start, i + 1);
        break;
      }
    }
  }
}

function parseLenient(candidate: string): Record<string, unknown> | undefined {
  for (const text of [candidate, candidate.replace(/,\s*([}\]])/g, '$1')]) {
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
      return undefined;
    } catch {
      // try the next repair
    }
  }
  return undefined;
}

/** A boolean as models write it: true/false, or the strings "true"/"false"/"yes"/"no". */
export function looseBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (v === 'true' || v === 'yes') return true;
    if (v === 'false' || v === 'no') return false;
  }
  return undefined;
}

/** Strings from a string or an array (non-strings dropped), trimmed, non-empty, capped in count and length. */
export function stringList(value: unknown, maxItems: number, maxLength: number): string[] {
  const raw = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return raw
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.replace(/\s+/g, ' ').trim().slice(0, maxLength))
    .filter((v) => v.length > 0)
    .slice(0, maxItems);
}
