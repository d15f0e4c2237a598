/**
 * What an agent can ask of one folder's index, independent of the host that exposes it: the
 * VS Code language-model tools and @canopy chat participant (src/extension) and the MCP server
 * (src/cli/mcp) call these operations and only format their results. They work through the core
 * services — the AskService answers with the settings of the moment, the TraceStore saves and
 * lists the traces — and every question they answer leaves a saved trace a person can open in the
 * Evidence Inspector, reported as an `answered` event (the hosts export it and refresh their
 * history from that event, as the extension does for its own questions).
 *
 * - searchEvidence: question → the kept regions (exact citations, scores) and the trace id. It
 *   runs the whole evidence pipeline (hybrid retrieval, CANOPY compression, rule-critic rounds)
 *   with no LLM: the agent asking is the reader.
 * - ask: question → the answer with its citations (extractive, or the LLM given).
 * - getTrace / listQuestions: saved answers; describeTrace: what a trace says, without its trees.
 *
 * Unlike the extension's own questions (src/extension/questions.ts), agent questions never cancel
 * one another or the user's: an agent may search several questions at once.
 */
import * as path from 'node:path';
import type { AskService, AskWarning } from '../app/askService';
import { traceRetention, type TraceStore } from '../app/traceStore';
import type { CanopySettings } from '../config/settings';
import { CanopyError, describeError, ErrorCodes } from '../errors';
import type { ChatModel } from '../llm/llm';
import { silentLogger, type Logger } from '../ports';
import { checkQuestion, listLimit, regionLimit } from '../../contracts/agent';
import type { TraceSummary } from '../../contracts/savedTrace';
import { check, type Checked } from '../../contracts/validation';
import type { AskTrace, TraceNode, TraceRetrievedItem } from '../../contracts/trace';
import { regionText } from '../trace/nodeText';
import { citationOf, type AgentCitation } from './citations';

/** What the agent operations work through: the services of one folder and the settings of now. */
export interface AgentServices {
  asker: Pick<AskService, 'ask'>;
  traces: Pick<TraceStore, 'save' | 'list' | 'read'>;
  /** The settings as they are now; read once per question (a changed canopy.topK applies to the next one). */
  settings(): CanopySettings;
  /** Makes sure the folder has an index (the extension indexes it the first time); without it, a missing index is E_NOT_FOUND. */
  ensureIndex?(): Promise<void>;
  /** The adapter checkpoint these settings name, after the host's Workspace Trust rule ('' = none); default: the setting. */
  adapterCheckpoint?(settings: CanopySettings): { value: string; note?: string };
  logger?: Logger;
}

export interface AgentAskOptions {
  /** Items retrieved per round (default: the settings' topK). */
  topK?: number;
  /** Most critic rounds (default: the settings' maxRounds). */
  maxRounds?: number;
  signal?: AbortSignal;
}

/** A question an agent asked was answered and its trace saved. */
export interface AgentAnsweredEvent {
  type: 'answered';
  /** Which operation asked. */
  operation: 'searchEvidence' | 'ask';
  question: string;
  trace: AskTrace;
  /** The saved trace's path. */
  file: string;
  warnings: AskWarning[];
}

export type AgentListener = (event: AgentAnsweredEvent) => void;

export interface EvidenceRegionResult {
  /** The region's number in the reader input: [n]. */
  n: number;
  citation: AgentCitation;
  kind: string;
  modality: string;
  /** The region's text exactly as the cited span holds it (leaves joined). */
  text: string;
  /** Table rows: the header row they travel with (not part of the cited span). */
  header?: string;
  /** The region's score against the query of the round that retrieved its item. */
  score: number | null;
  item: { id: string; title: string; round: number; rank: number; score: number };
}

export interface TraceRef {
  /** The trace's id. */
  traceId: string;
  /** Its file name in the workspace's traces folder (get_trace / canopy.openTrace take it). */
  traceName: string;
}

export interface SearchEvidenceResult extends TraceRef {
  question: string;
  regions: EvidenceRegionResult[];
  /** Regions kept in all, and how many are listed (maxRegions). */
  keptRegions: number;
  tokens: { kept: number; uncompressed: number };
  rounds: Array<{ round: number; query: string; critic?: string }>;
  stop: { reason: string; note: string };
  /** What went wrong without failing the question (an unusable adapter checkpoint, topics unavailable). */
  warnings?: string[];
}

export interface AgentAnswerCitation extends AgentCitation {
  marker: number;
  text: string;
}

export interface AskForAgentResult extends TraceRef {
  question: string;
  answer: string;
  /** extractive: quoted from the evidence (no LLM); llm: written by `model`. */
  mode: 'extractive' | 'llm';
  model?: string;
  citations: AgentAnswerCitation[];
  evidenceTokens: number;
  notes?: string[];
  /** What went wrong without failing the question. */
  warnings?: string[];
}

