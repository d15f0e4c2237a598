/**
 * A Canopy trace as OpenTelemetry spans in the OpenInference semantic conventions, so an answer
 * opens in Phoenix, Langfuse or any OTLP backend. A pure mapping (no SDK here; otlpExport.ts
 * writes the spans), tested against real traces.
 *
 *   canopy.ask                      CHAIN      question → answer; settings as metadata
 *   ├─ round N                      CHAIN      the round's query → what it added, the critic's verdict
 *   │  ├─ retrieve                  RETRIEVER  retrieval.documents: every item with its fused score
 *   │  ├─ compress <file>           RERANKER   per fresh item: the scored regions in, the kept ones out
 *   │  │  └─ MAGE controller <file> CHAIN      one event per controller action (utility, budget left)
 *   │  └─ critic                    EVALUATOR  the verdict (with llm.model_name when an LLM judged)
 *   └─ reader                       LLM        reader input and answer, token counts (CHAIN when extractive)
 *
 * Times: the trace records when the question started and how long each round and the whole
 * answer took, not each stage inside a round, so a round's stages share the round's interval
 * and the reader spans from the last round's end to the answer. Token counts are Canopy's own
 * (the trace's tokenizer), not a provider's billing figures; `canopy.token_count.source` says so.
 */
import { MimeType, OpenInferenceSpanKind, SemanticConventions as SC } from '@arizeai/openinference-semantic-conventions';
import { regionText } from '../trace/nodeText';
import type { AskTrace, TraceController, TraceNode, TraceRetrievedItem, TraceRound } from '../../contracts/trace';

export type AttributeValue = string | number | boolean | string[] | number[];

export interface SpanSpec {
  name: string;
  kind: OpenInferenceSpanKind;
  /** Milliseconds since the epoch. */
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  events?: Array<{ name: string; timeMs: number; attributes: Record<string, AttributeValue> }>;
  children: SpanSpec[];
}

export interface OpenInferenceOptions {
  /** Counts the answer's tokens for an LLM reader's completion count (the trace records the prompt's only). */
  countTokens?: (text: string) => number;
  /** At most this many documents per retriever/reranker list (the rest are counted in `canopy.documents.omitted`). Default 200. */
  maxDocuments?: number;
  /** Document contents are cut to this many characters. Default 4000. */
  maxContentChars?: number;
}

const TOKEN_SOURCE = 'canopy.token_count.source';

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `prefix.i.document.*` attributes for a document list (OpenInference flattens lists by index). */
function documents(prefix: string, docs: Array<{ id: string; content: string; score?: number; metadata: Record<string, unknown> }>, options: Required<Pick<OpenInferenceOptions, 'maxDocuments' | 'maxContentChars'>>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  docs.slice(0, options.maxDocuments).forEach((d, i) => {
    const p = `${prefix}.${i}.`;
    out[`${p}${SC.DOCUMENT_ID}`] = d.id;
    out[`${p}${SC.DOCUMENT_CONTENT}`] = clip(d.content, options.maxContentChars);
    if (d.score !== undefined && Number.isFinite(d.score)) out[`${p}${SC.DOCUMENT_SCORE}`] = d.score;
    out[`${p}${SC.DOCUMENT_METADATA}`] = JSON.stringify(d.metadata);
  });
  if (docs.length > options.maxDocuments) out['canopy.documents.omitted'] = docs.length - options.maxDocuments;
  return out;
}

