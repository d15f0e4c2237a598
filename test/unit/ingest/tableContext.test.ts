import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { unitsIn } from '../../../src/core/ingest/tableContext';
import type { RegionNode } from '../../../src/contracts/region';
import { allNodes, ofKind } from './helpers';
import { TextRun, writePdf } from './pdfWriter';

const enc = (s: string) => new TextEncoder().encode(s);

/** Each data row's text with the context fields the parser set on it. */
function rowContext(rows: RegionNode[]) {
  return rows
    .filter((r) => r.anchor.row !== undefined)
    .map((r) => ({ text: r.text, caption: r.caption, units: r.units, groups: r.groups }));
}

/** A statement page: running head, lead-in, units line, header, a label row with indented rows and a total, then rows at the label's indent. */
function statementPage(page: number): TextRun[] {
  const runs: TextRun[] = [
    { x: 72, y: 760, size: 9, text: 'Table of Contents' },
    { x: 72, y: 730, size: 10, text: `${['Segment', 'Quarterly', 'Regional'][page - 1]} results were as follows during the periods presented:` },
    { x: 72, y: 712, size: 10, text: '(In millions, except per share amounts)' },
  ];
  const rows: Array<[number, string, string, string]> = [
    [72, 'Year Ended June 30,', '2016', '2015'],
    [72, 'Revenue:', '', ''],
    [84, 'Product', '61,502', '75,956'],
    [84, 'Service and other', '23,818', '17,624'],
    [96, 'Total revenue', '85,320', '93,580'],
    [72, 'Research and development', '11,988', '12,046'],
    [72, 'Operating income (loss)', '', ''],
    [72, 'Intelligent Cloud', '9,358', '9,871'],
    [72, 'More Personal Computing', '6,142', '4,667'],
    [72, 'Total', '20,182', '18,161'],
    [72, 'Net income', '16,798', '12,193'],
  ];
  rows.forEach(([x, label, a, b], i) => {
    const y = 690 - i * 14;
    runs.push({ x, y, size: 10, text: label });
    if (a) runs.push({ x: 360, y, size: 10, text: a });
    if (b) runs.push({ x: 440, y, size: 10, text: b });
  });
  runs.push({ x: 300, y: 60, size: 9, text: String(40 + page) });
  return runs;
}

