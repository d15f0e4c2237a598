// Re-location of gold spans after edits: before, inside and after the span, duplicates told
// apart by context, fuzzy matches after small rewrites, and deletions reported as lost.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relocate, relocateAll, similarity } from '../../../src/core/annotate/relocate';
import { contextFingerprint, makeAnnotation, type Annotation } from '../../../src/core/annotate/store';

const original = [
  '# Notes',
  '',
  'The committee met in Geneva in 1998. It approved the new charter after a long debate.',
  'Later the charter was amended twice. The committee met in Geneva in 1998 again, said one source.',
  '',
].join('\n');

function mark(source: string, text: string, occurrence = 0): Annotation {
  let start = -1;
  for (let i = 0; i <= occurrence; i++) start = source.indexOf(text, start + 1);
  assert.ok(start >= 0);
  const end = start + text.length;
  return makeAnnotation({
    question: 'When did the committee approve the charter?',
    anchor: { file: 'notes.md', charStart: start, charEnd: end },
    text,
    context: contextFingerprint(source, start, end),
    source: 'editor',
    time: 't',
  });
}

const gold = 'It approved the new charter after a long debate.';

describe('relocate', () => {
  it('keeps an unchanged span', () => {
    const r = relocate(mark(original, gold), original);
    assert.equal(r.status, 'unchanged');
    assert.equal(r.anchor!.charStart, original.indexOf(gold));
  });

  it('follows an edit before the span, with new line and column', () => {
    const edited = original.replace('# Notes\n', '# Notes\n\nA new first paragraph.\n');
    const r = relocate(mark(original, gold), edited);
    assert.equal(r.status, 'moved');
    assert.equal(r.anchor!.charStart, edited.indexOf(gold));
    assert.equal(edited.slice(r.anchor!.charStart, r.anchor!.charEnd), gold);
    assert.equal(r.anchor!.startLine, 5);
    assert.equal(r.anchor!.startColumn, edited.split('\n')[4]!.indexOf(gold));
  });

  it('is unaffected by an edit after the span', () => {
    const edited = original.replace('amended twice', 'amended three times');
    assert.equal(relocate(mark(original, gold), edited).status, 'unchanged');
  });

  it('finds a span edited inside by its context', () => {
    const edited = original.replace('after a long debate', 'after a very long debate');
    const r = relocate(mark(original, gold), edited);
    assert.equal(r.status, 'context');
    assert.equal(r.text, 'It approved the new charter after a very long debate.');
    assert.ok(r.similarity > 0.7 && r.similarity < 1);
  });

  it('finds a rewritten span whose context also changed by fuzzy match', () => {
    const edited = 'Totally new opening words here.\nIt approved the new charter after long debates!\nDifferent ending.';
    const r = relocate(mark(original, gold), edited);
    assert.equal(r.status, 'fuzzy');
    assert.ok(r.text!.startsWith('It approved the new charter'), r.text);
  });

  it('tells duplicates apart by context', () => {
    const dup = 'The committee met in Geneva in 1998';
    const second = mark(original, dup, 1);
    const first = mark(original, dup, 0);
    // Shift everything so neither stored offset holds the text any more.
    const edited = `Preface.\n${original}`;
    assert.equal(relocate(second, edited).anchor!.charStart, edited.lastIndexOf(dup));
    assert.equal(relocate(first, edited).anchor!.charStart, edited.indexOf(dup));
    // Delete the first occurrence: the first annotation must not jump to the second silently
    // when the second is a worse context match — but an exact text match elsewhere is still a move.
    const r = relocate(first, edited.replace('The committee met in Geneva in 1998. ', ''));
    assert.equal(r.status, 'moved');
  });

  it('reports a deleted span as lost', () => {
    const edited = original.replace(gold, '').replace('charter', 'document');
    const r = relocate(mark(original, gold), edited);
    assert.equal(r.status, 'lost');
    assert.equal(r.anchor, undefined);
  });

  it('reports annotations of missing files as lost, never drops them, and leaves page anchors unchecked', async () => {
    const a = mark(original, gold);
    const pdf = makeAnnotation({ question: 'q', anchor: { file: 'r.pdf', page: 3 }, text: 'p', source: 'pdf', time: 't' });
    const out = await relocateAll([a, pdf, { ...a, id: 'gone', file: 'gone.md', anchor: { ...a.anchor, file: 'gone.md' } }], async (f) => (f === 'notes.md' ? original : undefined));
    assert.deepEqual(
      out.map((r) => r.status),
      ['unchanged', 'unchecked', 'lost'],
    );
  });

  it('similarity is 1 for equal strings and low for unrelated ones', () => {
    assert.equal(similarity('abc def', 'abc def'), 1);
    assert.ok(similarity('the charter was approved', 'bananas are yellow fruit') < 0.2);
  });
});
