/**
 * The given-items mode: a question's own context (its paragraphs, table, PDF pages) is the set
 * of retrieved items, so compression is measured on its own. Per question and branching factor
 * the items are built once and every node scored once (through the pipeline's `nodeVectors` /
 * `scoreNodes` and the embedding cache); each configuration is one round of the round engine
 * (src/core/engine) over those items and scores; the peer renders vectra's sections at the
 * budget of the configuration it is paired with.
 */
import { join } from 'node:path';
import { fixedScores, givenItems } from '../core/engine/fixed';
import { runRounds } from '../core/engine/rounds';
import type { KeptByItem } from '../core/compress/baselines';
import { leavesOf } from '../core/compress/baselines';
import { fuseNodeScores, isDenseOnly, lexicalScores, type NodeScoreComponents, type NodeScoreWeights } from '../core/compress/hybridScore';
import { scoreNodes, type NodeAdapter } from '../core/compress/nodeScorer';
import { nodeVectors } from '../core/encode/nodeVectors';
import { routeQuestion } from '../core/compress/router';
import type { TokenCounter } from '../core/compress/tokens';
import { throwIfCancelled } from '../core/errors';
import type { Item, RegionNode } from '../contracts/region';
import { bestAnswerScores, normalizeAnswer } from './answers';
import { pipelineCompressor, type RunConfig } from './configs';
import type { EvalQuestion } from './datasets/types';
import type { EvalEmbeddings } from './embeddings';
import { resolveGold, type ResolvedGold } from './gold';
import { buildContext, ParsedFileCache, type BuiltSource } from './items';
import { answerIn, eligibleAnswers, evaluateKept, regionText, type Outcome } from './outcome';
import { JUDGE_DUMP_SCHEMA, serializeRegion, type JudgeDumpWriter } from './judgeDump';
import { VectraPeer } from './peer';
import { buildReaderInput } from '../core/read/reader';

/** The reader's default token cap (canopy.readerTokenCap), for the reader input a dump records. */
const READER_CAP = 16000;
import { nodeVectorsChildren, nodeVectorsEncodedGroups, nodeVectorsFromText, nodeVectorsPrefix } from './variants';

export interface GivenDeps {
  embeddings: EvalEmbeddings;
  tokens: TokenCounter;
  /** Scratch folder for the peer's per-question vectra index. */
  scratchDir: string;
  peerChunkSize: number;
  /** An LLM reader's answer from the kept regions (EM/F1); absent without an LLM. */
  read?: (question: string, regions: Array<{ item: Item; node: RegionNode; score: number }>) => Promise<string>;
  onQuestion?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** A trained node-encoder adapter (`--adapter`), applied to node vectors before scoring. */
  adapter?: NodeAdapter;
  /** Node score weights (dense cosine and lexical evidence); the dense cosine alone when absent. */
  nodeScore?: NodeScoreWeights;
  /** Write each question's reader input and gold for the first CANOPY configuration (`--dump-judge`). */
  dump?: { writer: JudgeDumpWriter; dataset: string };
}

export interface GivenDiagnostics {
  /** Leaf scores seen (a sample), for choosing thresholds that are not tuned to single questions. */
  leafScores: number[];
  unresolvedGold: number;
  encodedTexts: number;
  peerBm25Skipped: number;
}

/** Which node vectors a configuration scores with: the product's, or a measured variant (variants.ts). */
type VectorVariant = 'product' | 'groups=encoded' | 'nodes=text' | 'nodes=prefix' | 'nodes=children';

interface PerB {
  sources: BuiltSource[];
  items: Item[];
  gold: ResolvedGold[];
  scores: Map<VectorVariant, Map<string, number>>;
  /** The product scores' components (dense, lexical) when the node score is hybrid. */
  components?: Map<string, NodeScoreComponents>;
}

