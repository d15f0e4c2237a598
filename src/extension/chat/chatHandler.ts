/**
 * What the @canopy chat participant does with a request, free of `vscode` so that it runs (and
 * is tested) in plain Node: the participant module (src/extension/chatParticipant.ts) adapts VS
 * Code's ChatRequest, ChatResponseStream and Location to the small shapes below, and nothing else
 * crosses that seam.
 *
 *   @canopy <question>     a cited answer: the chat's language model writes it when the workspace
 *                          may send it documents, the extractive reader quotes the evidence otherwise
 *   @canopy /search <q>    the kept evidence regions, each an anchor that opens its exact range
 *   @canopy /trace [id]    the latest (or a named) answer's trace, with a button to open it in the inspector
 *   @canopy /index         index (or re-index) the workspace
 *
 * Document text is untrusted: everything quoted from it is escaped before it reaches Markdown.
 */
import { describeTrace, type AgentAskOptions, type AgentOperations } from '../../core/agent/operations';
import type { AgentCitation } from '../../core/agent/citations';
import { describeError } from '../../core/errors';
import type { ChatModel } from '../../core/llm/llm';

export interface ChatRequestLike<M> {
  prompt: string;
  command: string | undefined;
  /** The chat's language model (VS Code's LanguageModelChat), when the host gives one. */
  model?: M;
}

/** The part of VS Code's ChatResponseStream the participant uses. */
export interface ChatStreamLike<L> {
  progress(value: string): void;
  markdown(value: string): void;
  anchor(value: L, title?: string): void;
  reference(value: L): void;
  button(command: { command: string; title: string; arguments?: unknown[] }): void;
}

export interface ChatHandlerDeps<L, M> {
  /** The agent operations (they index the folder first when there is no index, and report every answer). */
  agent: Pick<AgentOperations, 'searchEvidence' | 'ask' | 'listQuestions' | 'getTrace'>;
  /** Index the workspace; undefined when cancelled. */
  index(): Promise<{ files: number; parsed: number; reused: number; errors: unknown[] } | undefined>;
  /** The chat's model as a ChatModel when documents may go to it, else why not. */
  llmFor(model: M | undefined): { llm?: ChatModel; note?: string };
  /** A location (file and range) for a citation, or undefined when the file is not in the workspace. */
  location(citation: AgentCitation): L | undefined;
}

export interface ChatHandlerResult {
  metadata: { command: string; traceId?: string; traceName?: string };
  errorDetails?: { message: string };
}

export const openTraceCommand = 'canopy.openTrace';

/** Escapes Markdown so that document text shows as text (no links, images, HTML or emphasis). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~&]/g, (c) => `\\${c}`).replace(/\r?\n/g, ' ');
}

function excerpt(text: string, max = 240): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function traceButton(stream: ChatStreamLike<unknown>, traceName: string): void {
  stream.button({ command: openTraceCommand, title: 'Open in Evidence Inspector', arguments: [traceName] });
}

/** One line per citation: its number, an anchor that opens the exact range, and the quoted text. */
function citeList<L>(stream: ChatStreamLike<L>, deps: ChatHandlerDeps<L, unknown>, cites: Array<{ n: number; citation: AgentCitation; text: string; score?: number | null }>): void {
  const seen = new Set<string>();
  for (const c of cites) {
    stream.markdown(`\n\n**[${c.n}]** `);
    const loc = deps.location(c.citation);
    if (loc) {
      stream.anchor(loc, c.citation.ref);
      const key = `${c.citation.file}:${c.citation.chars?.start ?? c.citation.page ?? ''}`;
      if (!seen.has(key)) {
        seen.add(key);
        stream.reference(loc);
      }
    } else {
      stream.markdown(escapeMarkdown(c.citation.ref));
    }
    const score = typeof c.score === 'number' ? ` · score ${c.score.toFixed(3)}` : '';
    stream.markdown(`${score} — ${escapeMarkdown(excerpt(c.text))}`);
  }
}

async function runAsk<L, M>(request: ChatRequestLike<M>, stream: ChatStreamLike<L>, deps: ChatHandlerDeps<L, M>, options: AgentAskOptions): Promise<ChatHandlerResult> {
  const { llm, note } = deps.llmFor(request.model);
  stream.progress('Retrieving and compressing evidence…');
  const result = await deps.agent.ask(request.prompt, { ...options, ...(llm ? { llm } : {}) });
  stream.markdown(escapeMarkdown(result.answer));
  citeList(
    stream,
    deps,
    result.citations.map((c) => ({ n: c.marker, citation: c, text: c.text })),
  );
  const mode = result.mode === 'llm' ? `Answered by ${escapeMarkdown(result.model ?? llm?.id ?? 'the language model')} from ${result.evidenceTokens} evidence tokens.` : `Extractive answer: quoted from the evidence, no language model${note ? ` (${escapeMarkdown(note)})` : ''}.`;
  stream.markdown(`\n\n_${mode}_${result.notes?.length ? ` ${escapeMarkdown(result.notes.join(' '))}` : ''}\n\n`);
  traceButton(stream, result.traceName);
  return { metadata: { command: 'ask', traceId: result.traceId, traceName: result.traceName } };
}

