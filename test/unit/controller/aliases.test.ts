// The line-item aliases the controller adds to the question's terms ("top line" → revenue,
// "bottom line" → net income, "spinning off" → separation), only when the document uses that name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DocumentView } from '../../../src/core/controller/documentView';
import { lineItemAliases, RelevanceModel } from '../../../src/core/controller/relevance';
import { buildFixtureDoc, hashDeps, type ElementSpec } from './fixtureDoc';

describe('controller: line-item aliases', () => {
  it('adds the filing name of a colloquial line item only when the document uses it', () => {
    const uses = (have: string[]) => (t: string) => have.includes(t);
    assert.deepEqual(lineItemAliases('Which region had the worst top line performance?', uses(['revenu'])), ['revenue']);
    assert.deepEqual(lineItemAliases('Which region had the worst topline performance?', uses(['revenu', 'sale'])), ['revenue', 'sales']);
    assert.deepEqual(lineItemAliases('What was the bottom line in 2023?', uses(['incom', 'net'])), ['net', 'income']);
    assert.deepEqual(lineItemAliases('Is Pfizer spinning off any large business segments?', uses(['separ'])), ['separation']);
    assert.deepEqual(lineItemAliases('Is Pfizer spinning off any large business segments?', uses([])), [], 'a document without the word gets none');
    assert.deepEqual(lineItemAliases('What was the capital expenditure in 2023?', uses(['revenu'])), []);
  });

  it('puts the alias among the question terms and the lexical query when the document uses it', async () => {
    const pages: ElementSpec[][] = [
      [{ kind: 'heading', text: 'Results' }, { kind: 'paragraph', sentences: ['Revenue grew to 120 million in 2023.', 'Costs were flat.'] }],
      [{ kind: 'heading', text: 'Staff' }, { kind: 'paragraph', sentences: ['The company employed 93,000 people.'] }],
    ];
    const view = await DocumentView.of(await buildFixtureDoc(pages));
    const top = await RelevanceModel.create('How did the top line develop?', view, hashDeps());
    assert.ok(top.questionTerms.some((t) => t.term === 'revenu'));
    assert.match(top.lexicalQuery, /revenue$/);
    const revenue = view.elements.find((e) => e.text.startsWith('Revenue grew'))!.id;
    assert.ok(top.lexical(revenue) > 0, 'the revenue paragraph matches the top-line question');
    const bottom = await RelevanceModel.create('How did the bottom line develop?', view, hashDeps());
    assert.equal(bottom.lexicalQuery, 'How did the bottom line develop?', 'the document never says net income or earnings');
  });
});