export async function runGiven(questions: EvalQuestion[], configs: RunConfig[], deps: GivenDeps): Promise<{ outcomes: Outcome[][]; diagnostics: GivenDiagnostics }> {
  const outcomes: Outcome[][] = configs.map(() => []);
  const files = new ParsedFileCache();
  const diagnostics: GivenDiagnostics = { leafScores: [], unresolvedGold: 0, encodedTexts: 0, peerBm25Skipped: 0 };
  const branchings = [...new Set(configs.map((c) => c.branching))];
  const order = configs.map((c, i) => ({ c, i })).sort((a, b) => Number(a.c.compressor.name === 'peer') - Number(b.c.compressor.name === 'peer'));
  const encodedBefore = deps.embeddings.encoded;

  for (let qi = 0; qi < questions.length; qi++) {
    throwIfCancelled(deps.signal);
    const q = questions[qi]!;
    const prefix = `q${qi}`;
    const queryVector = await deps.embeddings.embedQuery(q.question, deps.signal);
    const routing = routeQuestion(q.question);
    const perB = new Map<number, PerB>();
    for (const b of branchings) {
      const sources = await buildContext(q.context, prefix, b, files);
      const items = sources.flatMap((s) => s.items);
      const { gold, unresolved } = resolveGold(q.gold, sources);
      if (b === branchings[0]) diagnostics.unresolvedGold += unresolved;
      perB.set(b, { sources, items, gold, scores: new Map() });
    }
    const first = perB.get(branchings[0]!)!;
    const normalizedContext = normalizeAnswer(first.items.map((it) => regionText(it.root)).join('\n'));
    const answers = eligibleAnswers(q.answers, q.answersAllRequired ?? false, normalizedContext);

    const scoresFor = async (b: number, variant: VectorVariant): Promise<Map<string, number>> => {
      const p = perB.get(b)!;
      const have = p.scores.get(variant);
      if (have) return have;
      const scores = new Map<string, number>();
      for (const item of p.items) {
        const embed = deps.embeddings.embedTexts;
        const vectors =
          variant === 'groups=encoded'
            ? await nodeVectorsEncodedGroups(item.root, embed, deps.signal)
            : variant === 'nodes=text'
              ? await nodeVectorsFromText(item.root, embed, deps.signal)
              : variant === 'nodes=prefix'
                ? await nodeVectorsPrefix(item.root, embed, deps.embeddings.encoder, deps.signal)
                : variant === 'nodes=children'
                  ? await nodeVectorsChildren(item.root, embed, deps.signal)
                  : await nodeVectors(item.root, embed, deps.signal);
        for (const [id, s] of scoreNodes(queryVector, vectors, deps.adapter)) scores.set(id, s);
      }
      if (deps.nodeScore && !isDenseOnly(deps.nodeScore)) {
        const fused = fuseNodeScores(scores, lexicalScores(q.question, p.items, deps.nodeScore.model), deps.nodeScore);
        for (const [id, s] of fused.scores) scores.set(id, s);
        if (variant === 'product') p.components = fused.components;
      }
      p.scores.set(variant, scores);
      if (variant === 'product' && b === branchings[0] && diagnostics.leafScores.length < 20000) {
        for (const item of p.items) for (const leaf of leavesOf(item.root)) diagnostics.leafScores.push(scores.get(leaf.id)!);
      }
      return scores;
    };

    const tokensById = new Map<string, number>();
    for (const { c, i } of order) {
      const p = perB.get(c.branching)!;
      let outcome: Outcome;
      if (c.compressor.name === 'peer') {
        const ref = configs.findIndex((x) => x.id === (c.compressor as { budgetFrom: string }).budgetFrom);
        const budget = ref >= 0 ? (tokensById.get(configs[ref]!.id) ?? 0) : 0;
        outcome = await runPeer(q, p, budget, answers, deps, diagnostics);
      } else {
        const scores = await scoresFor(c.branching, c.groupVectors === 'encoded' ? 'groups=encoded' : c.nodeVectors ? `nodes=${c.nodeVectors}` : 'product');
        const margin = c.compressor.name === 'canopy' ? (c.margin ?? 0) : 0;
        const scoreOf = (n: RegionNode) => (scores.get(n.id) ?? Number.NEGATIVE_INFINITY) + (margin ? margin * depthOf(n.id) : 0);
        const shifted = margin ? new Map([...scores].map(([id, v]) => [id, v + margin * depthOf(id)])) : scores;
        const result = await runRounds(
          { question: q.question, topK: p.items.length, maxRounds: 1, compressor: pipelineCompressor(c), readerTokenCap: Number.MAX_SAFE_INTEGER, routing },
          { source: givenItems(p.items), scorer: fixedScores(shifted, margin ? undefined : p.components), tokens: deps.tokens },
          deps.signal,
        );
        if (deps.dump && c === configs.find((x) => x.compressor.name === 'canopy')) {
          const input = buildReaderInput(result.regions, deps.tokens, READER_CAP);
          deps.dump.writer.write({
            schema: JUDGE_DUMP_SCHEMA,
            dataset: deps.dump.dataset,
            questionId: q.id,
            question: q.question,
            answers,
            ...(q.answersAllRequired ? { allRequired: true } : {}),
            gold: p.gold.map((g) => ({ leafIds: g.leafIds, mode: g.mode })),
            retrieval: false,
            regions: input.regions.map(serializeRegion),
            rounds: [],
            ...(input.truncated ? { truncated: true } : {}),
          });
        }
        const kept: KeptByItem = result.kept;
        // Only CANOPY decides node by node; the baselines' items carry no verdicts.
        const verdicts = new Map([...result.verdicts].filter(([, v]) => v.length > 0));
        outcome = evaluateKept({ items: p.items, kept, verdicts, gold: p.gold, answers, answersAllRequired: q.answersAllRequired ?? false, tokens: deps.tokens });
        if (deps.read && q.answers.length > 0) outcome.reader = await readerScores(q, p.items, kept, scoreOf, deps);
      }
      tokensById.set(c.id, outcome.tokens);
      outcomes[i]![qi] = outcome;
    }
    deps.onQuestion?.(qi + 1, questions.length);
  }
  diagnostics.encodedTexts = deps.embeddings.encoded - encodedBefore;
  return { outcomes, diagnostics };
}