describe('table context at parse time (caption or lead-in, units, grouping label rows)', () => {
  it('PDF: a row carries its lead-in, units, header and the label rows that group it; running heads are never a lead-in', async () => {
    const doc = await parseFile('report.pdf', writePdf([1, 2, 3].map(statementPage)), { graph: false });
    const tables = ofKind(doc.items, 'table');
    assert.equal(tables.length, 3);
    const rows = rowContext(tables[0]!.children.flatMap(function flat(n: RegionNode): RegionNode[] {
      return n.kind === 'row' ? [n] : n.children.flatMap(flat);
    }));
    const caption = 'Segment results were as follows during the periods presented';
    const units = 'In millions, except per share amounts';
    assert.deepEqual(rows, [
      { text: 'Revenue:', caption, units, groups: undefined },
      { text: 'Product 61,502 75,956', caption, units, groups: ['Revenue'] },
      { text: 'Service and other 23,818 17,624', caption, units, groups: ['Revenue'] },
      { text: 'Total revenue 85,320 93,580', caption, units, groups: ['Revenue'] },
      // Back at the label's indent after indented rows: the Revenue group has ended.
      { text: 'Research and development 11,988 12,046', caption, units, groups: undefined },
      { text: 'Operating income (loss)', caption, units, groups: undefined },
      // Rows at the label's own indent stay in its group up to the total, which closes it.
      { text: 'Intelligent Cloud 9,358 9,871', caption, units, groups: ['Operating income (loss)'] },
      { text: 'More Personal Computing 6,142 4,667', caption, units, groups: ['Operating income (loss)'] },
      { text: 'Total 20,182 18,161', caption, units, groups: ['Operating income (loss)'] },
      { text: 'Net income 16,798 12,193', caption, units, groups: undefined },
    ]);
    const total = allNodes(doc.items).find((n) => n.kind === 'row' && n.text.startsWith('Total 20,182'))!;
    assert.equal(total.header, 'Year Ended June 30, | 2016 | 2015');
    assert.equal(tables[0]!.caption, caption);
    assert.equal(tables[0]!.units, units);
  });

  it('Markdown: the lead-in paragraph above a pipe table, units in it, bold label rows and totals', async () => {
    const md = [
      '# Annual report',
      '',
      '## Results',
      '',
      'Revenue by segment was as follows (in thousands):',
      '',
      '| Segment | 2023 | 2022 |',
      '| --- | ---: | ---: |',
      '| **Revenue** | | |',
      '| Cloud | 120 | 100 |',
      '| Devices | 80 | 90 |',
      '| Total revenue | 200 | 190 |',
      '| Headcount | 12 | 11 |',
      '',
    ].join('\n');
    const doc = await parseFile('report.md', enc(md), { graph: false });
    const rows = rowContext(ofKind(doc.items, 'row'));
    const caption = 'Revenue by segment was as follows (in thousands)';
    assert.deepEqual(rows, [
      { text: '| **Revenue** | | |', caption, units: 'in thousands', groups: undefined },
      { text: '| Cloud | 120 | 100 |', caption, units: 'in thousands', groups: ['Revenue'] },
      { text: '| Devices | 80 | 90 |', caption, units: 'in thousands', groups: ['Revenue'] },
      { text: '| Total revenue | 200 | 190 |', caption, units: 'in thousands', groups: ['Revenue'] },
      { text: '| Headcount | 12 | 11 |', caption, units: 'in thousands', groups: undefined },
    ]);
    assert.equal(ofKind(doc.items, 'row')[0]!.context, 'Annual report › Results');
  });

  it('HTML: <caption> is the caption, units read from the header row', async () => {
    const html = `<html><body><h1>Figures</h1><p>Some prose about the year, which ends with a full stop.</p>
      <table><caption>Balance sheet</caption>
      <thead><tr><th>($ millions)</th><th>2023</th><th>2022</th></tr></thead>
      <tbody><tr><td>Assets</td><td></td><td></td></tr><tr><td>Cash</td><td>5</td><td>4</td></tr>
      <tr><td>Total assets</td><td>9</td><td>8</td></tr></tbody></table></body></html>`;
    const doc = await parseFile('figures.html', enc(html), { graph: false });
    assert.deepEqual(rowContext(ofKind(doc.items, 'row')), [
      { text: 'Assets', caption: 'Balance sheet', units: '$ millions', groups: undefined },
      { text: 'Cash 5 4', caption: 'Balance sheet', units: '$ millions', groups: ['Assets'] },
      { text: 'Total assets 9 8', caption: 'Balance sheet', units: '$ millions', groups: ['Assets'] },
    ]);
  });

  it('CSV: a label row groups the rows below it; a prose paragraph above a table is no lead-in; a table of text has no groups', async () => {
    const csv = 'Item,Amount (in thousands of euros)\nIncome,\nSales,10\nFees,2\nTotal income,12\n';
    const doc = await parseFile('ledger.csv', enc(csv), { graph: false });
    assert.deepEqual(rowContext(ofKind(doc.items, 'row')), [
      { text: 'Income,', caption: undefined, units: 'in thousands of euros', groups: undefined },
      { text: 'Sales,10', caption: undefined, units: 'in thousands of euros', groups: ['Income'] },
      { text: 'Fees,2', caption: undefined, units: 'in thousands of euros', groups: ['Income'] },
      { text: 'Total income,12', caption: undefined, units: 'in thousands of euros', groups: ['Income'] },
    ]);
    const md = 'The glossary below lists terms. It is long and ends with a full stop.\n\n| Term | Meaning |\n| --- | --- |\n| Gust | A short burst of wind |\n| Lull | A calm spell |\n| Squall | A sudden storm |\n';
    const glossary = rowContext(ofKind((await parseFile('glossary.md', enc(md), { graph: false })).items, 'row'));
    assert.ok(glossary.every((r) => r.groups === undefined && r.caption === undefined && r.units === undefined), JSON.stringify(glossary));
  });

  it('PDF: a header over a second line of periods keeps the periods as the table\'s subheader; the row stays a data row', async () => {
    const runs: TextRun[] = [{ x: 72, y: 730, size: 10, text: 'Consolidated Statements of Cash Flows' }];
    const rows: Array<[string, string, string]> = [
      ['Years Ended', 'December 2,', 'December 3,'],
      ['', '2022', '2021'],
      ['Net income', '4,756', '4,822'],
      ['Purchases of property and equipment', '(442)', '(348)'],
    ];
    rows.forEach(([a, b, c], i) => {
      const y = 700 - i * 14;
      if (a) runs.push({ x: 72, y, size: 10, text: a });
      runs.push({ x: 360, y, size: 10, text: b }, { x: 440, y, size: 10, text: c });
    });
    const doc = await parseFile('flows.pdf', writePdf([runs]), { graph: false });
    const purchases = ofKind(doc.items, 'row').find((r) => r.text.startsWith('Purchases'))!;
    assert.equal(purchases.header, 'Years Ended | December 2, | December 3,');
    assert.equal(purchases.subheader, '2022 | 2021');
    assert.equal(purchases.caption, 'Consolidated Statements of Cash Flows');
    assert.equal(ofKind(doc.items, 'row').find((r) => r.text === '2022 2021')!.anchor.row, 0, 'the period line is still a data row');
  });

  it('reads the units phrases documents use', () => {
    assert.equal(unitsIn('(In millions, except per share amounts)'), 'In millions, except per share amounts');
    assert.equal(unitsIn('(Millions)'), 'Millions');
    assert.equal(unitsIn('Dollars in thousands'), 'Dollars in thousands');
    assert.equal(unitsIn('($ in millions)'), '$ in millions');
    assert.equal(unitsIn('amounts in thousands of U.S. dollars'), 'amounts in thousands of U.S. dollars');
    assert.equal(unitsIn('We operate in three segments.'), undefined);
    assert.equal(unitsIn('Sales rose in 2023.'), undefined);
  });
});
