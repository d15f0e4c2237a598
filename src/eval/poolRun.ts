/**
 * The open-pool mode: each question goes through the real ask pipeline (`ask()`: hybrid
 * retrieval over the cached pool index, the configuration's compressor, critic rounds) and the
 * returned trace is scored — round-1 ranking for the retrieval metrics, the items each round
 * added and the regions kept for evidence recall by round, tokens, refinement decisions. The
 * peer runs vectra's document index over the same pool at the token budget of the configuration
 * it is paired with.
 */
import { join } from 'node:path';
import { ask, type AskOptions } from '../core/engine/ask';
import { leavesOf, type KeptByItem } from '../core/compress/baselines';
import type { NodeVerdict } from '../core/compress/projection';
import type { NodeScoreWeights } from '../core/compress/hybridScore';
import type { NodeAdapter } from '../core/compress/nodeScorer';
import type { TokenCounter } from '../core/compress/tokens';
import type { Critic } from '../core/critic/critic';
import { throwIfCancelled } from '../core/errors';
import type { Item, RegionNode } from '../contracts/region';
import { ExtractiveReader } from '../core/read/extractiveReader';
import type { Reader, ReaderInput } from '../core/read/reader';
import { HybridRetriever } from '../core/retrieve/hybrid';
import { retrievalRecord, type FusionSetting } from '../core/retrieve/profile';
import type { Retriever } from '../core/retrieve/retriever';
import type { AskTrace, TraceNode } from '../contracts/trace';
import { bestAnswerScores, normalizeAnswer } from './answers';
import { pipelineCompressor, type RunConfig } from './configs';
import type { EvalQuestion, GoldUnit } from './datasets/types';
import type { EvalEmbeddings } from './embeddings';
import type { ResolvedGold } from './gold';
import { containedLeaves } from './given';
import { answerIn, eligibleAnswers, evaluateKept, type Outcome } from './outcome';
import { JUDGE_DUMP_SCHEMA, serializeRegion, type JudgeDumpWriter } from './judgeDump';
import { VectraPeer } from './peer';
import type { PoolIndex } from './poolIndex';

export interface PoolDeps {
  embeddings: EvalEmbeddings;
  tokens: TokenCounter;
  pool: PoolIndex;
  retrieval: { dense: boolean; bm25: boolean; fusion: FusionSetting };
  /** The critic for configurations with rounds. */
  critic: (config: RunConfig) => Critic | undefined;
  /** A reader that answers in a few words (EM/F1); the extractive reader otherwise. */
  reader?: Reader;
  peer: { chunkSize: number; bm25: boolean };
  onQuestion?: (done: number, total: number) => void;
  logger?: (message: string) => void;
  signal?: AbortSignal;
  /** A configuration's own retriever (the topic-compass variants, topicsAblation.ts); the shared one otherwise. */
  retrieverFor?: (config: RunConfig) => Retriever | undefined;
  /** A trained node-encoder adapter (`--adapter`) for the pipeline's node scores. */
  adapter?: { id: string; adapter: NodeAdapter };
  /** Node score weights for every configuration (`--node-score`); the dense cosine otherwise. */
  nodeScore?: NodeScoreWeights;
  /** Write each question's reader input, gold and critic verdicts of the first configuration (`--dump-judge`). */
  dump?: { writer: JudgeDumpWriter; dataset: string };
}

