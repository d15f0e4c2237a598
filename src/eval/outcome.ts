/**
 * What one configuration achieved on one question, computed from the kept regions: gold units
 * kept, the answer string kept, evidence tokens (each kept region as the reader receives it —
 * a row with its header — counted with the pipeline's cl100k_base counter) against the tokens of
 * the same items uncompressed, and CANOPY's refinement decisions. The open-pool runner adds
 * retrieval and round data.
 */
import type { KeptByItem } from '../core/compress/baselines';
import type { NodeVerdict } from '../core/compress/projection';
import type { TokenCounter } from '../core/compress/tokens';
import type { Item, RegionNode } from '../contracts/region';
import { containsAnswer, normalizeAnswer, searchableAnswer } from './answers';
import { coveredLeaves, goldLeafSet, isCovered, type GoldKind, type ResolvedGold } from './gold';
import { refinementDecisions, type DecisionCount } from '../core/compress/refinementDecisions';

export interface Count {
  kept: number;
  total: number;
}

export interface RetrievalOutcome {
  /** Round-1 fused ranking as pool document ids (beyond k: the retriever's candidates). */
  ranked: string[];
  /** Cumulative pool documents retrieved after each round (index 0 = round 1). */
  retrievedByRound: string[][];
  /** Cumulative pool documents with at least one kept region after each round. */
  evidenceByRound: string[][];
  rounds: number;
  stop: string;
  /** The critic's verdict after each round it judged (index 0 = round 1): sufficient or not. */
  sufficientByRound?: boolean[];
}

export interface Outcome {
  /** Gold units finer than a paragraph (sentences, rows, pages, spans). */
  gold: Count;
  byKind: Partial<Record<GoldKind, Count>>;
  /** Paragraph-level gold units (datasets that mark only supporting paragraphs). */
  paragraphs: Count;
  /** undefined when no acceptable answer occurs in the full context (the question cannot be answer-bearing). */
  answerKept?: boolean;
  tokens: number;
  /** Tokens of the reader input built from the kept regions (block headers, or the controller's XML), where measured. */
  readerTokens?: number;
  tokensNone: number;
  regions: number;
  items: number;
  /** Items whose only kept region is the whole item (the root). */
  wholeItems: number;
  decisions?: DecisionCount;
  retrieval?: RetrievalOutcome;
  reader?: { em: number; f1: number };
}

export function regionText(node: RegionNode): string {
  return node.header ? `${node.header}\n${node.text}` : node.text;
}

/** The normalised acceptable answers that occur in the normalised context; [] when none does. */
export function eligibleAnswers(answers: readonly string[], allRequired: boolean, normalizedContext: string): string[] {
  const searchable = answers.map(searchableAnswer).filter((a): a is string => a !== undefined);
  const present = searchable.filter((a) => containsAnswer(normalizedContext, a));
  if (allRequired) return present.length === searchable.length && searchable.length > 0 ? present : [];
  return present;
}

export function answerIn(eligible: readonly string[], allRequired: boolean, text: string): boolean {
  const n = normalizeAnswer(text);
  return allRequired ? eligible.every((a) => containsAnswer(n, a)) : eligible.some((a) => containsAnswer(n, a));
}

export interface OutcomeInput {
  items: Item[];
  kept: KeptByItem;
  verdicts?: Map<string, NodeVerdict[]>;
  gold: ResolvedGold[];
  /** Normalised answers eligible for answer-bearing recall ([] = not eligible). */
  answers: string[];
  answersAllRequired: boolean;
  tokens: TokenCounter;
}

export function evaluateKept(input: OutcomeInput): Outcome {
  const keptNodes = input.items.flatMap((it) => input.kept.get(it.id) ?? []);
  const covered = coveredLeaves(keptNodes);
  const byKind: Partial<Record<GoldKind, Count>> = {};
  const gold: Count = { kept: 0, total: 0 };
  const paragraphs: Count = { kept: 0, total: 0 };
  for (const g of input.gold) {
    const hit = isCovered(g, covered) ? 1 : 0;
    const k = (byKind[g.kind] ??= { kept: 0, total: 0 });
    k.kept += hit;
    k.total++;
    const bucket = g.kind === 'paragraph' ? paragraphs : gold;
    bucket.kept += hit;
    bucket.total++;
  }
  const tokens = keptNodes.reduce((a, n) => a + input.tokens.count(regionText(n)), 0);
  const tokensNone = input.items.reduce((a, it) => a + input.tokens.count(regionText(it.root)), 0);
  const keptOf = (it: Item) => input.kept.get(it.id) ?? [];
  const out: Outcome = {
    gold,
    byKind,
    paragraphs,
    tokens,
    tokensNone,
    regions: keptNodes.length,
    items: input.items.filter((it) => keptOf(it).length > 0).length,
    wholeItems: input.items.filter((it) => keptOf(it).length === 1 && keptOf(it)[0]!.id === it.root.id).length,
  };
  if (input.answers.length > 0) out.answerKept = answerIn(input.answers, input.answersAllRequired, keptNodes.map((n) => regionText(n)).join('\n'));
  if (input.verdicts && input.verdicts.size > 0) {
    const goldLeaves = goldLeafSet(input.gold);
    if (goldLeaves.size > 0) {
      const d: DecisionCount = { agree: 0, total: 0 };
      for (const it of input.items) {
        const v = input.verdicts.get(it.id);
        if (!v) continue;
        const r = refinementDecisions(it.root, v, goldLeaves);
        d.agree += r.agree;
        d.total += r.total;
      }
      out.decisions = d;
    }
  }
  return out;
}
