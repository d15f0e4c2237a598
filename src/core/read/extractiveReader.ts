/**
 * The reader used when no LLM is configured (design §8): the answer is the best-supported kept
 * sentence(s) or row(s), quoted with citations to their exact source ranges. Support = the
 * region's score against the question plus how many of the question's content terms it
 * mentions; one more sentence is added from another item when it is nearly as well supported
 * (multi-hop answers are often split across items).
 */
import { leavesOf } from '../compress/baselines';
import { contentTerms } from '../text/terms';
import type { TraceCitation } from '../../contracts/trace';
import type { Answer, EvidenceRegion, Reader, ReaderInput } from './reader';

export interface ExtractiveOptions {
  /** Most quoted regions in an answer (default 3). */
  maxQuotes?: number;
  /** A further quote must reach this share of the best support (default 0.85). */
  relativeSupport?: number;
}

export class ExtractiveReader implements Reader {
  readonly mode = 'extractive' as const;

  constructor(private readonly options: ExtractiveOptions = {}) {}

  async answer(question: string, input: ReaderInput): Promise<Answer> {
    const qTerms = new Set(contentTerms(question));
    type Candidate = { region: EvidenceRegion; leaf: EvidenceRegion['node']; support: number };
    const candidates: Candidate[] = [];
    for (const region of input.regions) {
      for (const leaf of leavesOf(region.node)) {
        const terms = new Set(contentTerms(leaf.header ? `${leaf.header} ${leaf.text}` : leaf.text));
        const overlap = qTerms.size === 0 ? 0 : [...qTerms].filter((t) => terms.has(t)).length / qTerms.size;
        const s = region.leafScores?.get(leaf.id) ?? region.score;
        candidates.push({ region, leaf, support: s + overlap });
      }
    }
    if (candidates.length === 0) {
      return { mode: 'extractive', text: 'No evidence was kept for this question, so there is nothing to quote.', citations: [] };
    }
    candidates.sort((a, b) => b.support - a.support);
    const best = candidates[0]!;
    const chosen: Candidate[] = [best];
    const maxQuotes = this.options.maxQuotes ?? 3;
    const share = this.options.relativeSupport ?? 0.85;
    for (const c of candidates.slice(1)) {
      if (chosen.length >= maxQuotes) break;
      if (c.support < best.support * share) break;
      if (chosen.some((x) => x.region.itemId === c.region.itemId)) continue;
      chosen.push(c);
    }
    const citations: TraceCitation[] = chosen.map((c, i) => ({
      marker: i + 1,
      itemId: c.region.itemId,
      nodeId: c.leaf.id,
      file: c.region.file,
      anchor: c.leaf.anchor,
      text: c.leaf.text,
    }));
    const quote = (c: Candidate) => (c.leaf.header ? `${c.leaf.header} → ${c.leaf.text}` : c.leaf.text).replace(/\s+/g, ' ').trim();
    const text = chosen.map((c, i) => `${quote(c)} [${i + 1}]`).join(' ');
    return { mode: 'extractive', text, citations };
  }
}
