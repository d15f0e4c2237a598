/**
 * After training (issue 36): when a question is asked again and what compresses it changed since
 * its last saved answer — another adapter, the gate or the node score `canopy train` fitted — the
 * inspector opens the Compare view (the saved answer as A, the new one as B: the regions kept and
 * dropped, and their scores in both). Free of `vscode`, so plain-Node tests drive it.
 */
import type { TraceSummary } from '../contracts/savedTrace';
import type { AskTrace } from '../contracts/trace';

/** What the training can change in a trace's settings, in words; empty when nothing of it differs. */
export function trainedChanges(before: AskTrace, after: AskTrace): string[] {
  const a = before.settings;
  const b = after.settings;
  const out: string[] = [];
  if ((a.adapterId ?? '') !== (b.adapterId ?? '')) out.push(`adapter ${a.adapterId ?? 'none'} → ${b.adapterId ?? 'none'}`);
  if (JSON.stringify(a.compressor) !== JSON.stringify(b.compressor)) out.push('compressor');
  if (JSON.stringify(a.nodeScore ?? null) !== JSON.stringify(b.nodeScore ?? null)) out.push('node score');
  return out;
}

/**
 * The newest saved answer to the same question (not a replay, not `answer` itself), when the
 * trained settings differ from `answer`'s; undefined otherwise.
 */
export async function answerBeforeTraining(answer: AskTrace, saved: readonly TraceSummary[], read: (name: string) => Promise<AskTrace>): Promise<AskTrace | undefined> {
  const earlier = saved
    .filter((s) => s.id !== answer.id && s.question === answer.question && s.replayOf === undefined && s.createdAt <= answer.createdAt)
    .sort((x, y) => y.createdAt.localeCompare(x.createdAt))[0];
  if (!earlier) return undefined;
  const before = await read(earlier.name);
  return trainedChanges(before, answer).length > 0 ? before : undefined;
}
