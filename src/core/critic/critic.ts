/**
 * The critic port (design §6): after each round it judges whether the accumulated, compressed
 * evidence suffices for the original question and, if not, writes a follow-up query. Its
 * verdict is an operational stopping criterion, never a claim of completeness.
 */

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
}

export interface CriticInput {
  question: string;
  round: number;
  evidence: EvidenceView[];
  /** Titles of every item retrieved so far (kept or not). */
  seenTitles: string[];
  /** Follow-up queries already issued, so the critic does not repeat itself. */
  previousQueries: string[];
}

export interface CriticVerdict {
  sufficient: boolean;
  /** What the critic found missing, in words or terms. */
  missing: string[];
  followUpQuery?: string;
  /** Which critic produced the verdict and, for the rule, what it saw. */
  source: 'rule' | 'llm' | 'llm-fallback-rule';
  details?: Record<string, unknown>;
}

export interface Critic {
  readonly kind: 'rule' | 'llm';
  judge(input: CriticInput, signal?: AbortSignal): Promise<CriticVerdict>;
}
