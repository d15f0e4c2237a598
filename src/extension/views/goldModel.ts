/**
 * The Gold view's data, without VS Code: annotations grouped per question (by dataset id when
 * there is one, else by the question text, as training groups them), newest question first,
 * each annotation with its re-location status against the files as they are now. Annotations
 * that can no longer be located stay listed, marked lost (never silently dropped), and the
 * question row counts them; corrupt lines of the file are listed at the end.
 */
import type { Relocation, RelocationStatus } from '../../core/annotate/relocate';
import type { Annotation, CorruptLine } from '../../core/annotate/store';
import type { Anchor } from '../../contracts/region';

export interface GoldEntry {
  kind: 'annotation';
  annotation: Annotation;
  status: RelocationStatus;
  /** Where the span is now (the stored anchor when lost). */
  anchor: Anchor;
  label: string;
  description: string;
}

export interface GoldQuestion {
  kind: 'question';
  key: string;
  question: string;
  entries: GoldEntry[];
  lost: number;
  /** Newest annotation time of the question (ISO). */
  latest: string;
}

export interface GoldCorrupt {
  kind: 'corrupt';
  line: CorruptLine;
  label: string;
}

export type GoldNode = GoldQuestion | GoldEntry | GoldCorrupt;

export function goldQuestionKey(a: Pick<Annotation, 'questionId' | 'question'>): string {
  return a.questionId !== undefined ? `id:${a.questionId}` : `q:${a.question}`;
}

/** "file:line", "file p.3", "file row 4" — the anchor as one short location. */
export function anchorLocation(a: Anchor): string {
  if (a.page !== undefined) return `${a.file} p.${a.page + 1}`;
  if (a.timeStart !== undefined) return `${a.file} @${Math.round(a.timeStart)}s`;
  if (a.startLine !== undefined) return `${a.file}:${a.startLine}`;
  if (a.row !== undefined) return `${a.file} row ${a.row + 1}`;
  return a.file;
}

const squash = (s: string, max: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function goldTree(relocations: readonly Relocation[], corrupt: readonly CorruptLine[] = []): GoldNode[] {
  const byKey = new Map<string, GoldQuestion>();
  for (const r of relocations) {
    const a = r.annotation;
    const key = goldQuestionKey(a);
    let q = byKey.get(key);
    if (!q) {
      q = { kind: 'question', key, question: a.question, entries: [], lost: 0, latest: a.time };
      byKey.set(key, q);
    }
    const anchor = r.anchor ?? a.anchor;
    const lost = r.status === 'lost';
    if (lost) q.lost++;
    if (a.time > q.latest) q.latest = a.time;
    q.entries.push({
      kind: 'annotation',
      annotation: a,
      status: r.status,
      anchor,
      label: squash(a.text || anchorLocation(anchor), 80),
      description: `${anchorLocation(anchor)}${lost ? ' · lost' : r.status === 'moved' || r.status === 'context' || r.status === 'fuzzy' ? ` · ${r.status}` : ''}`,
    });
  }
  const questions = [...byKey.values()];
  for (const q of questions) q.entries.sort((x, y) => x.anchor.file.localeCompare(y.anchor.file) || (x.anchor.charStart ?? x.anchor.page ?? x.anchor.row ?? 0) - (y.anchor.charStart ?? y.anchor.page ?? y.anchor.row ?? 0));
  questions.sort((x, y) => y.latest.localeCompare(x.latest) || x.question.localeCompare(y.question));
  return [...questions, ...corrupt.map((line) => ({ kind: 'corrupt' as const, line, label: `line ${line.line}: ${line.reason}` }))];
}