/** The value a check read, or CanopyError(E_BAD_INPUT) naming the problem. */
function valid<T>(result: Checked<T>): T {
  if (!result.ok) throw new CanopyError(ErrorCodes.badInput, result.problem);
  return result.value;
}

function requireQuestion(question: unknown): string {
  return valid(checkQuestion(question));
}

/** Every node of the trace's scored trees by id, with the item and round that hold it. */
function nodesById(trace: AskTrace): Map<string, { node: TraceNode; item: TraceRetrievedItem; round: number }> {
  const out = new Map<string, { node: TraceNode; item: TraceRetrievedItem; round: number }>();
  for (const round of trace.rounds) {
    for (const item of round.retrieved) {
      if (item.repeated || !item.tree) continue;
      const stack = [item.tree];
      while (stack.length > 0) {
        const node = stack.pop()!;
        if (!out.has(node.id)) out.set(node.id, { node, item, round: round.round });
        stack.push(...node.children);
      }
    }
  }
  return out;
}

/** The table header a row (or a group of rows) travels with. */
function headerOf(node: TraceNode): string | undefined {
  let n: TraceNode | undefined = node;
  while (n) {
    if (n.header) return n.header;
    n = n.children[0];
  }
  return undefined;
}

/** The regions the reader got, in its numbering, with their citations and scores. */
export function keptRegions(trace: AskTrace): EvidenceRegionResult[] {
  const byId = nodesById(trace);
  const out: EvidenceRegionResult[] = [];
  trace.readerInput.regions.forEach((r, i) => {
    const hit = byId.get(r.nodeId);
    if (!hit) return; // a region whose tree the trace does not hold (never expected); the numbering stays the reader's
    const { node, item, round } = hit;
    const header = node.modality === 'table' && node.kind !== 'table' ? headerOf(node) : undefined;
    out.push({
      n: i + 1,
      citation: citationOf(node.anchor),
      kind: node.kind,
      modality: node.modality,
      text: regionText(node),
      ...(header ? { header } : {}),
      score: node.score ?? null,
      item: { id: item.itemId, title: item.title, round, rank: item.rank + 1, score: item.scores.fused },
    });
  });
  return out;
}

/** The answer of a trace with its citations, as an agent reads it. */
export function answerOf(trace: AskTrace, name: string): AskForAgentResult {
  return {
    question: trace.question,
    answer: trace.answer.text,
    mode: trace.answer.mode,
    ...(trace.answer.model ? { model: trace.answer.model } : {}),
    citations: trace.answer.citations.map((c) => ({ marker: c.marker, ...citationOf(c.anchor), text: c.text })),
    evidenceTokens: trace.totals.evidenceTokens,
    traceId: trace.id,
    traceName: name,
    ...(trace.answer.notes?.length ? { notes: trace.answer.notes } : {}),
  };
}

function warningTexts(warnings: AskWarning[]): { warnings?: string[] } {
  return warnings.length > 0 ? { warnings: warnings.map((w) => `${w.source}: ${w.message}`) } : {};
}

/** A saved trace by its id or its file name; CanopyError(E_NOT_FOUND) when there is none. */
export async function findSavedTrace(traces: Pick<TraceStore, 'list' | 'read'>, ref: string): Promise<{ trace: AskTrace; name: string }> {
  const key = typeof ref === 'string' ? ref.trim() : '';
  if (!key) throw new CanopyError(ErrorCodes.badInput, 'a trace id or file name is needed');
  const hit = (await traces.list()).find((s) => s.id === key || s.name === key);
  if (!hit) throw new CanopyError(ErrorCodes.notFound, `no saved trace with the id or name "${key}" (list_questions lists them)`);
  return { trace: await traces.read(hit.name), name: hit.name };
}

export class AgentOperations {
  private readonly listeners = new Set<AgentListener>();
  private readonly log: Logger;

  constructor(private readonly services: AgentServices) {
    this.log = services.logger ?? silentLogger;
  }

