/**
 * What an item's title says it is about, shared by the rule critic (which items are the next hop)
 * and the rank gate (which items a kept text names).
 */
import { words } from './terms';

/** An item's subject: its title without a trailing locator such as "(lines 12–30)" or "(p. 4)". */
export function subjectOf(title: string): string {
  return title.replace(/\s*\((?:lines?|p\.|pp\.|page|pages|rows?)\s[^)]*\)\s*$/i, '').trim();
}

/** A subject without its trailing disambiguation: "Lanterns (band)" → "Lanterns". */
export function withoutDisambiguation(subject: string): string {
  return subject.replace(/\s*\([^)]*\)\s*$/, '');
}

/**
 * The thing a text would name for this title: the subject without disambiguation, up to its first
 * comma ("Marrow Township, Kessel County, Indiana" → "Marrow Township").
 */
export function namedSubject(title: string): string {
  return withoutDisambiguation(subjectOf(title)).split(',')[0]!;
}

const LEADING = /^(?:the|a|an|sir|dame|lord|lady|saint|st|dr|mr|mrs|ms)$/;

/**
 * A name as the title lookup compares it: its words (text/terms.ts: lower-cased, punctuation
 * dropped, stop words kept) without a leading article or honorific, so "The Quill Bros." and
 * "Quill Bros", "Sir Edwin Most" and "Edwin Most" are one key. An item's key is its named
 * subject's (`titleKeyOf`); the stores keep it (index/indexStore.ts `titled`), so changing this
 * changes what an index written before finds.
 */
export function titleKey(name: string): string {
  const ws = words(name);
  return (ws.length > 1 && LEADING.test(ws[0]!) ? ws.slice(1) : ws).join(' ');
}

/** The title key of an item: its named subject's ("Harwick, New Jersey" → "harwick"). */
export function titleKeyOf(title: string): string {
  return titleKey(namedSubject(title));
}