export interface PoolDiagnostics {
  unresolvedGold: number;
  peerChunks?: number;
  peerBm25Skipped: number;
  askMs: Record<string, number[]>;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Gold units of a question on the pool items that made it into the evidence. Units of documents not retrieved count, uncovered. */
export function resolvePoolGold(units: GoldUnit[], poolIdOf: ReadonlyMap<string, string> | undefined, items: Item[], docOfItem: ReadonlyMap<string, string>): { gold: ResolvedGold[]; unresolved: number } {
  const byDoc = new Map<string, Item>();
  for (const it of items) {
    const d = docOfItem.get(it.id);
    if (d !== undefined) byDoc.set(d, it);
  }
  const gold: ResolvedGold[] = [];
  let unresolved = 0;
  units.forEach((u, k) => {
    const docId = poolIdOf?.get(u.source);
    if (docId === undefined || u.granularity === 'row' || u.granularity === 'page' || u.granularity === 'anchor') {
      unresolved++;
      return;
    }
    const kind = u.granularity === 'paragraph' ? 'paragraph' : 'sentence';
    const mode = u.granularity === 'paragraph' ? 'any' : 'all';
    const item = byDoc.get(docId);
    if (!item) {
      gold.push({ kind, itemIds: [], leafIds: [`absent:${docId}:${k}`], mode });
      return;
    }
    const leaves = leavesOf(item.root);
    let picked: RegionNode[];
    if (u.granularity === 'sentence') {
      const want = u.text !== undefined ? squash(u.text) : undefined;
      const byText = want ? leaves.filter((l) => squash(l.text) === want) : [];
      picked = byText.length > 0 ? byText.slice(0, 1) : leaves[u.index] ? [leaves[u.index]!] : [];
    } else if (u.granularity === 'span') {
      picked = leaves.filter((l) => l.anchor.charStart !== undefined && l.anchor.charEnd !== undefined && l.anchor.charStart < u.end && u.start < l.anchor.charEnd);
    } else picked = leaves;
    if (picked.length === 0) {
      unresolved++;
      return;
    }
    gold.push({ kind, itemIds: [item.id], leafIds: picked.map((l) => l.id), mode });
  });
  return { gold, unresolved };
}

function verdictsFromTree(tree: TraceNode | undefined): NodeVerdict[] {
  const out: NodeVerdict[] = [];
  const walk = (n: TraceNode, depth: number) => {
    if (n.decision === 'descend' || n.decision === 'keep-whole' || n.decision === 'dropped-sibling') {
      out.push({ nodeId: n.id, decision: n.decision, rule: n.rule as NodeVerdict['rule'], depth });
    }
    n.children.forEach((c) => walk(c, depth + 1));
  };
  if (tree) walk(tree, 0);
  return out;
}

function nodesById(root: RegionNode): Map<string, RegionNode> {
  const m = new Map<string, RegionNode>();
  const walk = (n: RegionNode) => {
    m.set(n.id, n);
    n.children.forEach(walk);
  };
  walk(root);
  return m;
}

function contextAnswers(q: EvalQuestion): string[] {
  const text = q.context
    .map((c) => (c.kind === 'sentences' ? c.sentences.join('') : c.kind === 'text' ? c.text : c.kind === 'table' ? c.rows.map((r) => r.join(' | ')).join('\n') : ''))
    .join('\n');
  return eligibleAnswers(q.answers, q.answersAllRequired ?? false, normalizeAnswer(text));
}

export async function runPool(questions: EvalQuestion[], configs: RunConfig[], deps: PoolDeps): Promise<{ outcomes: Outcome[][]; diagnostics: PoolDiagnostics }> {
  const { pool } = deps;
  const outcomes: Outcome[][] = configs.map(() => []);
  const diagnostics: PoolDiagnostics = { unresolvedGold: 0, peerBm25Skipped: 0, askMs: {} };
  const retriever = new HybridRetriever(pool.corpus, deps.embeddings.embedQuery, deps.retrieval);
  const extractive = new ExtractiveReader();
  let peer: VectraPeer | undefined;
  if (configs.some((c) => c.compressor.name === 'peer')) {
    const folder = join(pool.dir, `peer-c${deps.peer.chunkSize}`);
    const embed = { embedTexts: (t: string[]) => deps.embeddings.embedTexts(t, deps.signal) };
    if (await VectraPeer.isBuilt(folder)) peer = await VectraPeer.open(folder, embed, { chunkSize: deps.peer.chunkSize });
    else {
      deps.logger?.(`peer: vectra LocalDocumentIndex over ${pool.docs.size} documents (chunk ${deps.peer.chunkSize} tokens; first run, cached afterwards)`);
      peer = await VectraPeer.create(folder, embed, { chunkSize: deps.peer.chunkSize });
      await peer.addBulk([...pool.docs.values()].map((d) => ({ id: d.id, text: d.text })));
      await deps.embeddings.save();
    }
    diagnostics.peerChunks = await peer.chunkCount;
  }
  const order = configs.map((c, i) => ({ c, i })).sort((a, b) => Number(a.c.compressor.name === 'peer') - Number(b.c.compressor.name === 'peer'));

  for (let qi = 0; qi < questions.length; qi++) {
    throwIfCancelled(deps.signal);
    const q = questions[qi]!;
    const answers = contextAnswers(q);
    const tokensById = new Map<string, number>();
    let unresolvedCounted = false;
    for (const { c, i } of order) {
      let outcome: Outcome;
      if (c.compressor.name === 'peer') {
        const ref = configs.find((x) => x.id === (c.compressor as { budgetFrom: string }).budgetFrom);
        const budget = ref ? (tokensById.get(ref.id) ?? 0) : 0;
        const { hits, rendered } = await peer!.retrieveAndRender(q.question, budget, { maxDocuments: c.topK, maxChunks: 50, bm25: deps.peer.bm25 });
        const items = await Promise.all(hits.filter((h) => pool.itemOfDoc.has(h.id)).map((h) => pool.corpus.item(pool.itemOfDoc.get(h.id)!)));
        const byItem = new Map<string, string>();
        for (const r of rendered) {
          const id = pool.itemOfDoc.get(r.id);
          if (id) byItem.set(id, `${byItem.get(id) ?? ''}\n${r.text}`);
        }
        const kept = containedLeaves(items, byItem);
        const { gold } = resolvePoolGold(q.gold, q.poolIdOf, items, pool.docOfItem);
        outcome = evaluateKept({ items, kept, gold, answers, answersAllRequired: q.answersAllRequired ?? false, tokens: deps.tokens });
        outcome.tokens = rendered.reduce((a, r) => a + deps.tokens.count(r.text), 0);
        outcome.regions = rendered.length;
        outcome.items = byItem.size;
        outcome.wholeItems = items.filter((it) => byItem.has(it.id) && squash(byItem.get(it.id)!).includes(squash(it.root.text))).length;
        if (answers.length > 0) outcome.answerKept = answerIn(answers, q.answersAllRequired ?? false, rendered.map((r) => r.text).join('\n'));
        const ranked = hits.map((h) => h.id);
        outcome.retrieval = { ranked, retrievedByRound: [ranked], evidenceByRound: [[...new Set(rendered.map((r) => r.id))]], rounds: 1, stop: 'peer' };
      } else {
        const started = Date.now();
        const own = deps.retrieverFor?.(c);
        const options: AskOptions = {
          topK: c.topK,
          maxRounds: c.rounds,
          branchingFactor: c.branching,
          compressor: pipelineCompressor(c),
          readerTokenCap: 16000,
          encoderId: deps.embeddings.id,
          ...(deps.adapter ? { adapterId: deps.adapter.id } : {}),
          retrieval: retrievalRecord(deps.retrieval, own !== undefined),
          ...(deps.nodeScore ? { nodeScore: deps.nodeScore } : {}),
        };
        const critic = c.rounds > 1 ? deps.critic(c) : undefined;
        const baseReader = deps.reader ?? extractive;
        let readerInput: ReaderInput | undefined;
        const dumping = deps.dump && c === configs.find((x) => x.compressor.name !== 'peer');
        const reader: Reader = dumping
          ? { mode: baseReader.mode, answer: (question, input, signal) => ((readerInput = input), baseReader.answer(question, input, signal)) }
          : baseReader;
        const trace = await ask(
          q.question,
          options,
          {
            retriever: own ?? retriever,
            embedQuery: deps.embeddings.embedQuery,
            embedTexts: deps.embeddings.embedTexts,
            ...(deps.adapter ? { adapter: deps.adapter.adapter } : {}),
            ...(critic ? { critic } : {}),
            reader,
            tokens: deps.tokens,
            index: { root: pool.dir, generation: pool.corpus.generation, items: pool.corpus.itemCount },
            newId: () => `${q.id}-${c.id}`,
          },
          deps.signal,
        );
        (diagnostics.askMs[c.id] ??= []).push(Date.now() - started);
        const r = await scoreTrace(trace, q, answers, pool, deps.tokens);
        outcome = r.outcome;
        if (dumping && readerInput) {
          deps.dump!.writer.write({
            schema: JUDGE_DUMP_SCHEMA,
            dataset: deps.dump!.dataset,
            questionId: q.id,
            question: q.question,
            answers,
            ...(q.answersAllRequired ? { allRequired: true } : {}),
            gold: r.gold.map((g) => ({ leafIds: g.leafIds, mode: g.mode })),
            retrieval: true,
            regions: readerInput.regions.map(serializeRegion),
            rounds: trace.rounds.map((round) => ({ round: round.round, query: round.query, added: round.addedItemIds, ...(round.critic ? { critic: round.critic } : {}) })),
            stop: { reason: trace.stop.reason, round: trace.stop.round },
            ...(readerInput.truncated ? { truncated: true } : {}),
          });
        }
        if (!unresolvedCounted) {
          diagnostics.unresolvedGold += r.unresolved;
          unresolvedCounted = true;
        }
        if (deps.reader && q.answers.length > 0) outcome.reader = bestAnswerScores(trace.answer.text, q.answers);
      }
      tokensById.set(c.id, outcome.tokens);
      outcomes[i]![qi] = outcome;
    }
    deps.onQuestion?.(qi + 1, questions.length);
  }
  if (peer) diagnostics.peerBm25Skipped = peer.bm25Skipped;
  return { outcomes, diagnostics };
}

/** A trace → the outcome: evidence items of all rounds, their kept regions, retrieval by round. */
export async function scoreTrace(trace: AskTrace, q: EvalQuestion, answers: string[], pool: PoolIndex, tokens: TokenCounter): Promise<{ outcome: Outcome; unresolved: number; gold: ResolvedGold[] }> {
  const items: Item[] = [];
  const kept: KeptByItem = new Map();
  const verdicts = new Map<string, NodeVerdict[]>();
  const retrievedByRound: string[][] = [];
  const evidenceByRound: string[][] = [];
  const retrieved = new Set<string>();
  const evidence = new Set<string>();
  for (const round of trace.rounds) {
    for (const r of round.retrieved) {
      if (r.repeated) continue;
      const item = await pool.corpus.item(r.itemId);
      const byId = nodesById(item.root);
      items.push(item);
      kept.set(item.id, r.keptNodeIds.map((id) => byId.get(id)).filter((n): n is RegionNode => n !== undefined));
      verdicts.set(item.id, verdictsFromTree(r.tree));
      const doc = pool.docOfItem.get(item.id) ?? item.id;
      retrieved.add(doc);
      if (r.keptNodeIds.length > 0) evidence.add(doc);
    }
    retrievedByRound.push([...retrieved]);
    evidenceByRound.push([...evidence]);
  }
  const { gold, unresolved } = resolvePoolGold(q.gold, q.poolIdOf, items, pool.docOfItem);
  const outcome = evaluateKept({ items, kept, verdicts, gold, answers, answersAllRequired: q.answersAllRequired ?? false, tokens });
  const first = trace.rounds[0];
  const ranked = first ? first.candidates.map((c) => pool.docOfItem.get(c.itemId) ?? c.itemId) : [];
  const judged = trace.rounds.filter((r) => r.critic).map((r) => r.critic!.sufficient);
  outcome.retrieval = { ranked, retrievedByRound, evidenceByRound, rounds: trace.rounds.length, stop: trace.stop.reason, ...(judged.length > 0 ? { sufficientByRound: judged } : {}) };
  return { outcome, unresolved, gold };
}
