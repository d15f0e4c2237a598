/**
 * What an item's title says it is about, shared by the rule critic (which items are the next hop)
 * and the rank gate (which items a kept text names).
 */

/** An item's subject: its title without a trailing locator such as "(lines 12–30)" or "(p. 4)". */
export function subjectOf(title: string): string {
  return title.replace(/\s*\((?:lines?|p\.|pp\.|page|pages|rows?)\s[^)]*\)\s*$/i, '').trim();
}

/** A subject without its trailing disambiguation: "Green (band)" → "Green". */
export function withoutDisambiguation(subject: string): string {
  return subject.replace(/\s*\([^)]*\)\s*$/, '');
}

/**
 * The thing a text would name for this title: the subject without disambiguation, up to its first
 * comma ("Van Buren Township, Brown County, Indiana" → "Van Buren Township").
 */
export function namedSubject(title: string): string {
  return withoutDisambiguation(subjectOf(title)).split(',')[0]!;
}
