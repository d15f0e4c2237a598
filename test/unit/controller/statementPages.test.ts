// A question that names a financial statement (or whose metric lives in one: quick ratio → balance
// sheet) reaches that statement's page and opens its table in iteration 0 (grounding.ts statementPages → controller.ts), whatever the page's other words:
// not the index of financial statements, not a note that cites the statement by name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { DocumentView } from '../../../src/core/controller/documentView';
import { groundPages, statementPages } from '../../../src/core/controller/grounding';
import { RelevanceModel } from '../../../src/core/controller/relevance';
import { buildEvidenceSubgraph } from '../../../src/core/controller/subgraph';
import { buildFixtureDoc, elementId, hashDeps, type ElementSpec } from './fixtureDoc';

const pages: ElementSpec[][] = [
  [
    { kind: 'heading', text: 'Index to Financial Statements', level: 1 },
    { kind: 'table', header: 'Statement | Page', rows: ['Consolidated Statement of Cash Flows | 3', 'Consolidated Balance Sheet | 4'] },
  ],
  [
    { kind: 'heading', text: 'Liquidity and capital resources', level: 2 },
    { kind: 'paragraph', sentences: ['Capital expenditure amount for fiscal 2018 rose as we expanded capacity, as the cash flow statement shows.', 'We expect capital expenditure to grow.'] },
  ],
  [
    { kind: 'paragraph', sentences: ['Consolidated Statement of Cash Flow s'] },
    { kind: 'paragraph', sentences: ['Years ended December 31'] },
    {
      kind: 'table',
      header: '(Millions) | 2018 | 2017',
      rows: ['Net cash provided by operating activities | 6,439 | 6,240', 'Purchases of property, plant and equipment (PP&E) | (1,577) | (1,373)', 'Net cash used in investing activities | (222) | (3,086)'],
    },
  ],
  [
    { kind: 'paragraph', sentences: ['Consolidated Balance Shee t'] },
    { kind: 'table', header: '(Millions) | 2018 | 2017', rows: ['Total current assets | 13,709 | 14,277', 'Total assets | 36,500 | 37,987', 'Total liabilities | 26,652 | 26,365'] },
  ],
  [
    { kind: 'heading', text: 'Note 7 - Supplemental cash flow information', level: 2 },
    { kind: 'paragraph', sentences: ['The statement of cash flows excludes non-cash investing activities of $40 million.'] },
  ],
  [
    // An income statement the PDF layout split in two: its subtotal read as a line of text between the tables.
    { kind: 'paragraph', sentences: ['Consolidated Statements of Income'] },
    { kind: 'table', header: '(Millions) | 2018 | 2017', rows: ['Net sales | 32,765 | 31,657', 'Cost of sales | (16,682) | (16,055)'] },
    { kind: 'paragraph', sentences: ['Gross profit 16,083 15,602'] },
    { kind: 'table', header: '(Millions) | 2018 | 2017', rows: ['Operating income | 7,207 | 7,692', 'Income tax expense | (1,637) | (2,679)'] },
    { kind: 'paragraph', sentences: ['Net income 5,349 4,858'] },
  ],
  [
    // The same statement for part of the company: same line items, other figures.
    { kind: 'paragraph', sentences: ['Deed of Cross Guarantee Consolidated Statements of Income'] },
    { kind: 'table', header: '(Millions) | 2018 | 2017', rows: ['Net sales | 377 | 391', 'Gross profit | 58 | 54', 'Net income | 487 | 1,153'] },
  ],
];

const QUESTION = 'What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to the question by relying on the details shown in the cash flow statement.';