function walk(node: TraceNode, visit: (n: TraceNode) => void): void {
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    visit(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
}

function json(value: unknown): { value: string; mime: MimeType } {
  return { value: JSON.stringify(value), mime: MimeType.JSON };
}

function io(input: { value: string; mime: MimeType } | string, output?: { value: string; mime: MimeType } | string): Record<string, AttributeValue> {
  const i = typeof input === 'string' ? { value: input, mime: MimeType.TEXT } : input;
  const out: Record<string, AttributeValue> = { [SC.INPUT_VALUE]: i.value, [SC.INPUT_MIME_TYPE]: i.mime };
  if (output !== undefined) {
    const o = typeof output === 'string' ? { value: output, mime: MimeType.TEXT } : output;
    out[SC.OUTPUT_VALUE] = o.value;
    out[SC.OUTPUT_MIME_TYPE] = o.mime;
  }
  return out;
}

function retrieverSpan(round: TraceRound, startMs: number, endMs: number, limits: Required<Pick<OpenInferenceOptions, 'maxDocuments' | 'maxContentChars'>>, trace: AskTrace): SpanSpec {
  const docs = round.retrieved.map((it) => ({
    id: it.itemId,
    content: it.tree ? `${it.title}\n${regionText(it.tree)}` : it.title,
    score: it.scores.fused,
    metadata: {
      file: it.file,
      title: it.title,
      rank: it.rank + 1,
      modality: it.modality,
      repeated: it.repeated,
      ...(it.scores.dense !== undefined ? { dense: it.scores.dense } : {}),
      ...(it.scores.bm25 !== undefined ? { bm25: it.scores.bm25 } : {}),
      ...(it.scores.topic !== undefined ? { topic: it.scores.topic } : {}),
    },
  }));
  const r = trace.settings.retrieval;
  return {
    name: 'retrieve',
    kind: OpenInferenceSpanKind.RETRIEVER,
    startMs,
    endMs,
    attributes: {
      ...io(round.query),
      ...documents(SC.RETRIEVAL_DOCUMENTS, docs, limits),
      [SC.EMBEDDING_MODEL_NAME]: trace.settings.encoderId,
      [SC.METADATA]: JSON.stringify({
        topK: trace.settings.topK,
        dense: r.dense,
        bm25: r.bm25,
        topics: r.topics,
        fusion: r.fusion,
        rrfK: r.rrfK,
        routing: round.routing,
        ...(round.topics ? { topics: { k: round.topics.k, selected: round.topics.selected.map((t) => ({ topic: t.topic, label: t.label, weight: t.weight })) } } : {}),
      }),
    },
    children: [],
  };
}

function controllerSpan(c: TraceController, startMs: number, endMs: number): SpanSpec {
  const span = endMs - startMs;
  const n = Math.max(1, c.steps.length);
  return {
    name: `MAGE controller ${c.file}`,
    kind: OpenInferenceSpanKind.CHAIN,
    startMs,
    endMs,
    attributes: {
      ...io(
        json({ file: c.file, evaluator: c.evaluator, budgets: c.budgets }),
        json({ stop: c.stop, opened: c.subgraph.nodes.filter((x) => x.state === 'opened').map((x) => x.id), pruned: c.subgraph.nodes.filter((x) => x.state === 'pruned').map((x) => x.id) }),
      ),
      ...(c.evaluator.kind === 'llm' && c.evaluator.model ? { [SC.LLM_MODEL_NAME]: c.evaluator.model } : {}),
      'canopy.controller.steps': c.steps.length,
      'canopy.controller.validation_errors': c.validationErrors?.length ?? 0,
    },
    // Steps carry no time of their own: spread evenly over the span, in order.
    events: c.steps.map((s, i) => ({
      name: s.action.type,
      timeMs: startMs + (span * i) / n,
      attributes: {
        'canopy.step': s.step,
        'canopy.iteration': s.iteration,
        'canopy.decided_by': s.decidedBy,
        'canopy.valid': s.valid,
        ...(s.utility !== undefined ? { 'canopy.utility': s.utility } : {}),
        ...(s.why ? { 'canopy.why': s.why } : {}),
        ...(s.error ? { 'canopy.error': s.error } : {}),
        'canopy.action': JSON.stringify(s.action),
        'canopy.budget_left': JSON.stringify(s.budgetLeft),
      },
    })),
    children: [],
  };
}

function compressionSpan(it: TraceRetrievedItem, round: TraceRound, startMs: number, endMs: number, limits: Required<Pick<OpenInferenceOptions, 'maxDocuments' | 'maxContentChars'>>, trace: AskTrace): SpanSpec {
  const kept = new Set(it.keptNodeIds);
  const scored: TraceNode[] = [];
  const byId = new Map<string, TraceNode>();
  if (it.tree) {
    walk(it.tree, (n) => {
      byId.set(n.id, n);
      if (n.decision !== 'not-visited') scored.push(n);
    });
  }
  const doc = (n: TraceNode) => ({
    id: n.id,
    content: regionText(n),
    ...(n.score !== undefined ? { score: n.score } : {}),
    metadata: {
      file: n.anchor.file,
      kind: n.kind,
      decision: kept.has(n.id) ? (n.decision === 'descend' ? 'kept' : n.decision) : n.decision,
      rule: n.rule,
      tokens: n.tokens,
      ...(n.parentScore !== undefined ? { parentScore: n.parentScore } : {}),
      ...(n.anchor.startLine !== undefined ? { startLine: n.anchor.startLine, endLine: n.anchor.endLine } : {}),
      ...(n.anchor.page !== undefined ? { page: n.anchor.page + 1 } : {}),
      ...(n.anchor.row !== undefined ? { row: n.anchor.row + 1 } : {}),
    },
  });
  const keptNodes = it.keptNodeIds.map((id) => byId.get(id)).filter((n): n is TraceNode => n !== undefined);
  const c = trace.settings.compressor;
  const model = c.name === 'canopy' ? `canopy-projection B=${trace.settings.branchingFactor}` : c.name === 'flat' ? `flat top-${c.m}` : c.name === 'threshold' ? `threshold ${c.threshold}` : 'none';
  const dropped = scored.filter((n) => n.decision === 'dropped-sibling' || n.decision === 'dropped-by-baseline').length;
  const input = documents(SC.RERANKER_INPUT_DOCUMENTS, scored.map(doc), limits);
  const output = documents(SC.RERANKER_OUTPUT_DOCUMENTS, keptNodes.map(doc), limits);
  const omitted = (Number(input['canopy.documents.omitted']) || 0) + (Number(output['canopy.documents.omitted']) || 0);
  return {
    name: `compress ${it.file}`,
    kind: OpenInferenceSpanKind.RERANKER,
    startMs,
    endMs,
    attributes: {
      ...input,
      ...output,
      ...(omitted > 0 ? { 'canopy.documents.omitted': omitted } : {}),
      [SC.RERANKER_QUERY]: round.query,
      [SC.RERANKER_MODEL_NAME]: model,
      [SC.RERANKER_TOP_K]: keptNodes.length,
      ...io(json({ itemId: it.itemId, file: it.file, title: it.title, rank: it.rank + 1 }), json({ kept: keptNodes.length, dropped, tokens: it.tokens })),
      'canopy.item.id': it.itemId,
      'canopy.tokens.whole': it.tokens.whole,
      'canopy.tokens.kept': it.tokens.kept,
      'canopy.regions.kept': keptNodes.length,
      'canopy.regions.dropped': dropped,
    },
    children: it.controller ? [controllerSpan(it.controller, startMs, endMs)] : [],
  };
}

/** The span tree of one answer. */
export function traceToSpans(trace: AskTrace, options: OpenInferenceOptions = {}): SpanSpec {
  const limits = { maxDocuments: options.maxDocuments ?? 200, maxContentChars: options.maxContentChars ?? 4000 };
  const start = Date.parse(trace.createdAt);
  if (!Number.isFinite(start)) throw new Error(`trace ${trace.id} has no valid createdAt (${trace.createdAt})`);
  const end = start + Math.max(0, trace.ms);
  const s = trace.settings;
  const tokenizer = s.tokenizer;

  let cursor = start;
  const rounds: SpanSpec[] = trace.rounds.map((round) => {
    const rs = Math.min(cursor, end);
    const re = Math.min(rs + Math.max(0, round.ms), end);
    cursor = re;
    const children: SpanSpec[] = [retrieverSpan(round, rs, re, limits, trace)];
    for (const it of round.retrieved) if (!it.repeated && it.tree) children.push(compressionSpan(it, round, rs, re, limits, trace));
    if (round.critic) {
      const c = round.critic;
      const llm = c.source === 'llm' && s.llm ? s.llm.id : undefined;
      children.push({
        name: 'critic',
        kind: OpenInferenceSpanKind.EVALUATOR,
        startMs: rs,
        endMs: re,
        attributes: {
          ...io(json({ question: trace.question, round: round.round }), json({ sufficient: c.sufficient, missing: c.missing, ...(c.followUpQuery ? { followUpQuery: c.followUpQuery } : {}) })),
          'canopy.critic.source': c.source,
          'canopy.critic.sufficient': c.sufficient,
          ...(llm ? { [SC.LLM_MODEL_NAME]: llm } : {}),
        },
        children: [],
      });
    }
    return {
      name: `round ${round.round}`,
      kind: OpenInferenceSpanKind.CHAIN,
      startMs: rs,
      endMs: re,
      attributes: {
        ...io(round.query, json({ added: round.addedItemIds, ...(round.critic ? { sufficient: round.critic.sufficient, followUpQuery: round.critic.followUpQuery ?? null } : {}) })),
        'canopy.round': round.round,
      },
      children,
    };
  });

  const a = trace.answer;
  const prompt = trace.readerInput.tokens;
  const readerAttrs: Record<string, AttributeValue> = {
    ...io(trace.readerInput.text, a.text),
    'canopy.reader.mode': a.mode,
    'canopy.reader.truncated': trace.readerInput.truncated,
    'canopy.citations': a.citations.length,
    [SC.LLM_TOKEN_COUNT_PROMPT]: prompt,
    [TOKEN_SOURCE]: `canopy:${tokenizer}`,
  };
  if (a.mode === 'llm') {
    readerAttrs[SC.LLM_MODEL_NAME] = a.model ?? s.llm?.id ?? 'unknown';
    readerAttrs[`${SC.LLM_INPUT_MESSAGES}.0.${SC.MESSAGE_ROLE}`] = 'user';
    readerAttrs[`${SC.LLM_INPUT_MESSAGES}.0.${SC.MESSAGE_CONTENT}`] = trace.readerInput.text;
    readerAttrs[`${SC.LLM_OUTPUT_MESSAGES}.0.${SC.MESSAGE_ROLE}`] = 'assistant';
    readerAttrs[`${SC.LLM_OUTPUT_MESSAGES}.0.${SC.MESSAGE_CONTENT}`] = a.text;
    if (options.countTokens) {
      const completion = options.countTokens(a.text);
      readerAttrs[SC.LLM_TOKEN_COUNT_COMPLETION] = completion;
      readerAttrs[SC.LLM_TOKEN_COUNT_TOTAL] = prompt + completion;
    }
  }
  const reader: SpanSpec = {
    name: a.mode === 'llm' ? 'reader' : 'reader (extractive)',
    kind: a.mode === 'llm' ? OpenInferenceSpanKind.LLM : OpenInferenceSpanKind.CHAIN,
    startMs: Math.min(cursor, end),
    endMs: end,
    attributes: readerAttrs,
    children: [],
  };

  return {
    name: 'canopy.ask',
    kind: OpenInferenceSpanKind.CHAIN,
    startMs: start,
    endMs: end,
    attributes: {
      ...io(trace.question, a.text),
      'canopy.trace.id': trace.id,
      'canopy.stop.reason': trace.stop.reason,
      'canopy.stop.note': trace.stop.note,
      'canopy.tokens.evidence': trace.totals.evidenceTokens,
      'canopy.tokens.uncompressed': trace.totals.uncompressedTokens,
      'canopy.regions.kept': trace.totals.keptRegions,
      [SC.TAG_TAGS]: ['canopy', a.mode === 'llm' ? 'llm-reader' : 'extractive-reader', ...(trace.replay ? ['replay'] : [])],
      [SC.METADATA]: JSON.stringify({
        settings: { ...s, llm: s.llm?.id },
        index: trace.index,
        ...(trace.replay ? { replayOf: trace.replay.of } : {}),
      }),
    },
    children: [...rounds, reader],
  };
}

/** Every span of a tree, parents before children. */
export function flattenSpans(root: SpanSpec): SpanSpec[] {
  const out: SpanSpec[] = [];
  const visit = (s: SpanSpec) => {
    out.push(s);
    s.children.forEach(visit);
  };
  visit(root);
  return out;
}
