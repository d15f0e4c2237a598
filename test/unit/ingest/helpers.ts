/**
 * Shared checks for the ingestion tests: fixture loading, tree walks, and the invariants every
 * parser must keep (exact leaf anchors, line/column agreeing with offsets, at most B children,
 * leaves in source order, ids that are child-index paths).
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Item, RegionNode } from '../../../src/contracts/region';

export const fixtureDir = join(__dirname, '..', '..', 'fixtures', 'ingest');

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(fixtureDir, name)));
}

export function fixtureText(name: string): string {
  return readFileSync(join(fixtureDir, name), 'utf8');
}

export function walk(node: RegionNode, fn: (n: RegionNode, parent: RegionNode | undefined) => void, parent?: RegionNode): void {
  fn(node, parent);
  for (const c of node.children) walk(c, fn, node);
}

export function allNodes(items: Item[]): RegionNode[] {
  const out: RegionNode[] = [];
  for (const it of items) walk(it.root, (n) => out.push(n));
  return out;
}

export function leaves(items: Item[]): RegionNode[] {
  return allNodes(items).filter((n) => n.children.length === 0);
}

export function ofKind(items: Item[], kind: RegionNode['kind']): RegionNode[] {
  return allNodes(items).filter((n) => n.kind === kind);
}

/** 1-based line / 0-based column of an offset, computed independently of the parser. */
export function lineColumn(source: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const c = source[i];
    if (c === '\n' || (c === '\r' && source[i + 1] !== '\n')) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart };
}

/**
 * Every leaf of the given kinds: `decode(source.slice(charStart, charEnd)) === text`, and the
 * anchor's lines/columns agree with its offsets. Returns the number of leaves checked.
 */
export function assertExactLeaves(
  items: Item[],
  source: string,
  kinds: ReadonlyArray<RegionNode['kind']>,
  decode: (slice: string, node: RegionNode) => string = (s) => s,
  normalise: (text: string) => string = (t) => t,
): number {
  let checked = 0;
  for (const n of leaves(items)) {
    if (!kinds.includes(n.kind)) continue;
    const { charStart, charEnd } = n.anchor;
    assert.ok(charStart !== undefined && charEnd !== undefined, `${n.id} has char offsets`);
    assert.ok(charStart! <= charEnd! && charEnd! <= source.length, `${n.id} offsets inside the source`);
    assert.equal(normalise(decode(source.slice(charStart!, charEnd!), n)), normalise(n.text), `${n.id} (${n.kind}) slice matches its text`);
    const s = lineColumn(source, charStart!);
    const e = lineColumn(source, charEnd!);
    assert.deepEqual([n.anchor.startLine, n.anchor.startColumn, n.anchor.endLine, n.anchor.endColumn], [s.line, s.column, e.line, e.column], `${n.id} line/column`);
    checked++;
  }
  return checked;
}

/** No node has more than B children; ids are `${itemId}/${path}`; leaves come in source order. */
export function assertTreeShape(items: Item[], b: number): void {
  for (const item of items) {
    const check = (n: RegionNode, path: string): void => {
      assert.equal(n.id, `${item.id}/${path}`, 'id is the child-index path');
      assert.ok(n.children.length <= b, `${n.id} has ${n.children.length} > ${b} children`);
      n.children.forEach((c, i) => check(c, `${path}.${i}`));
    };
    check(item.root, '0');
  }
  let last = -1;
  let lastPage = -1;
  for (const n of leaves(items)) {
    if (n.anchor.charStart !== undefined) {
      assert.ok(n.anchor.charStart >= last, `${n.id} starts at ${n.anchor.charStart}, before the previous leaf's ${last}`);
      last = n.anchor.charEnd ?? n.anchor.charStart;
    }
    if (n.anchor.page !== undefined) {
      assert.ok(n.anchor.page >= lastPage, `${n.id} on page ${n.anchor.page} after page ${lastPage}`);
      lastPage = n.anchor.page;
    }
  }
}

/** Inner-node text is its children's texts joined (' ' sentences, '\n' rows/items/segments/records, '\n\n' blocks). */
export function expectedJoin(n: RegionNode): string {
  const unit = (x: RegionNode): string => (x.kind === 'group' ? unit(x.children[0]!) : x.kind);
  const line = new Set(['row', 'listItem', 'record', 'segment']);
  let out = '';
  n.children.forEach((c, i) => {
    if (c.text === '') return;
    if (out !== '') {
      const a = unit(n.children[i - 1]!);
      const b = unit(c);
      out += a === 'sentence' && b === 'sentence' ? ' ' : line.has(a) && line.has(b) ? '\n' : '\n\n';
    }
    out += c.text;
  });
  return out;
}

export function assertInnerTexts(items: Item[]): void {
  for (const n of allNodes(items)) if (n.children.length > 0) assert.equal(n.text, expectedJoin(n), `${n.id} text is its children joined`);
}

/** A deterministic stand-in for the encoder: hashed bag of lower-cased words, L2-normalised. */
export async function fakeEmbed(texts: string[]): Promise<Float32Array[]> {
  return texts.map((t) => {
    const v = new Float32Array(64);
    for (const w of t.toLowerCase().match(/[a-z]{4,}/g) ?? []) {
      let h = 2166136261;
      for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
      v[(h >>> 0) % 64]! += 1;
    }
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm) || 1;
    return v.map((x) => x / norm);
  });
}
