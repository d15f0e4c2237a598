/**
 * The filings profile's cues (profiles/profiles.ts): the way filing questions ask and filings
 * answer, used as features only for regions of documents the profile fits —
 *  - a question about what a company does and the sentence that describes it (a business
 *    overview's opening);
 *  - a question about what is expected and a sentence that states an expectation or plan;
 *  - "which <kind> had the biggest …" and the table of such things (by region, by category).
 */

/**
 * A question about what is expected, and a sentence that states an expectation or a plan ("We
 * expect to incur costs of approximately $250 million …").
 */
export const FORWARD = /\b(expect(s|ed|ing)?|anticipat(e|es|ed|ing)|intend(s|ed)? to|plan(s|ned)? to|forecast(s|ed)?|in the future|going forward|will)\b/i;

/**
 * A question about what a company does — its industry, its business, what it makes: "What industry
 * does ACME primarily operate in?", "What does Northwind do?", "What business is X in?", "What is
 * X's core business?". Its answer is the filing's own description of the company (the opening of
 * "Item 1. Business" in a 10-K), not a figure.
 */
const COMPANY_ACTIVITY_QUESTION = new RegExp(
  [
    String.raw`\b(?:what|which)\s+(?:kind\s+of\s+|type\s+of\s+|line\s+of\s+)?(?:industry|industries|sector|sectors)\b`,
    // "What business is X in?", "What line of business does X have?" — not "What businesses did X acquire?"
    String.raw`\bwhat\s+(?:kind\s+of\s+|type\s+of\s+|line\s+of\s+)?business(?:es)?\s+(?:is|are|does|do)\b(?!.*\b(?:acquir|sold|sell|divest|exit|spin|spun|buy|bought)\w*)`,
    String.raw`\bwhat\s+(?:does|do|did)\s+(?:[\p{L}\p{N}&.'’-]+\s+){1,6}?do\s*(?:\?|$|for\s+a\s+living\b|primarily\b|mainly\b|chiefly\b|as\s+a\s+(?:company|business)\b)`,
    String.raw`\bwhat\s+(?:is|are|was|were)\s+(?:[\p{L}\p{N}&.'’-]+\s+){1,6}?(?:core|main|primary|principal|key)?\s*business(?:es)?\s*(?:\?|$)`,
  ].join('|'),
  'iu',
);

/** The words such a question asks with, not about: no sentence that answers it needs to repeat them. */
export const COMPANY_ACTIVITY_WORDS = 'industry industries sector sectors business businesses line kind type operate operates operating primarily mainly chiefly do does core main principal';

export function asksCompanyActivity(question: string): boolean {
  return COMPANY_ACTIVITY_QUESTION.test(question.replace(/\s+/g, ' '));
}

/**
 * Words after which a verb of COMPANY_DESCRIPTION is a noun: "The major markets in which we sell …",
 * "our products", "its designs" (a determiner or an adjective of rank before it).
 */
const NOUN_BEFORE = String.raw`(?:the|a|an|our|its|their|these|those|such|other|major|key|main|primary|principal|certain|many|most|some|all|new|end|target)`;

/**
 * A sentence that describes what a company is or does, in the words a filing's business overview
 * opens with: "Acme is a global leader in developing and producing industrial coatings …", "Globex
 * is a diversified technology company", "We design, manufacture and sell …". Its subject opens the
 * sentence (a name or "we"), within a few words of the verb; a verb's word after a determiner or an
 * adjective of rank is a noun ("The major markets in which we sell …" describes nothing). A sentence about the company's legal
 * form ("Acme plc is a public limited company incorporated under the laws of England and Wales")
 * says where it is incorporated, not what it does, and is no description.
 */
export const COMPANY_DESCRIPTION = new RegExp(
  String.raw`^(?!.*\b(?:incorporated|organized|organised|registered|domiciled)\s+(?:in|under)\b)(?:` +
  [
    String.raw`^(?!\s*(?:the\s+)?(?:following|table|below|above|this\s+table)\b)\s*(?:[\p{L}\p{N}&.,'’()-]+\s+){0,6}?(?:is|are)\s+(?:a|an|the|one\s+of\s+the)\s+(?:[\p{L}\p{N}&,'’-]+\s+){0,6}?(?:leaders?|leading|providers?|manufacturers?|makers?|producers?|developers?|designers?|suppliers?|distributors?|retailers?|operators?|companies|company|corporation|business|firm|group|owner|marketer|innovator)(?![-\p{L}])`,
    String.raw`^(?!\s*(?:the\s+)?(?:following|table|below|above|this\s+table)\b)\s*(?:[\p{L}\p{N}&.,'’()-]+\s+){0,6}?(?<!\b${NOUN_BEFORE}\s+)(?:designs?|develops?|manufactures?|produces?|makes|sells|markets|distributes|provides|offers|operates)\b(?!\s+(?:in\s+)?(?:the\s+)?(?:following|below|above)\b)`,
  ].join('|') +
  ')',
  'iu',
);

/** Superlatives a "which … had the most …" question ranks by. */
const SUPERLATIVE = String.raw`(?:biggest|largest|greatest|highest|most|worst|best|lowest|smallest|least|strongest|weakest|top|fastest|slowest)`;
const WHICH_KIND = new RegExp(
  String.raw`\bwhich\s+((?:[\p{L}&'’-]+\s+){0,3}?[\p{L}-]+)\s+(?:had|has|have|saw|showed|posted|performed|was|were|generated|delivered|contributed|experienced|recorded|reported|achieved|grew)\s+(?:the\s+)?(?:[\p{L}-]+\s+){0,2}?${SUPERLATIVE}\b`,
  'iu',
);

/**
 * The kind of thing a "which X had the biggest / worst … " question asks to pick, in its own
 * lower-case words: "Which region had the weakest sales growth?" → "region", "which
 * sales channel had the biggest drop …" → "sales channel", "Which Blue Harbor product
 * category performed the best …" → "product category" (a name before the kind is no part of it).
 * The answer is a row of a table of such things (by region, by category), whose heading or lead-in
 * names the kind. Undefined when the question asks no such thing.
 */
export function superlativeKind(question: string): string | undefined {
  const m = WHICH_KIND.exec(question.replace(/\s+/g, ' '));
  if (!m) return undefined;
  // The kind's own words, not a name before it ("Blue Harbor product category" → "product category").
  const kind = m[1]!.trim().split(/\s+/).filter((w) => !/^\p{Lu}/u.test(w) || w === w.toLowerCase());
  const phrase = kind.join(' ').toLowerCase();
  return phrase.length > 2 ? phrase : undefined;
}
