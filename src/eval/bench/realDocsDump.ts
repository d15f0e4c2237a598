/**
 * A documentation folder's ask as training data for the judgment models (tools/judge): the reader
 * input of a warm ask, its answer strings, its rounds, and as gold the leaves of the question's
 * gold file that hold an answer string (an answer string elsewhere in the folder may occur by
 * chance; tools/judge/labels.ts leaves those out). Where the kept evidence holds no such leaf the
 * gold is empty, and the labels fall back to the answer-bearing leaves.
 */
import type { RegionNode } from '../../contracts/region';
import type { AskTrace } from '../../contracts/trace';
import { leavesOf } from '../../core/compress/baselines';
import type { ReaderInput } from '../../core/read/reader';
import { containsAnswer, normalizeAnswer } from '../answers';
import { JUDGE_DUMP_SCHEMA, serializeRegion, type JudgeDumpRecord } from '../judgeDump';
import type { RealDocsRow } from './realDocs';

/** Whether a leaf's text (with its header: a row's column names) holds one of the answer strings. */
export function leafHoldsAnswer(leaf: RegionNode, answers: readonly string[]): boolean {
  const text = normalizeAnswer(leaf.header ? `${leaf.header} ${leaf.text}` : leaf.text);
  return answers.some((a) => {
    const n = normalizeAnswer(a);
    return n !== '' && containsAnswer(text, n);
  });
}

export function folderDumpRecord(dataset: string, row: RealDocsRow, trace: AskTrace, input: ReaderInput): JudgeDumpRecord {
  const goldFile = row.gold.file;
  const goldLeaves = new Set<string>();
  for (const r of input.regions) {
    if (r.file !== goldFile) continue;
    for (const leaf of leavesOf(r.node)) if (leafHoldsAnswer(leaf, row.answers)) goldLeaves.add(leaf.id);
  }
  return {
    schema: JUDGE_DUMP_SCHEMA,
    dataset,
    questionId: row.id,
    question: row.question,
    answers: row.answers,
    gold: goldLeaves.size > 0 ? [{ leafIds: [...goldLeaves], mode: 'any' }] : [],
    retrieval: true,
    regions: input.regions.map(serializeRegion),
    rounds: trace.rounds.map((round) => ({ round: round.round, query: round.query, added: round.addedItemIds, ...(round.critic ? { critic: round.critic } : {}) })),
    stop: { reason: trace.stop.reason, round: trace.stop.round },
    ...(input.truncated ? { truncated: true } : {}),
  };
}
