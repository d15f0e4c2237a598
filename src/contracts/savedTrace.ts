/**
 * Saved traces: which file names the traces folder may hold (the core writes and reads them, the
 * extension refuses any other name a webview asks for) and the summary a history list shows of
 * each (the core builds it, the protocol carries it to the webview).
 */
import * as z from 'zod/mini';
import { AnswerMode, type AskTrace } from './trace';
import { num, shortStr, str } from './validation';

/**
 * A trace file name: a bare `*.json.gz` (gzip, what Canopy writes) or `*.json` (plain, as traces
 * were written before) name of letters, digits, `.`, `_` and `-`, never hidden.
 */
export const TRACE_FILE_NAME = /^(?!\.)[A-Za-z0-9._-]+\.json(\.gz)?$/;

export function isTraceFileName(name: string): boolean {
  return TRACE_FILE_NAME.test(name);
}

/** One saved trace, as the history and the compare picker list it. */
export const TraceSummary = z.strictObject({
  /** File name in the traces folder (what `traces/get` takes). */
  name: shortStr,
  id: str,
  question: str,
  createdAt: str,
  mode: AnswerMode,
  evidenceTokens: num,
  replayOf: z.optional(str),
});
export type TraceSummary = z.output<typeof TraceSummary>;

export function summarizeTrace(name: string, trace: AskTrace): TraceSummary {
  return {
    name,
    id: trace.id,
    question: trace.question,
    createdAt: trace.createdAt,
    mode: trace.answer.mode,
    evidenceTokens: trace.totals.evidenceTokens,
    ...(trace.replay ? { replayOf: trace.replay.of } : {}),
  };
}
