// A question about what the company does opens the first paragraphs under the filing's business
// section ("Item 1. Business"), not the table of contents that names the section too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { DocumentView } from '../../../src/core/controller/documentView';
import { overviewParagraphs } from '../../../src/core/controller/grounding';
import { buildEvidenceSubgraph } from '../../../src/core/controller/subgraph';
import { buildFixtureDoc, elementId, hashDeps, type ElementSpec } from './fixtureDoc';

const filing: ElementSpec[][] = [
  [
    { kind: 'heading', text: 'Table of Contents' },
    { kind: 'paragraph', sentences: ['Item 1. Business 3'] },
    { kind: 'paragraph', sentences: ['Item 1A. Risk Factors 6'] },
    { kind: 'paragraph', sentences: ['Item 7. Management Discussion 9'] },
    { kind: 'paragraph', sentences: ['Item 8. Financial Statements 12'] },
  ],
  [
    { kind: 'heading', text: 'PART I' },
    { kind: 'heading', text: 'Item 1. - Business' },
    { kind: 'heading', text: 'The Company' },
    { kind: 'paragraph', sentences: ['Acme plc is a public limited company incorporated under the laws of Jersey.', 'Today, we are a global leader in developing and producing responsible packaging for food and beverages.'] },
    { kind: 'heading', text: 'Sustainability' },
    { kind: 'paragraph', sentences: ['Sustainability is central to our business and one of our most exciting opportunities for growth.', 'We work daily to embed it in everything we do.'] },
    { kind: 'paragraph', sentences: ['A third paragraph about our plants and our customers in many countries of the world.'] },
  ],
  [
    { kind: 'heading', text: 'Segments' },
    { kind: 'paragraph', sentences: ['Flexibles consists of operations that manufacture flexible packaging for the food, medical and other industries.', 'Rigid packaging makes containers.'] },
  ],
  [
    { kind: 'heading', text: 'Employees' },
    { kind: 'paragraph', sentences: ['The company employed 41,000 people in many industries and countries.'] },
  ],
];

describe('controller: the business overview for a question about what the company does', () => {
  it('finds the first two paragraphs under "Item 1. Business", skipping the table of contents', async () => {
    const doc = await buildFixtureDoc(filing, { profiles: ['filing'] });
    const view = await DocumentView.of(doc);
    const found = overviewParagraphs(view, 'What industry does Acme primarily operate in?');
    assert.ok(found);
    assert.equal(found.headingId, elementId(doc, 'Item 1. - Business'));
    assert.deepEqual(found.paragraphIds, [elementId(doc, 'Acme plc is a public'), elementId(doc, 'Sustainability is central')]);
    assert.equal(overviewParagraphs(view, 'How many people did Acme employ?'), undefined, 'other questions get none');
  });

  it('falls back to an overview heading where the filing has no business item', async () => {
    const doc = await buildFixtureDoc([
      [{ kind: 'heading', text: 'Results' }, { kind: 'paragraph', sentences: ['Revenue grew to 120 million in the quarter, the best quarter so far.'] }],
      [{ kind: 'heading', text: 'About Acme' }, { kind: 'paragraph', sentences: ['Acme designs, manufactures and sells packaging for consumer goods around the world.'] }],
    ]);
    const found = overviewParagraphs(await DocumentView.of(doc), 'What business is Acme in?');
    assert.deepEqual(found?.paragraphIds, [elementId(doc, 'Acme designs, manufactures')]);
  });

  it('is the filings profile\'s: a document outside it opens no business overview for "What does … do?"', async () => {
    const doc = await buildFixtureDoc(filing);
    const result = await buildEvidenceSubgraph('What does the --watch flag do?', doc, { ...hashDeps(), tokens: bpeTokenCounter() }, { initialPages: 2 });
    assert.ok(!result.trace.steps.some((s) => s.iteration === 0 && s.action.type === 'OPEN_NODE' && /what the company does/.test(s.why ?? '')));
  });

  it('opens them in iteration 0 and reads them whole', async () => {
    const doc = await buildFixtureDoc(filing, { profiles: ['filing'] });
    const question = 'What industry does Acme primarily operate in?';
    const result = await buildEvidenceSubgraph(question, doc, { ...hashDeps(), tokens: bpeTokenCounter() }, { initialPages: 2 });
    const first = elementId(doc, 'Acme plc is a public');
    const second = elementId(doc, 'Sustainability is central');
    assert.ok(result.openedNodeIds.includes(first) && result.openedNodeIds.includes(second), result.openedNodeIds.join(', '));
    const opens = result.trace.steps.filter((s) => s.iteration === 0 && s.action.type === 'OPEN_NODE');
    assert.deepEqual(opens.map((s) => (s.action as { nodeId: string }).nodeId), [first, second]);
    assert.ok(opens.every((s) => s.decidedBy === 'grounding' && /what the company does/.test(s.why!)));
    const kept = result.regions.filter((r) => r.graphNodeId === first);
    assert.ok(kept.length === 1 && kept[0]!.node.kind === 'paragraph', 'the paragraph is read whole, not projected to a sentence');
  });
});
