/**
 * The critic port (design §6): after each round it judges whether the accumulated, compressed
 * evidence suffices for the original question and, if not, writes a follow-up query. Its
 * verdict is an operational stopping criterion, never a claim of completeness.
 */
import type { Item, RegionNode } from '../../contracts/region';
import type { TraceJudgment } from '../../contracts/trace';

/**
 * One region of the kept evidence as the reader and a learned critic read it: the kept node with
 * its scores, and what the rounds knew of its item (rank, round, retrieval score, the document's
 * language and profiles). `read/reader.ts` `EvidenceRegion` adds the controller's element.
 */
export interface KeptRegion {
  itemId: string;
  itemTitle: string;
  file: string;
  node: RegionNode;
  /** The node's score against the question (the compressor's node score). */
  score: number;
  /** Scores of the node's leaves (and other nodes of its item), when known. */
  leafScores?: ReadonlyMap<string, number>;
  /** The hybrid node score's components per node (the dense cosine, lexical evidence), when it ran. */
  components?: ReadonlyMap<string, { dense: number; lexical: number }>;
  /** For an item a follow-up round found: each node's cosine with the user's question (its other scores are against the follow-up query). */
  questionScores?: ReadonlyMap<string, number>;
  /** 0-based rank of its item in the round that found it. */
  rank?: number;
  /** The round that found its item (1-based). */
  round?: number;
  /** The item's fused retrieval score in that round. */
  retrieval?: number;
  /** What the parser read of the item's document: its language (ISO 639-3) and the profiles it fits (profiles/profiles.ts). */
  document?: Item['traits'];
  /** The lead-in of the table the region lies in (the paragraph just before it), when the MAGE controller kept the table. */
  leadIn?: string;
}

export interface EvidenceView {
  itemId: string;
  title: string;
  /** Retrieval rank of the item in the round that found it (0-based). */
  rank: number;
  round: number;
  /** Texts of the regions kept for this item. */
  keptTexts: string[];
  /** The same regions' leaves (sentences, rows) in document order, when the caller has the trees. */
  keptLeaves?: string[];
  /** The kept regions themselves, with their scores, when the caller has them (a learned critic reads them as the reader does). */
  regions?: KeptRegion[];
}

/** An item a follow-up query would bring that is not in the evidence yet, with its leaves' texts. */
export interface ProbeItem {
  itemId: string;
  title: string;
  leaves: string[];
}

export interface CriticInput {
  question: string;
  round: number;
  evidence: EvidenceView[];
  /** Titles of every item retrieved so far (kept or not). */
  seenTitles: string[];
  /** Follow-up queries already issued, so the critic does not repeat itself. */
  previousQueries: string[];
  /**
   * What a follow-up query would retrieve beyond the evidence (the next round's own retrieval,
   * run ahead and reused by that round), when the caller can search; undefined when it cannot.
   * A critic may look before it asks for another round. `names`: the named things the query looks
   * for (as in `CriticVerdict.followUpNames`), whose own items the retrieval takes first.
   */
  probe?: (query: string, signal?: AbortSignal, names?: readonly string[]) => Promise<ProbeItem[] | undefined>;
  /**
   * Which of these named things have an item of their own (its title names exactly that thing)
   * that no round retrieved (of several so titled, none), when the caller can look titles up;
   * undefined when it cannot.
   */
  ownItems?: (names: readonly string[]) => Promise<ReadonlySet<string>>;
}

export interface CriticVerdict {
  sufficient: boolean;
  /** What the critic found missing, in words or terms. */
  missing: string[];
  followUpQuery?: string;
  /**
   * The named things the follow-up looks for (bridges, missing named things): an item whose title
   * names one of them exactly is that thing's own item, which the next round's retrieval takes
   * first — a search by words can miss it ("Edwin Most": "most" is a stop word).
   */
  followUpNames?: string[];
  /** Which critic produced the verdict and, for the rule, what it saw; `learned`: the critic model's stop over the rule's reading (judge/learnedCritic.ts). */
  source: 'rule' | 'llm' | 'llm-fallback-rule' | 'learned';
  details?: Record<string, unknown>;
  /** The critic model's probability that the evidence holds the answer, with its features' contributions. */
  judgment?: TraceJudgment;
}

export interface Critic {
  readonly kind: 'rule' | 'llm';
  /** The learned model behind the verdicts, when one is (its id goes into the trace's settings). */
  readonly modelId?: string;
  judge(input: CriticInput, signal?: AbortSignal): Promise<CriticVerdict>;
}

/**
 * A fingerprint of the evidence a critic judged (items and their kept leaves, in order): a replay
 * whose round holds the same evidence reuses the recorded verdict, which may rest on a probe of
 * the live index that a replay cannot repeat.
 */
export function evidenceKey(evidence: readonly EvidenceView[]): string {
  // FNV-1a, 32 bits, over every item id and kept leaf with separators.
  let h = 0x811c9dc5;
  const add = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    h ^= 0x1f;
    h = Math.imul(h, 0x01000193) >>> 0;
  };
  for (const e of evidence) {
    add(e.itemId);
    for (const t of e.keptLeaves ?? e.keptTexts) add(t);
    add('\u0000');
  }
  return `${evidence.length}:${h.toString(16).padStart(8, '0')}`;
}

