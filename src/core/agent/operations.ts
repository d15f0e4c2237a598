/**
 * What an agent can ask of a Canopy workspace, independent of the host that exposes it: the
 * VS Code language-model tools and @canopy chat participant (src/extension) and the MCP server
 * (src/cli/mcp) call these functions and only format their results. They reach the workspace
 * through its public methods (`ask`, `saveTrace`, `listTraces`, `readTrace`) and nothing else,
 * and every question they answer leaves a saved trace a person can open in the Evidence Inspector.
 *
 * - searchEvidence: question → the kept regions (exact citations, scores) and the trace id. It
 *   runs the whole evidence pipeline (hybrid retrieval, CANOPY compression, rule-critic rounds)
 *   with no LLM: the agent asking is the reader.
 * - askForAgent: question → the answer with its citations (extractive, or the LLM given).
 * - getTrace / summarizeTrace / listQuestions: saved answers.
 */
import * as path from 'node:path';
import type { AskRequest, CanopyWorkspace, SavedTraceSummary } from '../app/workspace';
import { CanopyError, ErrorCodes } from '../errors';
import type { ChatModel } from '../llm/llm';
import type { AskTrace, TraceNode, TraceRetrievedItem } from '../../contracts/trace';
import { regionText } from '../trace/nodeText';
import { citationOf, type AgentCitation } from './citations';

/** The workspace methods the agent operations use (a CanopyWorkspace, or anything shaped like it). */
export type AgentWorkspace = Pick<CanopyWorkspace, 'ask' | 'saveTrace' | 'listTraces' | 'readTrace'>;

export interface AgentAskOptions {
  /** Items retrieved per round (default: the workspace's setting). */
  topK?: number;
  /** Most critic rounds (default: the workspace's setting). */
  maxRounds?: number;
  /** A node-encoder adapter checkpoint, or '' for none (default: the workspace's setting). */
  adapter?: string;
  signal?: AbortSignal;
  /** Called with every trace saved, e.g. to export it (OpenInference). Its failure never fails the question. */
  onTrace?: (trace: AskTrace, file: string) => Promise<void> | void;
}

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
}

function requireQuestion(question: unknown): string {
  if (typeof question !== 'string' || !question.trim()) throw new CanopyError(ErrorCodes.badInput, 'the question is empty');
  if (question.length > 4000) throw new CanopyError(ErrorCodes.badInput, `the question is ${question.length} characters long; at most 4000`);
  return question.trim();
}

async function askAndSave(workspace: AgentWorkspace, question: string, request: AskRequest, options: AgentAskOptions): Promise<{ trace: AskTrace; name: string }> {
  const trace = await workspace.ask(question, {
    ...request,
    ...(options.topK !== undefined ? { topK: options.topK } : {}),
    ...(options.maxRounds !== undefined ? { maxRounds: options.maxRounds } : {}),
    ...(options.adapter !== undefined ? { adapter: options.adapter } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const file = await workspace.saveTrace(trace);
  if (options.onTrace) {
    try {
      await options.onTrace(trace, file);
    } catch {
      // The hook reports its own failures (an exporter logs them); the answer stands.
    }
  }
  return { trace, name: path.basename(file) };
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

/**
 * Searches the workspace's index for evidence on a question: the full evidence pipeline with
 * the rule critic and no LLM, the trace saved. `maxRegions` caps how many regions are listed
 * (default 20; the trace keeps all).
 */
export async function searchEvidence(workspace: AgentWorkspace, question: string, options: AgentAskOptions & { maxRegions?: number } = {}): Promise<SearchEvidenceResult> {
  const q = requireQuestion(question);
  const maxRegions = options.maxRegions ?? 20;
  if (!Number.isInteger(maxRegions) || maxRegions < 1) throw new CanopyError(ErrorCodes.badInput, `maxRegions must be a positive integer, not ${maxRegions}`);
  const { trace, name } = await askAndSave(workspace, q, { critic: 'rule' }, options);
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
  };
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

/**
 * Answers a question with citations: the LLM given (the critic and reader use it, each falling
 * back to its no-LLM twin when a call fails), else the extractive reader and the rule critic.
 */
export async function askForAgent(workspace: AgentWorkspace, question: string, options: AgentAskOptions & { llm?: ChatModel } = {}): Promise<AskForAgentResult> {
  const q = requireQuestion(question);
  const { trace, name } = await askAndSave(workspace, q, options.llm ? { llm: options.llm } : { critic: 'rule' }, options);
  return answerOf(trace, name);
}

/** Saved questions, newest first, at most `limit`. */
export async function listQuestions(workspace: AgentWorkspace, limit = 50): Promise<SavedTraceSummary[]> {
  if (!Number.isInteger(limit) || limit < 1) throw new CanopyError(ErrorCodes.badInput, `limit must be a positive integer, not ${limit}`);
  return (await workspace.listTraces()).slice(0, limit);
}

/** A saved trace by its id or its file name; CanopyError(E_NOT_FOUND) when there is none. */
export async function getTrace(workspace: AgentWorkspace, ref: string): Promise<{ trace: AskTrace; name: string }> {
  const key = typeof ref === 'string' ? ref.trim() : '';
  if (!key) throw new CanopyError(ErrorCodes.badInput, 'a trace id or file name is needed');
  const saved = await workspace.listTraces();
  const hit = saved.find((s) => s.id === key || s.name === key);
  if (!hit) throw new CanopyError(ErrorCodes.notFound, `no saved trace with the id or name "${key}" (list_questions lists them)`);
  return { trace: await workspace.readTrace(hit.name), name: hit.name };
}

export interface TraceSummary extends AskForAgentResult {
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
export function summarizeTrace(trace: AskTrace, name: string): TraceSummary {
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
