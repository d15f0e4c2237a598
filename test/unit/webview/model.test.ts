/**
 * webview/model.ts: what the inspector derives for labels — a long PDF's page runs titled by their
 * first real heading, running headers ("Table of Contents" on every page of a filing) kept out of
 * labels and titles, and a region's whole text from its leaves.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AskTrace, TraceNode, TraceRetrievedItem } from '../../../src/contracts/trace';
import { TraceModel, wholeText } from '../../../webview/model';

const file = 'filing.pdf';
let n = 0;
const leaf = (kind: string, text: string, page: number): TraceNode => ({ id: `n${n++}`, kind, modality: 'text', anchor: { file, page }, tokens: 5, decision: 'not-visited', rule: 'none', text, children: [] }) as TraceNode;
const inner = (kind: string, children: TraceNode[], page?: number): TraceNode =>
  ({ id: `n${n++}`, kind, modality: 'text', anchor: page === undefined ? { file } : { file, page }, tokens: 5, decision: 'not-visited', rule: 'none', preview: children.map((c) => c.text ?? c.preview).join('\n').slice(0, 160), children }) as TraceNode;

/** A filing page: the running header, a body, the running footer. */
const page = (i: number, body: TraceNode[]) => inner('page', [leaf('paragraph', 'Table of Contents', i), ...body, leaf('paragraph', 'FORM 10-K', i)], i);

function model(): { m: TraceModel; item: TraceRetrievedItem } {
  const tree = inner('document', [
    page(40, [leaf('heading', 'Table of Contents', 40), leaf('paragraph', 'Revenue rose in 2017 and 2016.', 40)]),
    page(41, [inner('section', [leaf('heading', 'Item 7. Management’s Discussion and Analysis', 41), leaf('paragraph', 'Net revenues were $11.7 billion.', 41)])]),
    page(42, [leaf('paragraph', 'Operating income grew.', 42)]),
  ]);
  const item = { itemId: 'i', file, title: 'FORM 10-K (p. 41–43)', modality: 'text', rank: 0, scores: { fused: 1 }, repeated: false, tree, keptNodeIds: [], tokens: { whole: 1, kept: 0 } } as unknown as TraceRetrievedItem;
  return { m: new TraceModel({ settings: { compressor: { name: 'canopy' } }, rounds: [{ round: 1, retrieved: [item] }], answer: { citations: [] } } as unknown as AskTrace), item };
}

describe('labels and titles a person can tell apart', () => {
  test('a page run is titled by its first heading that is not a running header', () => {
    const { m } = model();
    assert.deepEqual([...m.runningHeaders(file)].sort(), ['form 10-k', 'table of contents']);
    assert.equal(m.displayTitle(m.items[0]!), 'FORM 10-K — Item 7. Management’s Discussion and Analysis (p. 41–43)');
  });

  test('labels skip the running header they start with', () => {
    const { m, item } = model();
    const firstPage = item.tree!.children[0]!;
    assert.match(firstPage.preview!, /^Table of Contents/);
    assert.match(m.labelText(m.ref(firstPage.id)!), /^Revenue rose in 2017/);
    // A region that is only the header keeps its text.
    const header = firstPage.children[0]!;
    assert.equal(m.labelText(m.ref(header.id)!), 'Table of Contents');
  });

  test('a region’s whole text is its leaves in order, with a table header once; long texts are cut and say by how much', () => {
    const { item } = model();
    const whole = wholeText(item.tree!.children[1]!);
    assert.equal(whole.text, 'Table of Contents\nItem 7. Management’s Discussion and Analysis\nNet revenues were $11.7 billion.\nFORM 10-K');
    assert.equal(whole.cut, 0);
    const cut = wholeText(item.tree!, 40);
    assert.equal(cut.text.length, 40);
    assert.ok(cut.cut > 100);
  });
});
