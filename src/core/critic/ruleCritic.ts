/**
 * The deterministic critic used when no LLM is configured (design §6). Two signals:
 *  - coverage: question content terms and entities that no kept region mentions are missing;
 *  - bridges: entities that the best kept evidence introduces (not in the question) and that
 *    no retrieved item is about yet — the second hop of a bridge question rarely resembles the
 *    question, so these name where to look next.
 * Sufficient when every question entity is covered, at least `minTermCoverage` of the question's
 * content terms are (predicates are often paraphrased: "played" vs "stars"), and no unexplored
 * bridge remains. The follow-up query is the question plus the missing words and the top bridges.
 */
import { contentTerms, entitySpans, indexTerm, words } from '../text/terms';
import type { Critic, CriticInput, CriticVerdict } from './critic';

export interface RuleCriticOptions {
  /** How many of the best evidence items bridges are taken from (default 3). */
  bridgeSourceItems?: number;
  /** At most this many bridge entities go into a follow-up query (default 4). */
  maxBridges?: number;
  /** Share of question content terms the evidence must mention (default 0.75). */
  minTermCoverage?: number;
}

export class RuleCritic implements Critic {
  readonly kind = 'rule' as const;
  private readonly sourceItems: number;
  private readonly maxBridges: number;
  private readonly minCoverage: number;

  constructor(options: RuleCriticOptions = {}) {
    this.sourceItems = options.bridgeSourceItems ?? 3;
    this.maxBridges = options.maxBridges ?? 4;
    this.minCoverage = options.minTermCoverage ?? 0.75;
  }

  async judge(input: CriticInput): Promise<CriticVerdict> {
    const evidenceText = input.evidence.flatMap((e) => [e.title, ...e.keptTexts]).join('\n');
    const covered = new Set(contentTerms(evidenceText));
    const questionTerms = [...new Set(contentTerms(input.question))];
    const missingTerms = questionTerms.filter((t) => !covered.has(t));

    const questionEntities = entitySpans(input.question);
    const missingEntities = questionEntities.filter((e) => !contentTerms(e).every((t) => covered.has(t)));

    const questionTermSet = new Set(questionTerms);
    const seen = new Set(input.seenTitles.flatMap((t) => contentTerms(t)));
    const asked = new Set(input.previousQueries.flatMap((q) => contentTerms(q)));
    const best = [...input.evidence].sort((a, b) => a.round - b.round || a.rank - b.rank).slice(0, this.sourceItems);
    const bridgeCounts = new Map<string, number>();
    for (const e of best) {
      for (const entity of entitySpans(e.keptTexts.join(' '))) {
        const terms = contentTerms(entity);
        if (terms.length === 0 || /^\d/.test(entity)) continue;
        if (terms.every((t) => questionTermSet.has(t))) continue; // the question already names it
        if (terms.every((t) => seen.has(t))) continue; // an item about it was retrieved
        if (terms.every((t) => asked.has(t))) continue; // already searched for
        bridgeCounts.set(entity, (bridgeCounts.get(entity) ?? 0) + 1);
      }
    }
    const bridges = [...bridgeCounts.entries()]
      .sort((a, b) => b[1] - a[1] || b[0].length - a[0].length)
      .slice(0, this.maxBridges)
      .map(([entity]) => entity);

    // Report and query with the question's own words, not their stems.
    const surface = new Map<string, string>();
    for (const w of words(input.question)) {
      const t = indexTerm(w);
      if (t && !surface.has(t)) surface.set(t, w);
    }
    const missing = [
      ...missingEntities,
      ...missingTerms.filter((t) => !missingEntities.some((e) => contentTerms(e).includes(t))).map((t) => surface.get(t) ?? t),
    ];
    const coverage = questionTerms.length === 0 ? 1 : 1 - missingTerms.length / questionTerms.length;
    const sufficient = missingEntities.length === 0 && coverage >= this.minCoverage && bridges.length === 0;
    const verdict: CriticVerdict = {
      sufficient,
      missing,
      source: 'rule',
      details: { questionTerms, missingTerms, missingEntities, coverage, bridges },
    };
    if (!sufficient) verdict.followUpQuery = [input.question, ...missing, ...bridges].join(' ');
    return verdict;
  }
}