async function readerScores(q: EvalQuestion, items: Item[], kept: KeptByItem, scoreOf: (n: RegionNode) => number, deps: GivenDeps): Promise<{ em: number; f1: number }> {
  const regions = items.flatMap((item) => (kept.get(item.id) ?? []).map((node) => ({ item, node, score: scoreOf(node) })));
  const prediction = await deps.read!(q.question, regions);
  return bestAnswerScores(prediction, q.answers);
}

/** The peer on one question: vectra indexes the items' texts and renders sections within `budget` tokens. */
async function runPeer(q: EvalQuestion, p: PerB, budget: number, answers: string[], deps: GivenDeps, diagnostics: GivenDiagnostics): Promise<Outcome> {
  const peer = await VectraPeer.create(join(deps.scratchDir, 'peer-given'), { embedTexts: (t) => deps.embeddings.embedTexts(t, deps.signal) }, { chunkSize: deps.peerChunkSize });
  await peer.add(p.items.map((it) => ({ id: it.id, text: it.root.text })));
  const chunks = await peer.chunkCount;
  const { rendered } = await peer.retrieveAndRender(q.question, budget, { maxDocuments: p.items.length, maxChunks: Math.min(50, chunks), bm25: true });
  diagnostics.peerBm25Skipped += peer.bm25Skipped;
  const byItem = new Map<string, string>();
  for (const r of rendered) byItem.set(r.id, `${byItem.get(r.id) ?? ''}\n${r.text}`);
  const kept = containedLeaves(p.items, byItem);
  const outcome = evaluateKept({ items: p.items, kept, gold: p.gold, answers, answersAllRequired: q.answersAllRequired ?? false, tokens: deps.tokens });
  // Tokens and answer from what vectra actually rendered (partial sentences and "..." connectors included).
  outcome.tokens = rendered.reduce((a, r) => a + deps.tokens.count(r.text), 0);
  outcome.regions = rendered.length;
  outcome.items = byItem.size;
  outcome.wholeItems = p.items.filter((it) => byItem.has(it.id) && squash(byItem.get(it.id)!).includes(squash(it.root.text))).length;
  if (answers.length > 0) {
    outcome.answerKept = answerIn(answers, q.answersAllRequired ?? false, rendered.map((r) => r.text).join('\n'));
  }
  return outcome;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Depth of a node from its id `${itemId}/0.2.1` (root = 0). */
export function depthOf(nodeId: string): number {
  const path = nodeId.slice(nodeId.lastIndexOf('/') + 1);
  let d = 0;
  for (const ch of path) if (ch === '.') d++;
  return d;
}

/** Leaves whose whole text appears in the text rendered for their item: what the peer "kept". */
export function containedLeaves(items: Item[], renderedByItem: ReadonlyMap<string, string>): KeptByItem {
  const kept: KeptByItem = new Map();
  for (const item of items) {
    const text = renderedByItem.get(item.id);
    if (!text) {
      kept.set(item.id, []);
      continue;
    }
    const flat = squash(text);
    kept.set(
      item.id,
      leavesOf(item.root).filter((l) => flat.includes(squash(l.text))),
    );
  }
  return kept;
}