  /** Subscribes to answered questions; returns the unsubscribe function. */
  onEvent(listener: AgentListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Searches the index for evidence on a question: the full evidence pipeline with the rule
   * critic and no LLM, the trace saved. `maxRegions` caps how many regions are listed (default
   * 20; the trace keeps all).
   */
  async searchEvidence(question: string, options: AgentAskOptions & { maxRegions?: number } = {}): Promise<SearchEvidenceResult> {
    const q = requireQuestion(question);
    const maxRegions = valid(check(regionLimit, options.maxRegions, 'maxRegions')) ?? 20;
    const { trace, name, warnings } = await this.askAndSave('searchEvidence', q, undefined, options);
    const regions = keptRegions(trace);
    return {
      question: q,
      traceId: trace.id,
      traceName: name,
      regions: regions.slice(0, maxRegions),
      keptRegions: regions.length,
      tokens: { kept: trace.totals.evidenceTokens, uncompressed: trace.totals.uncompressedTokens },
      rounds: trace.rounds.map((r) => ({
        round: r.round,
        query: r.query,
        ...(r.critic ? { critic: r.critic.sufficient ? 'sufficient' : `not sufficient${r.critic.missing.length ? `: missing ${r.critic.missing.slice(0, 8).join(', ')}` : ''}` } : {}),
      })),
      stop: { reason: trace.stop.reason, note: trace.stop.note },
      ...warningTexts(warnings),
    };
  }

  /**
   * Answers a question with citations: the LLM given (the critic and reader use it, each falling
   * back to its no-LLM twin when a call fails), else the extractive reader and the rule critic.
   */
  async ask(question: string, options: AgentAskOptions & { llm?: ChatModel } = {}): Promise<AskForAgentResult> {
    const q = requireQuestion(question);
    const { trace, name, warnings } = await this.askAndSave('ask', q, options.llm, options);
    return { ...answerOf(trace, name), ...warningTexts(warnings) };
  }

  /** Saved questions, newest first, at most `limit`. */
  async listQuestions(limit = 50): Promise<TraceSummary[]> {
    return (await this.services.traces.list()).slice(0, valid(check(listLimit, limit, 'limit')));
  }

  /** A saved trace by its id or its file name; CanopyError(E_NOT_FOUND) when there is none. */
  getTrace(ref: string): Promise<{ trace: AskTrace; name: string }> {
    return findSavedTrace(this.services.traces, ref);
  }

  /** A saved trace by its file name (the MCP resources). */
  readTrace(name: string): Promise<AskTrace> {
    return this.services.traces.read(name);
  }

  private async askAndSave(operation: AgentAnsweredEvent['operation'], question: string, llm: ChatModel | undefined, options: AgentAskOptions): Promise<{ trace: AskTrace; name: string; warnings: AskWarning[] }> {
    const { asker, traces } = this.services;
    await this.services.ensureIndex?.();
    const settings = this.services.settings();
    const adapter = this.services.adapterCheckpoint?.(settings) ?? { value: settings.adapterCheckpoint };
    if (adapter.note) this.log.log('warn', adapter.note);
    const { trace, warnings } = await asker.ask(question, settings, {
      adapter: adapter.value,
      // With an LLM its critic and reader answer (each with its no-LLM fallback); without, the rule critic and the extractive reader.
      ...(llm ? { llm } : { critic: 'rule' as const }),
      ...(options.topK !== undefined ? { topK: options.topK } : {}),
      ...(options.maxRounds !== undefined ? { maxRounds: options.maxRounds } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for (const w of warnings) this.log.log('warn', `${w.source}: ${w.message}`);
    const file = await traces.save(trace, traceRetention(settings));
    const name = path.basename(file);
    this.emit({ type: 'answered', operation, question, trace, file, warnings });
    return { trace, name, warnings };
  }

  private emit(event: AgentAnsweredEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        // A listener (an exporter, a view) reports its own failures; the answer stands.
        this.log.log('error', `an agent listener failed on "${event.type}": ${describeError(err).message}`);
      }
    }
  }
}

export interface TraceDetail extends AskForAgentResult {
  createdAt: string;
  settings: { topK: number; maxRounds: number; compressor: string; critic: string; reader: string; encoderId: string; adapterId?: string; llm?: string };
  rounds: Array<{
    round: number;
    query: string;
    retrieved: Array<{ rank: number; file: string; title: string; score: number; repeated: boolean; keptRegions: number; tokens: { whole: number; kept: number } }>;
    critic?: { sufficient: boolean; missing: string[]; followUpQuery?: string; source: string };
  }>;
  regions: EvidenceRegionResult[];
  stop: { reason: string; round: number; note: string };
  totals: AskTrace['totals'];
}

/** What a trace says, without its scored trees: the answer, the rounds, the kept regions and why it stopped. */
export function describeTrace(trace: AskTrace, name: string): TraceDetail {
  const s = trace.settings;
  return {
    ...answerOf(trace, name),
    createdAt: trace.createdAt,
    settings: {
      topK: s.topK,
      maxRounds: s.maxRounds,
      compressor: s.compressor.name,
      critic: s.critic,
      reader: s.reader,
      encoderId: s.encoderId,
      ...(s.adapterId ? { adapterId: s.adapterId } : {}),
      ...(s.llm ? { llm: s.llm.id } : {}),
    },
    rounds: trace.rounds.map((r) => ({
      round: r.round,
      query: r.query,
      retrieved: r.retrieved.map((it) => ({
        rank: it.rank + 1,
        file: it.file,
        title: it.title,
        score: it.scores.fused,
        repeated: it.repeated,
        keptRegions: it.keptNodeIds.length,
        tokens: it.tokens,
      })),
      ...(r.critic ? { critic: { sufficient: r.critic.sufficient, missing: r.critic.missing, ...(r.critic.followUpQuery ? { followUpQuery: r.critic.followUpQuery } : {}), source: r.critic.source } } : {}),
    })),
    regions: keptRegions(trace),
    stop: trace.stop,
    totals: trace.totals,
  };
}
