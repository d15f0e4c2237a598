// A quote's context (issue 33, finding 1): a row shows its table's caption or section, units,
// column headers and grouping label rows; a sentence its heading where it names the subject; the
// extractive answer, the reader input, the evidence XML and every citation carry it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExtractiveReader } from '../../../src/core/read/extractiveReader';
import { renderSubgraphXml } from '../../../src/core/read/evidenceXml';
import { quoteContext } from '../../../src/core/read/quoteContext';
import { annotateCitations, buildReaderInput, type EvidenceRegion } from '../../../src/core/read/reader';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import type { RegionNode } from '../../../src/contracts/region';

const file = 'filing.pdf';
function row(id: string, text: string, extra: Partial<RegionNode> = {}): RegionNode {
  return { id, kind: 'row', modality: 'table', text, anchor: { file, page: 3, row: 0 }, children: [], ...extra };
}
const tableFields = {
  context: 'FORM 10-K › ITEM 8. FINANCIAL STATEMENTS › INCOME STATEMENTS',
  header: 'Year Ended June 30, | 2023 | 2022 | 2021',
  units: 'In millions',
};
const revenue = row('f#1/0.0', 'Total revenue $ 211,915 $ 198,270 $ 168,088', { ...tableFields, caption: 'Revenue was as follows', groups: ['Revenue'] });
const operating = row('f#2/0.0', 'Total $ 88,523 $ 83,383 $ 69,916', { ...tableFields, groups: ['Operating income'] });

describe('quoteContext', () => {
  it('a row: caption (else its section), units, column headers, grouping label rows', () => {
    assert.equal(quoteContext(revenue), 'Revenue was as follows (In millions) · Year Ended June 30, | 2023 | 2022 | 2021 · Revenue');
    assert.equal(quoteContext(operating), 'INCOME STATEMENTS (In millions) · Year Ended June 30, | 2023 | 2022 | 2021 · Operating income');
    assert.equal(quoteContext(row('x', 'a,b', { header: 'h1 | h2' })), 'h1 | h2');
  });

  it('a header over a line of periods reads as one; units the label or header already states are not repeated', () => {
    const flows = row('y', 'Purchases of property and equipment (442) (348)', { caption: 'Cash flows', header: 'Years Ended | December 2, | December 3,', subheader: '2022 | 2021' });
    assert.equal(quoteContext(flows), 'Cash flows · Years Ended | December 2, 2022 | December 3, 2021');
    const titled = row('z', 'Net sales 14,694', { caption: 'Statements of Income ($ in millions)', units: '$ in millions', header: '2023 | 2022' });
    assert.equal(quoteContext(titled), 'Statements of Income ($ in millions) · 2023 | 2022');
    const inHeader = row('w', 'Net sales 14,694', { caption: 'Statements of Income', units: 'Millions', header: '(Millions) | 2018 | 2017' });
    assert.equal(quoteContext(inHeader), 'Statements of Income · (Millions) | 2018 | 2017');
  });

  it('a sentence: its heading when the heading names what the sentence is about and the sentence does not', () => {
    const s = (text: string, context?: string): RegionNode => ({ id: 's', kind: 'sentence', modality: 'text', text, anchor: { file: 'a.md' }, children: [], ...(context ? { context } : {}) });
    assert.equal(quoteContext(s('It was replaced in October.', 'Station report › Wind gauge')), 'Wind gauge');
    assert.equal(quoteContext(s('The wind gauge was replaced in October.', 'Station report › Wind gauge')), undefined, 'the sentence names it');
    assert.equal(quoteContext(s('It was replaced in October.', 'Station report')), undefined, 'a lone top heading titles the document');
    assert.equal(quoteContext(s('Revenue grew 7%.', 'FORM 10-K › Item 7. Results of Operations')), 'Results of Operations', 'the structural label is taken off');
    assert.equal(quoteContext(s('Revenue grew 7%.', 'FORM 10-K › PART II')), undefined, 'a structural label alone names nothing');
    assert.equal(quoteContext(s('Quiet night.', 'line 12 — station: Ridge; year: 2023')), 'line 12 — station: Ridge; year: 2023', "a record's summary");
  });
});

describe('the quote context reaches every reader of a quote', () => {
  const region = (node: RegionNode): EvidenceRegion => ({ itemId: node.id.split('/')[0]!, itemTitle: 'Annual report (p. 4)', file, node, score: 0.5 });

  it('the extractive answer shows it before the quoted row', async () => {
    const a = await new ExtractiveReader().answer('What was total revenue in 2023?', { text: '', tokens: 0, truncated: false, regions: [region(revenue)] });
    assert.equal(a.citations[0]!.nodeId, revenue.id);
    assert.match(a.text, /^Revenue was as follows \(In millions\) · Year Ended June 30, \| 2023 \| 2022 \| 2021 · Revenue → Total revenue \$ 211,915/);
  });

  it('the reader input holds it over each block, the evidence XML on each kept row where it changes', () => {
    const input = buildReaderInput([region(revenue), region(operating)], bpeTokenCounter(), 16_000);
    assert.match(input.text, /\[1\] filing\.pdf — Annual report \(p\. 4\)\nRevenue was as follows \(In millions\) · Year Ended June 30, \| 2023 \| 2022 \| 2021 · Revenue\nTotal revenue/);
    assert.match(input.text, /\[2\] [^\n]+\nINCOME STATEMENTS \(In millions\) · [^\n]+ · Operating income\nTotal \$ 88,523/);
    const element = { document: 'Annual report', graphNodeId: 'f#1/0', type: 'table', summary: 'Table: Year Ended June 30,', page: 3, order: 1 };
    const same = row('f#1/0.1', 'Product $ 1 $ 2 $ 3', { ...tableFields, caption: 'Revenue was as follows', groups: ['Revenue'] });
    const xml = renderSubgraphXml(file, [
      { element, node: revenue, n: 1 },
      { element, node: same, n: 2 },
    ]);
    assert.match(xml, /<row n="1" context="Revenue was as follows \(In millions\) · Year Ended June 30, \| 2023 \| 2022 \| 2021 · Revenue">Total revenue/);
    assert.match(xml, /<row n="2">Product/, 'the same context is not repeated');
  });

  it('every citation gets its context (whichever reader wrote it) and, from a file served stale, the stale flag', () => {
    const answer = {
      mode: 'llm' as const,
      text: 'Revenue was $211,915 million [1]; the Total was $88,523 million [2].',
      citations: [
        { marker: 1, itemId: 'f#1', nodeId: revenue.id, file, anchor: revenue.anchor, text: revenue.text },
        { marker: 2, itemId: 'f#2', nodeId: operating.id, file: 'other.pdf', anchor: operating.anchor, text: operating.text },
      ],
    };
    const out = annotateCitations(answer, { regions: [region(revenue), region(operating)] }, new Set([file]));
    assert.equal(out.citations[0]!.context, quoteContext(revenue));
    assert.equal(out.citations[0]!.stale, true);
    assert.equal(out.citations[1]!.context, quoteContext(operating));
    assert.equal(out.citations[1]!.stale, undefined);
  });
});
