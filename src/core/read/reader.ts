/**
 * The Reader port and the reader input: the kept evidence, numbered region by region, in the
 * order the rounds found it, capped at the reader's token budget (design §5). The exact text
 * and its token count go into the trace.
 */
import type { TokenCounter } from '../compress/tokens';
import type { RegionNode } from '../model/region';
import type { TraceCitation } from '../trace/schema';

export interface EvidenceRegion {
  itemId: string;
  itemTitle: string;
  file: string;
  node: RegionNode;
  /** The node's score against the question (for the extractive reader). */
  score: number;
  /** Scores of the node's leaves, when known. */
  leafScores?: Map<string, number>;
}

export interface ReaderInput {
  text: string;
  tokens: number;
  truncated: boolean;
  regions: EvidenceRegion[];
}

export interface Answer {
  mode: 'extractive' | 'llm';
  text: string;
  citations: TraceCitation[];
  /** The LLM that wrote the answer. */
  model?: string;
  /** Remarks for the user (e.g. a fallback to the extractive reader). */
  notes?: string[];
  /** Citation numbers in the text that name no evidence block. */
  unresolvedMarkers?: number[];
}

export interface Reader {
  readonly mode: 'extractive' | 'llm';
  answer(question: string, input: ReaderInput, signal?: AbortSignal): Promise<Answer>;
}

function regionText(node: RegionNode): string {
  return node.header ? `${node.header}\n${node.text}` : node.text;
}

/** Numbered evidence blocks `[n] file — title` + text; stops before the block that would pass the cap. */
export function buildReaderInput(regions: EvidenceRegion[], tokens: TokenCounter, cap: number): ReaderInput {
  const blocks: string[] = [];
  const used: EvidenceRegion[] = [];
  let total = 0;
  let truncated = false;
  for (const r of regions) {
    const block = `[${used.length + 1}] ${r.file} — ${r.itemTitle}\n${regionText(r.node)}`;
    const n = tokens.count(block) + (blocks.length > 0 ? 1 : 0);
    if (total + n > cap) {
      truncated = true;
      break;
    }
    blocks.push(block);
    used.push(r);
    total += n;
  }
  const text = blocks.join('\n\n');
  return { text, tokens: tokens.count(text), truncated, regions: used };
}