async function runSearch<L, M>(request: ChatRequestLike<M>, stream: ChatStreamLike<L>, deps: ChatHandlerDeps<L, M>, options: AgentAskOptions): Promise<ChatHandlerResult> {
  stream.progress('Retrieving and compressing evidence…');
  const result = await deps.agent.searchEvidence(request.prompt, { ...options, maxRegions: 12 });
  stream.markdown(`Canopy kept **${result.keptRegions}** region(s) (${result.tokens.kept} of ${result.tokens.uncompressed} tokens) over ${result.rounds.length} round(s); stop: ${escapeMarkdown(result.stop.reason)}.`);
  citeList(stream, deps, result.regions.map((r) => ({ n: r.n, citation: r.citation, text: r.text, score: r.score })));
  if (result.keptRegions > result.regions.length) stream.markdown(`\n\n…and ${result.keptRegions - result.regions.length} more in the trace.`);
  stream.markdown('\n\n');
  traceButton(stream, result.traceName);
  return { metadata: { command: 'search', traceId: result.traceId, traceName: result.traceName } };
}

async function runTrace<L, M>(request: ChatRequestLike<M>, stream: ChatStreamLike<L>, deps: ChatHandlerDeps<L, M>): Promise<ChatHandlerResult> {
  const ref = request.prompt.trim() || (await deps.agent.listQuestions(1))[0]?.name;
  if (!ref) {
    stream.markdown('No question has been asked in this workspace yet. Ask one: `@canopy <question>`.');
    return { metadata: { command: 'trace' } };
  }
  const { trace, name } = await deps.agent.getTrace(ref);
  const s = describeTrace(trace, name);
  stream.markdown(`**${escapeMarkdown(s.question)}** — ${escapeMarkdown(s.createdAt)}\n\n${escapeMarkdown(s.answer)}\n`);
  for (const r of s.rounds) {
    const kept = r.retrieved.filter((i) => !i.repeated).reduce((a, i) => a + i.keptRegions, 0);
    const critic = r.critic ? `; critic: ${r.critic.sufficient ? 'sufficient' : `missing ${escapeMarkdown(r.critic.missing.slice(0, 5).join(', ') || '—')}`}` : '';
    stream.markdown(`\n- Round ${r.round}: “${escapeMarkdown(r.query)}” — ${r.retrieved.length} item(s), ${kept} region(s) kept${critic}`);
  }
  stream.markdown(`\n\nStop: ${escapeMarkdown(s.stop.reason)}. ${s.totals.evidenceTokens} of ${s.totals.uncompressedTokens} tokens kept.`);
  citeList(stream, deps, s.citations.map((c) => ({ n: c.marker, citation: c, text: c.text })));
  stream.markdown('\n\n');
  traceButton(stream, name);
  return { metadata: { command: 'trace', traceId: trace.id, traceName: name } };
}

async function runIndex<L, M>(stream: ChatStreamLike<L>, deps: ChatHandlerDeps<L, M>): Promise<ChatHandlerResult> {
  stream.progress('Indexing the workspace…');
  const s = await deps.index();
  if (!s) stream.markdown('Indexing was cancelled; the previous index is unchanged.');
  else stream.markdown(`Indexed **${s.files}** file(s): ${s.parsed} parsed, ${s.reused} unchanged${s.errors.length ? `, ${s.errors.length} with errors (see the Canopy log)` : ''}.`);
  return { metadata: { command: 'index' } };
}

const HELP =
  'Ask a question about this workspace\'s documents: `@canopy When were the sensors recalibrated?` — the answer cites the exact ranges it rests on. ' +
  'Commands: `/search` (the evidence only), `/trace` (the last answer\'s trace), `/index` (re-index).';

export async function handleChatRequest<L, M>(request: ChatRequestLike<M>, stream: ChatStreamLike<L>, deps: ChatHandlerDeps<L, M>, signal?: AbortSignal): Promise<ChatHandlerResult> {
  const command = request.command ?? 'ask';
  const options: AgentAskOptions = signal ? { signal } : {};
  try {
    if (command === 'index') return await runIndex(stream, deps);
    if (command === 'trace') return await runTrace(request, stream, deps);
    if (!request.prompt.trim()) {
      stream.markdown(HELP);
      return { metadata: { command } };
    }
    if (command === 'search') return await runSearch(request, stream, deps, options);
    if (command === 'ask') return await runAsk(request, stream, deps, options);
    stream.markdown(`Unknown command /${escapeMarkdown(command)}. ${HELP}`);
    return { metadata: { command } };
  } catch (err) {
    const { code, message } = describeError(err);
    if (code === 'E_CANCELLED') return { metadata: { command } };
    stream.markdown(`Canopy could not answer: ${escapeMarkdown(message)} (${code})`);
    return { metadata: { command }, errorDetails: { message: `${message} (${code})` } };
  }
}