describe('controller: the statement the question names', () => {
  it('finds the statement page by its (PDF-split) head and its own line items, not the index or a note', async () => {
    const doc = await buildFixtureDoc(pages, { profiles: ['filing'] });
    const view = await DocumentView.of(doc);
    const relevance = await RelevanceModel.create(QUESTION, view, hashDeps());
    const grounding = groundPages(view, relevance);
    const found = statementPages(view, QUESTION, grounding);
    assert.deepEqual(found.map((f) => [f.page, f.statement]), [[2, 'cash-flow']]);
    assert.deepEqual(found[0]!.tableIds, [elementId(doc, 'Purchases of property')]);
    assert.deepEqual(statementPages(view, 'Using the balance sheet, what were total assets at the end of FY2018?', grounding).map((f) => [f.page, f.statement]), [[3, 'balance-sheet']]);
    // No statement named: the one the metric lives in (capital expenditure → the cash flow statement), marked implied.
    assert.deepEqual(statementPages(view, 'What is the FY2018 capital expenditure amount for 3M?', grounding).map((f) => [f.page, f.statement, f.implied]), [[2, 'cash-flow', true]]);
    assert.deepEqual(statementPages(view, "Has 3M's current ratio improved between FY2017 and FY2018?", grounding).map((f) => [f.page, f.statement, f.implied]), [[3, 'balance-sheet', true]]);
    assert.equal(found[0]!.implied, false);
    assert.deepEqual(statementPages(view, 'Which business group of 3M grew fastest in FY2018?', grounding), [], 'no statement named or implied, none taken');
    // The split statement: no table lists sales, net income and operating income; the page's tables and lines together do.
    const income = statementPages(view, 'Does 3M have an improving gross margin profile as of FY2018?', grounding);
    assert.deepEqual(income.map((f) => [f.page, f.statement]), [[5, 'income']]);
    assert.deepEqual(income[0]!.tableIds, [elementId(doc, 'Net sales | 32,765'), elementId(doc, 'Operating income')]);
    // A statement of part of the company is no statement of the company, unless the question asks about that part.
    assert.deepEqual(statementPages(view, 'What is the gross profit of the closed group under the deed of cross guarantee in FY2018?', grounding).map((f) => f.page), [5, 6]);
    // An adjusted measure is read from its reconciliation, not from a statement.
    assert.deepEqual(statementPages(view, 'What was the FY2018 Adjusted operating income margin?', grounding), []);
  });

  it('opens the statement table in iteration 0, with the reason in the trace, and keeps its row for the reader', async () => {
    const doc = await buildFixtureDoc(pages, { profiles: ['filing'] });
    const table = elementId(doc, 'Purchases of property');
    const result = await buildEvidenceSubgraph(QUESTION, doc, { ...hashDeps(), tokens: bpeTokenCounter() }, { initialPages: 1, maxIterations: 1 });
    assert.ok(result.openedNodeIds.includes(table), `opened ${result.openedNodeIds.join(', ')}`);
    const open = result.trace.steps.find((s) => s.iteration === 0 && s.action.type === 'OPEN_NODE')!;
    assert.equal(open.decidedBy, 'grounding');
    assert.match(open.why!, /the question names the cash flow statement: its table on page 3/);
    assert.ok(result.regions.some((r) => /Purchases of property/.test(r.node.text)), 'the capex row reaches the reader');

  });

  it('reads the statement\'s tables whole: every line reaches the reader, not only those that score best against the question', async () => {
    const lines = [
      'Net income | 5,363 | 4,869',
      'Depreciation and amortization | 1,488 | 1,544',
      'Company pension and postretirement contributions | (370) | (967)',
      'Stock-based compensation expense | 302 | 324',
      'Deferred income taxes | (57) | 107',
      'Accounts receivable | (305) | (245)',
      'Inventories | (509) | (387)',
      'Accounts payable | 408 | 24',
      'Net cash provided by operating activities | 6,439 | 6,240',
      'Purchases of property, plant and equipment (PP&E) | (1,577) | (1,373)',
      'Proceeds from sale of PP&E and other assets | 262 | 49',
      'Acquisitions, net of cash acquired | 13 | (2,023)',
      'Purchases of marketable securities and investments | (1,828) | (2,152)',
      'Net cash used in investing activities | (222) | (3,086)',
    ];
    const doc = await buildFixtureDoc([
      [{ kind: 'paragraph', sentences: ['Consolidated Statement of Cash Flows'] }, { kind: 'table', header: '(Millions) | 2018 | 2017', rows: lines }],
      [{ kind: 'paragraph', sentences: ['Capital expenditure rose as we expanded capacity.'] }],
    ], { profiles: ['filing'] });
    const result = await buildEvidenceSubgraph(QUESTION, doc, { ...hashDeps(), tokens: bpeTokenCounter() }, { initialPages: 1, maxIterations: 1 });
    const text = result.regions.map((r) => r.node.text).join('\n');
    for (const line of lines) assert.ok(text.includes(line.split(' | ')[0]!), line);
  });

  it('opens no statement when told not to (a filing of another company than the one the question names)', async () => {
    const doc = await buildFixtureDoc(pages, { profiles: ['filing'] });
    const result = await buildEvidenceSubgraph(QUESTION, doc, { ...hashDeps(), tokens: bpeTokenCounter(), openStatements: false }, { initialPages: 1, maxIterations: 1 });
    assert.ok(!result.trace.steps.some((s) => s.iteration === 0 && s.action.type === 'OPEN_NODE'), 'no table opened in iteration 0');
  });
});
