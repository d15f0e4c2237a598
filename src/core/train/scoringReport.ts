/**
 * What `canopy train` (and the Train command) reports about the scoring weights it fits beside
 * the adapter — the retrieval fusion and the CANOPY rule's node-score weights — on the same
 * training / held-back split of the user's gold annotations. The fit itself is
 * `core/app/scoringFit.ts`; the weights adopted are written into the index's retrieval profile.
 */
import type { HeldBackFusion } from '../retrieve/fitFusion';
import type { FusionSetting, ProfileGate } from '../retrieve/profile';
import type { NodeScoreFit } from './nodeScoreFit';

export interface FusionFitReport {
  adopted: boolean;
  /** Why the fit was adopted, not adopted, or not made. */
  reason: string;
  /** Questions that judge an indexed item relevant, per split, and those that judge none. */
  questions: { train: number; heldBack: number; unjudged: number };
  /** The fusion asks used before. */
  before: FusionSetting;
  /** The fitted fusion (absent when no fit was made). */
  after?: FusionSetting;
  /** Mean nDCG@10 of the fitted fusion on the training questions. */
  trainNdcg?: number;
  /** Mean nDCG@10 of the fusion before and the fitted one on the held-back questions. */
  heldBack?: HeldBackFusion;
}

export interface ScoringReport {
  fusion: FusionFitReport;
  nodeScore: NodeScoreFit;
  /** The rank gate's options fitted with the ask's configuration (`askFit.ts`), when the run had one, and whether they were adopted. */
  gate?: { before: ProfileGate; after: ProfileGate; adopted: boolean };
  /** The retrieval profile written with what was adopted (absent when nothing was, or on a dry run). */
  profile?: { file: string };
}
