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
   * first — a search by words can miss it ("Thomas More": "more" is a stop word).
   */
  followUpNames?: string[];
  /** Which critic produced the verdict and, for the rule, what it saw. */
  source: 'rule' | 'llm' | 'llm-fallback-rule';
  details?: Record<string, unknown>;
}

export interface Critic {
  readonly kind: 'rule' | 'llm';
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

