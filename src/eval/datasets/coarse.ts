/**
 * Coarse-chunk pools (docs/topics.md, "Coarse chunks"): the open pool's documents grouped into
 * larger retrieved items, as a user's index holds them when its files are whole articles,
 * sections or files of many passages. The grouping is generic (no dataset or file name):
 *
 *  - `title`: every document of one title, in pool order, is one item (SQuAD: the article);
 *  - `title:N`: runs of N consecutive documents of one title (SQuAD: sections of N paragraphs);
 *  - `N`: runs of N consecutive documents in pool order (NQ: files of ten passages);
 *  - `page`: for a folder of PDFs, each page one item (FinanceBench; ../pagePool.ts).
 *
 * A group's text is its members' texts joined by a blank line; where members differ in title,
 * each member's text is headed by its title (a file of passages keeps their headings) and the
 * group is titled by its first member's title and the member count. The dataset's sentence spans
 * travel, shifted, when every member has them. Questions follow: a gold document becomes the
 * group holding it (its grade the highest of its members'), and gold units in a member's
 * coordinates (sentence index, char span, whole paragraph) are moved into the group's.
 */
import type { EvalQuestion, GoldUnit, PoolDoc } from './types';

export type CoarseSpec = { by: 'title'; size?: number } | { by: 'run'; size: number } | { by: 'page' };

/** `title`, `title:N`, `N` (N ≥ 2), or `page` (the pages of the questions' PDFs: ../pagePool.ts). */
export function parseCoarse(value: string): CoarseSpec {
  if (value === 'page') return { by: 'page' };
  const t = /^title(?::(\d+))?$/.exec(value);
  if (t) {
    if (t[1] === undefined) return { by: 'title' };
    const size = Number(t[1]);
    if (size >= 1) return { by: 'title', size };
  } else if (/^\d+$/.test(value) && Number(value) >= 2) return { by: 'run', size: Number(value) };
  throw new Error(`pool chunks "${value}": expected title, title:N (N ≥ 1), N (N ≥ 2) or page`);
}

export const describeCoarse = (s: CoarseSpec): string => (s.by === 'page' ? 'one item per PDF page' : s.by === 'run' ? `runs of ${s.size} documents` : s.size ? `runs of ${s.size} documents of one title` : 'one item per title');

/** Where a member document lies in its group. */
interface Placement {
  group: string;
  /** Char offset of the member's text in the group's text. */
  offset: number;
  length: number;
  /** Sentences (dataset spans) before the member in the group; undefined without spans. */
  sentencesBefore: number | undefined;
}

export interface CoarsePool {
  docs: PoolDoc[];
  /** Member document id → its group. */
  placement: Map<string, Placement>;
}

function groupsOf(docs: readonly PoolDoc[], spec: CoarseSpec): PoolDoc[][] {
  if (spec.by === 'page') throw new Error('page pools are built from the PDFs (pagePool.ts), not by grouping documents');
  if (spec.by === 'run') {
    const out: PoolDoc[][] = [];
    for (let i = 0; i < docs.length; i += spec.size) out.push(docs.slice(i, i + spec.size));
    return out;
  }
  const byTitle = new Map<string, PoolDoc[]>();
  for (const d of docs) {
    let g = byTitle.get(d.title);
    if (!g) byTitle.set(d.title, (g = []));
    g.push(d);
  }
  const out: PoolDoc[][] = [];
  for (const g of byTitle.values()) {
    const size = spec.size ?? g.length;
    for (let i = 0; i < g.length; i += size) out.push(g.slice(i, i + size));
  }
  return out;
}

export function coarsenPool(docs: readonly PoolDoc[], spec: CoarseSpec): CoarsePool {
  const placement = new Map<string, Placement>();
  const out: PoolDoc[] = [];
  for (const members of groupsOf(docs, spec)) {
    const first = members[0]!;
    const oneTitle = members.every((m) => m.title === first.title);
    const id = members.length === 1 ? first.id : `${first.id}+${members.length - 1}`;
    const withSpans = members.every((m) => m.spans !== undefined);
    let text = '';
    const spans: Array<[number, number]> = [];
    let sentences = 0;
    for (const m of members) {
      if (text.length > 0) text += '\n\n';
      if (!oneTitle) {
        // The heading is a sentence of its own (a span) where the dataset's spans travel.
        if (withSpans) spans.push([text.length, text.length + m.title.length]);
        text += `${m.title}\n`;
        if (withSpans) sentences++;
      }
      const offset = text.length;
      placement.set(m.id, { group: id, offset, length: m.text.length, sentencesBefore: withSpans ? sentences : undefined });
      if (withSpans) {
        for (const [s, e] of m.spans!) spans.push([s + offset, e + offset]);
        sentences += m.spans!.length;
      }
      text += m.text;
    }
    const title = oneTitle ? first.title : `${first.title} (+${members.length - 1})`;
    out.push({ id, title, text, ...(withSpans ? { spans } : {}) });
  }
  return { docs: out, placement };
}

/** A question on the coarse pool: gold documents → their groups, gold units → the groups' coordinates. */
export function coarsenQuestion(q: EvalQuestion, pool: CoarsePool): EvalQuestion {
  const goldDocs = new Map<string, number>();
  for (const [doc, grade] of q.goldDocs) {
    const p = pool.placement.get(doc);
    const group = p?.group ?? doc;
    goldDocs.set(group, Math.max(goldDocs.get(group) ?? 0, grade));
  }
  if (!q.poolIdOf) return { ...q, goldDocs };
  const poolIdOf = new Map<string, string>();
  for (const [key, doc] of q.poolIdOf) poolIdOf.set(key, pool.placement.get(doc)?.group ?? doc);
  const gold = q.gold.flatMap((u): GoldUnit[] => {
    const doc = q.poolIdOf!.get(u.source);
    const p = doc === undefined ? undefined : pool.placement.get(doc);
    if (!p) return [u];
    if (u.granularity === 'span') return [{ ...u, start: u.start + p.offset, end: u.end + p.offset }];
    // A whole paragraph: the span of its text in the group.
    if (u.granularity === 'paragraph') return [{ granularity: 'span', source: u.source, start: p.offset, end: p.offset + p.length }];
    if (u.granularity === 'sentence') return p.sentencesBefore === undefined && u.text === undefined ? [] : [{ ...u, index: u.index + (p.sentencesBefore ?? 0) }];
    return [u];
  });
  return { ...q, goldDocs, poolIdOf, gold };
}
