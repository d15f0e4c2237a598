/**
 * Document profiles: knowledge that holds for one kind of document only lives in a named profile,
 * switched on per document by the document's own structure, never for a whole corpus or by a file
 * name. The parser reads each document's traits once (`documentTraits`): its language
 * (text/language.ts) and the profiles it fits; every item of the document carries them, and the
 * judgments (judge/) compute a profile's features only for regions of documents that fit it.
 *
 * Profiles (docs/architecture.md, "Document profiles", lists them with their on/off figures):
 *  - `filing`: a securities filing (an annual or quarterly report, a current report) — its cover
 *    page names the securities regulator and the form. Its features: statement rows read as line
 *    items of the asked period (profiles/filings/rows.ts), line items' other names
 *    (profiles/filings/terms.ts), expectation and company-description sentences
 *    (profiles/filings/cues.ts), the filing of the period the question names
 *    (text/sourcePeriods.ts, as a reader feature).
 */
import { detectLanguage } from '../text/language';
import { isFilingCover } from './filings/detect';

export type ProfileName = 'filing';

export const PROFILE_NAMES: readonly ProfileName[] = ['filing'];

export interface DocumentTraits {
  /** ISO 639-3, `und` when the text does not say. */
  language: string;
  profiles: ProfileName[];
}

/** Characters of a document read to tell its language and the profiles it fits: its opening. */
const SAMPLE = 6000;

/**
 * The traits of a document from its opening text (the first pages or sections, in reading order)
 * — enough for the language, and where a filing's cover page is.
 */
export function documentTraits(opening: string): DocumentTraits {
  const sample = opening.length > SAMPLE ? opening.slice(0, SAMPLE) : opening;
  const profiles: ProfileName[] = [];
  if (isFilingCover(sample)) profiles.push('filing');
  return { language: detectLanguage(sample).code, profiles };
}

/** Whether a region's document fits the profile. */
export const fits = (traits: { profiles?: readonly string[] } | undefined, profile: ProfileName): boolean => traits?.profiles?.includes(profile) ?? false;
