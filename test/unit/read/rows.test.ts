// Table rows as answers to financial-statement questions (src/core/read/rows.ts) and the reader's
// use of them: a statement row naming the asked line item with a figure for the asked period beats
// prose that mentions the metric; the statement a question names is found under a PDF-split title.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExtractiveReader } from '../../../src/core/read/extractiveReader';
import { askedFigure, askedSpan, formulaItems, hasFigure, labelKey, periodSpan, rowLabel, rowScale, rowSupport, statementNameTerms, statementsAsked, statementsNamed, tableFacts, yearsNamed } from '../../../src/core/read/rows';
import type { EvidenceRegion } from '../../../src/core/read/reader';
import type { RegionKind, RegionNode } from '../../../src/contracts/region';

let n = 0;
function leaf(text: string, kind: RegionKind = 'sentence', header?: string, page = 10): RegionNode {
  return { id: `r/0.${n++}`, kind, modality: 'text', text, ...(header !== undefined ? { header } : {}), anchor: { file: 'x.pdf', page }, children: [] };
}
function region(file: string, title: string, kind: RegionKind, leaves: RegionNode[], score = 0.3): EvidenceRegion {
  const node: RegionNode = { id: `${file}/${n++}`, kind, modality: 'text', text: leaves.map((l) => l.text).join('\n'), anchor: { file }, children: leaves };
  return { itemId: `${file}#${n++}`, itemTitle: title, file, node, score, leafScores: new Map(leaves.map((l) => [l.id, score])) };
}
const flat = () => 1;

describe('rows: what a financial question asks', () => {
  it('reads fiscal years, quarters and dates as their year', () => {
    assert.deepEqual(yearsNamed('FY2018 and fiscal 2022, as of December 31, 2021'), ['2018', '2022', '2021']);
    assert.deepEqual(yearsNamed("revenues in Q22023, as of Q2'2024 and FY22"), ['2023', '2024', '2022']);
    assert.deepEqual(yearsNamed('Net sales rose 12%'), []);
  });

  it('finds the statements a question or title names, a PDF-split word included', () => {
    assert.deepEqual(statementsNamed('Consolidated Balance Shee t'), ['balance-sheet']);
    assert.deepEqual(statementsNamed('Consolidated Statement of Cash Flow s'), ['cash-flow']);
    assert.deepEqual(statementsNamed('basing your answers off of the statement of income and the statement of financial position'), ['balance-sheet', 'income']);
    assert.deepEqual(statementsNamed('Cash flow from operations rose.'), []);
  });

  it('reads the statement a metric lives in when the question names none, and a ratio\'s line items', () => {
    assert.deepEqual(statementsAsked("Has AMCOR's quick ratio improved or declined between FY2023 and FY2022?"), ['balance-sheet']);
    assert.deepEqual(statementsAsked('Does Adobe have an improving operating margin profile as of FY2022?'), ['income']);
    assert.deepEqual(statementsAsked('Does Adobe have an improving Free cashflow conversion as of FY2022?'), ['cash-flow']);
    assert.deepEqual(statementsAsked('What is the FY2021 inventory turnover ratio for Nike?'), ['balance-sheet', 'income']);
    // A named statement wins over the metric's; revenue alone and prose questions imply none.
    assert.deepEqual(statementsAsked('What were total assets at the end of FY2021? Use the cash flow statement.'), ['cash-flow']);
    assert.deepEqual(statementsAsked('Which region had the biggest drop in revenues in Q2 2023?'), []);
    assert.deepEqual(statementsAsked('What industry does AMCOR primarily operate in?'), []);
    const quick = askedFigure("Has AMCOR's quick ratio improved or declined between FY2023 and FY2022?", "Has AMCOR's quick ratio improved or declined between FY2023 and FY2022?", ['amcor202310k']);
    assert.deepEqual(quick.statements, ['balance-sheet']);
    for (const t of ['current', 'asset', 'inventori', 'liabil']) assert.ok(quick.metricTerms.some((m) => m.startsWith(t)), `${t} in ${quick.metricTerms.join(' ')}`);
    assert.equal(formulaItems('What industry is it in?'), '');
  });

  it('keeps the metric terms, not periods, statement words, units, instructions or the company', () => {
    const asked = 'What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to the question by relying on the details shown in the cash flow statement.';
    const f = askedFigure(asked, 'What is the FY2018 capital expenditure amount for 3M?', ['3m201810k']);
    assert.deepEqual(f.years, ['2018']);
    assert.deepEqual(f.statements, ['cash-flow']);
    assert.ok(f.metricTerms.includes('capit') && f.metricTerms.includes('expenditur'), f.metricTerms.join(' '));
    for (const t of ['2018', 'amount', 'usd', 'million', '3m', 'cash', 'flow', 'statement']) assert.ok(!f.metricTerms.includes(t), `${t} is no metric term`);
    // A sentence that says how to compute the figure adds its line items.
    const g = askedFigure('What is the FY2015 unadjusted EBITDA % margin for Netflix? Calculate unadjusted EBITDA using unadjusted operating income and D&A (from cash flow statement).', 'What is the FY2015 unadjusted EBITDA % margin for Netflix?', ['netflix201510k']);
    assert.ok(g.metricTerms.includes('oper') && g.metricTerms.includes('depreci'), g.metricTerms.join(' '));
    assert.ok(!g.metricTerms.includes('netflix'));
  });

  it('reads a statement\'s name as where to look, unless its words name the metric elsewhere too', () => {
    const asked = 'When primarily referencing the income statement and the statement of financial position, what is the FY2021 inventory turnover ratio for Nike?';
    const where = statementNameTerms(asked, askedFigure(asked, asked));
    for (const t of ['incom', 'statement', 'financi', 'posit']) assert.ok(where.has(t), t);
    assert.ok(!where.has('inventori'));
    const net = 'By drawing conclusions from the income statement, what is Amazon\'s FY2019 net income?';
    assert.ok(!statementNameTerms(net, askedFigure(net, net)).has('incom'), 'net income keeps "income"');
  });

  it('reads a row\'s label before its first figure, footnote marks aside', () => {
    assert.equal(rowLabel('Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)'), 'Purchases of property, plant and equipment (PP&E)');
    assert.equal(rowLabel('Total assets $ 59,268 $ 55,556'), 'Total assets');
    assert.equal(rowLabel('Unconsolidated affiliates(1) (43,029) (49,698)'), 'Unconsolidated affiliates(1)');
    // A year is no figure: a glossary row that dates something is not a statement line.
    assert.equal(hasFigure('Upjohn Business Pfizer’s former off-patent business, spun off in November 2020'), false);
    assert.equal(hasFigure('Total stores 982 969'), true);
  });
});

describe('rows: tables', () => {
  it('takes the column years from the header and the opening rows, and the statement from its line items or title', () => {
    const cash = [leaf('2022 2021 2020', 'row'), leaf('Net cash provided by operating activities 3,316.1 2,983.2 3,676.2', 'row', '2022 | 2021 | 2020'), leaf('Net cash used by investing activities (1,690.7) (512.8) (486.2)', 'row', '2022 | 2021 | 2020')];
    const t = tableFacts(cash);
    assert.deepEqual([...t.years].sort(), ['2020', '2021', '2022']);
    assert.equal(t.statement, 'cash-flow');
    const titled = tableFacts([leaf('Total assets $ 30,775 $ 28,898', 'row', 'Consolidated Balance Shee t | ')]);
    assert.equal(titled.statement, 'balance-sheet');
    // Years in the body (a row's own figures) are no column labels.
    const body = tableFacts([leaf('Three months ended', 'row'), leaf('Revenue 1,999 2,001', 'row', 'Q2 | Q1')]);
    assert.equal(body.years.size, 0);
  });

  it('scores a row by its label naming the metric, the asked year among its columns and the named statement', () => {
    const f = askedFigure('Using only the balance sheet, what were total assets at the end of FY2021?', 'What were total assets at the end of FY2021?');
    const bs = tableFacts([leaf('Total assets 100 90', 'row', '2021 | 2020'), leaf('Total liabilities 50 40', 'row', '2021 | 2020')]);
    const old = tableFacts([leaf('Total assets 80 70', 'row', '2019 | 2018'), leaf('Total liabilities 30 20', 'row', '2019 | 2018')]);
    const total = leaf('Total assets 100 90', 'row', '2021 | 2020');
    const current = leaf('Total current assets 60 50', 'row', '2021 | 2020');
    const s = rowSupport(f, total, bs, flat);
    assert.ok(s > 0.9, `full support ${s}`);
    assert.ok(rowSupport(f, current, bs, flat) < s, 'a label that qualifies the metric scores lower');
    assert.ok(rowSupport(f, leaf('Total assets 80 70', 'row', '2019 | 2018'), old, flat) < s / 2, 'a table of other years');
    assert.equal(rowSupport(f, leaf('Total assets', 'row'), bs, flat), 0, 'a row without a figure');
    assert.equal(rowSupport(f, leaf('Inventories 10 9', 'row', '2021 | 2020'), bs, flat), 0, 'a row naming another line item');
    const g = askedFigure('How much does Pfizer expect to pay to spin off Upjohn?', 'How much does Pfizer expect to pay to spin off Upjohn?');
    const glossary = leaf('Upjohn Business Pfizer’s former off-patent branded business, which included a portfolio of 20 globally recognized solid', 'row', 'NSCLC | non-small cell lung cancer');
    assert.equal(rowSupport(g, glossary, tableFacts([glossary]), flat), 0, 'prose in a table is no line item');
  });

  it('prefers the consolidated statement to one of part of the company, unless the question asks about that part', () => {
    const rows = () => [leaf('Total current assets 1,949 2,010', 'row', 'As of June 30, | 2023 | 2022'), leaf('Total current liabilities 4,476 5,103', 'row', 'As of June 30, | 2023 | 2022')];
    const consolidated = tableFacts(rows(), 'AMCOR PLC › Consolidated Balance Sheets');
    const obligor = tableFacts(rows(), 'AMCOR PLC › Balance Sheet for Obligor Group (in millions)');
    const cross = tableFacts(rows(), 'Deed of Cross Guarantee › Balance Sheet of the Closed Group');
    assert.equal(consolidated.partOfCompany, undefined);
    assert.equal(obligor.partOfCompany, true);
    assert.equal(cross.partOfCompany, true);
    const row = leaf('Total current assets 1,949 2,010', 'row', 'As of June 30, | 2023 | 2022');
    const company = askedFigure("What were AMCOR's total current assets at the end of FY2023?", "What were AMCOR's total current assets at the end of FY2023?");
    const full = rowSupport(company, row, consolidated, flat);
    assert.ok(full > 0, 'the consolidated row answers');
    assert.ok(rowSupport(company, row, obligor, flat) <= full / 2 + 1e-9, 'the obligor group’s row is worth at most half');
    assert.ok(rowSupport(company, row, cross, flat) <= full / 2 + 1e-9, 'so is the closed group’s');
    const guarantors = askedFigure("What were the total current assets of AMCOR's guarantor group in FY2023?", "What were the total current assets of AMCOR's guarantor group in FY2023?");
    assert.equal(guarantors.partOfCompany, true);
    assert.ok(rowSupport(guarantors, row, obligor, flat) > rowSupport(company, row, obligor, flat), 'asked about the group, its own statement is not cut');
  });
});

describe('ExtractiveReader: statement rows', () => {
  const reader = new ExtractiveReader();

  it('quotes the statement row with the asked year\'s figure over prose that mentions the metric, with [1] on it', async () => {
    const prose = leaf('Capital expenditures increased in 2018 as the company expanded manufacturing capacity across several business groups.', 'sentence', undefined, 40);
    const proseAmount = leaf('We expect capital expenditures of about $1.8 billion in 2019.', 'sentence', undefined, 41);
    const head = leaf('2018 2017 2016', 'row', undefined, 59);
    const capex = leaf('Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)', 'row', '2018 | 2017 | 2016', 59);
    const ops = leaf('Net cash provided by operating activities 6,439 6,240 6,662', 'row', '2018 | 2017 | 2016', 59);
    const inv = leaf('Net cash used in investing activities (222) (3,086) (1,403)', 'row', '2018 | 2017 | 2016', 59);
    const regions = [
      region('3M_2018_10K.pdf', '3M 10-K', 'paragraph', [prose, proseAmount], 0.5),
      region('3M_2018_10K.pdf', '3M 10-K', 'table', [head, ops, capex, inv], 0.2),
    ];
    const a = await reader.answer('What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response by relying on the cash flow statement.', { text: '', tokens: 0, truncated: false, regions });
    assert.equal(a.citations[0]!.nodeId, capex.id, a.text);
    assert.equal(a.citations[0]!.anchor.page, 59);
  });

  it('reaches the balance sheet under a PDF-split title ("Balance Shee t") and the asked year\'s table', async () => {
    const segment = [leaf('Total assets by segment', 'row'), leaf('Total assets 40,100 38,900', 'row', 'Segments | 2021 | 2020', 80)];
    const older = [leaf('Total assets 33,017 30,000', 'row', 'Consolidated Balance Shee t | 2019 | 2018', 20)];
    const sheet = [leaf('Total current assets 26,291 20,556', 'row', 'Consolidated Balance Shee t | 2021 | 2020', 37), leaf('Total assets 59,268 55,556', 'row', 'Consolidated Balance Shee t | 2021 | 2020', 37)];
    const regions = [region('COSTCO_2021_10K.pdf', 'Costco 10-K', 'table', segment), region('COSTCO_2021_10K.pdf', 'Costco 10-K', 'table', older), region('COSTCO_2021_10K.pdf', 'Costco 10-K', 'table', sheet)];
    const a = await reader.answer('Using only the information within the balance sheet, how much total assets did Costco have at the end of FY2021? Answer in USD millions.', { text: '', tokens: 0, truncated: false, regions });
    assert.equal(a.citations[0]!.nodeId, sheet[1]!.id, a.text);
  });

  it('keeps a table of other years below prose even when its row is the best-named one', async () => {
    const older = leaf('Total Domestic segment stores 1,369 (71) 1,298', 'row', 'Fiscal 2017 | Fiscal 2018', 31);
    const prose = leaf('Entertainment comparable sales grew 9.0% in the domestic segment in fiscal 2024, the best of any product category.', 'sentence', undefined, 17);
    const regions = [region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [older]), region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'paragraph', [prose])];
    const a = await reader.answer('Which Best Buy product category performed the best in the domestic market during Q2 of FY2024?', { text: '', tokens: 0, truncated: false, regions });
    assert.equal(a.citations[0]!.nodeId, prose.id, a.text);
  });

  it('quotes a statement row, not the auditor\'s sentence that names every statement', async () => {
    const auditor = leaf('We have audited the accompanying consolidated balance sheets of Nike as of May 31, 2021 and 2020, and the related consolidated statements of income and of cash flows.', 'sentence', undefined, 56);
    const cogs = leaf('Cost of sales 28,925 21,162', 'row', 'Consolidated Statements of Income | 2021 | 2020', 58);
    const inv = leaf('Inventories 6,854 7,367', 'row', 'Consolidated Balance Sheets | 2021 | 2020', 60);
    const regions = [region('NIKE_2021_10K.pdf', 'Nike 10-K', 'paragraph', [auditor]), region('NIKE_2021_10K.pdf', 'Nike 10-K', 'table', [cogs]), region('NIKE_2021_10K.pdf', 'Nike 10-K', 'table', [inv])];
    const a = await reader.answer('When primarily referencing the income statement and the balance sheet, what is the FY2021 inventory turnover ratio for Nike? Inventory turnover ratio is defined as: (FY2021 COGS) / (average inventory between FY2020 and FY2021).', { text: '', tokens: 0, truncated: false, regions });
    assert.notEqual(a.citations[0]!.nodeId, auditor.id, a.text);
    assert.ok([cogs.id, inv.id].includes(a.citations[0]!.nodeId), a.text);
  });

  it('quotes the asked statement\'s row over the auditor\'s sentence that names the company, the statement and the year', async () => {
    const auditor = leaf('We have audited the accompanying consolidated balance sheets of Best Buy Co., Inc. as of February 2, 2019 and February 3, 2018, and the related statements for each of the fiscal years then ended, in the period ended February 2, 2019.', 'sentence', undefined, 49);
    const prose = leaf('During fiscal 2018, we purchased greater amounts of inventory with shorter payment terms than in the year before.', 'sentence', undefined, 40);
    const head = leaf('February 2, 2019 February 3, 2018', 'row', undefined, 51);
    const cash = leaf('Cash and cash equivalents $ 1,980 $ 1,101', 'row', 'Consolidated Balance Sheets | February 2, 2019 | February 3, 2018', 51);
    const inventories = leaf('Merchandise inventories 5,409 5,209', 'row', 'Consolidated Balance Sheets | February 2, 2019 | February 3, 2018', 51);
    const assets = leaf('Total assets 12,901 13,049', 'row', 'Consolidated Balance Sheets | February 2, 2019 | February 3, 2018', 51);
    const liabilities = leaf('Total liabilities 9,595 9,437', 'row', 'Consolidated Balance Sheets | February 2, 2019 | February 3, 2018', 51);
    const regions = [
      region('BESTBUY_2019_10K.pdf', 'Best Buy 10-K', 'paragraph', [auditor], 0.45),
      region('BESTBUY_2019_10K.pdf', 'Best Buy 10-K', 'paragraph', [prose], 0.4),
      region('BESTBUY_2019_10K.pdf', 'Best Buy 10-K', 'table', [head, cash, inventories, assets, liabilities], 0.3),
    ];
    const a = await reader.answer('What is the year end FY2019 total amount of inventories for Best Buy? Answer in USD millions. Base your judgments on the information provided primarily in the balance sheet.', { text: '', tokens: 0, truncated: false, regions });
    assert.equal(a.citations[0]!.nodeId, inventories.id, a.text);
  });

  it('gives no row bonus to another company\'s filing when the question names one', async () => {
    const theirs = leaf('Cost of sales 7,772 7,468 6,829', 'row', 'Statements of Income | 2016 | 2015', 69);
    const ours = leaf('Cost of revenue was $32.8 billion in fiscal 2016, driven by phone sales.', 'sentence', undefined, 36);
    const regions = [region('NIKE_2016_10K.pdf', 'NIKE 10-K', 'table', [theirs]), region('MICROSOFT_2016_10K.pdf', 'Microsoft 10-K', 'paragraph', [ours])];
    const a = await reader.answer('What is the FY2016 COGS for Microsoft? Use the income statement.', { text: '', tokens: 0, truncated: false, regions });
    assert.equal(a.citations[0]!.nodeId, ours.id, a.text);
  });
});

describe('rows: the span of time a statement covers', () => {
  it('reads a quarter, the year to date or the year from title lines, and the span a question asks', () => {
    assert.equal(periodSpan('Condensed Consolidated Statement of Earnings (Unaudited; in Millions) SECOND QUARTER'), 'quarter');
    assert.equal(periodSpan('Three Months Ended July 2, 2023'), 'quarter');
    assert.equal(periodSpan('(Unaudited; in Millions Except Per Share Figures) SIX MONTHS'), 'year-to-date');
    assert.equal(periodSpan('For the years ended June 30,'), 'year');
    assert.equal(periodSpan('Three Months Ended | Six Months Ended'), undefined, 'both spans side by side');
    assert.equal(periodSpan('Consolidated Statements of Income'), undefined);
    assert.equal(askedSpan("Did JnJ's net earnings increase in Q2 of FY2023 compared to Q2 of FY2022?"), 'quarter');
    assert.equal(askedSpan('Which region had the biggest drop in Q22023 revenues?'), 'quarter');
    assert.equal(askedSpan('How much cash was used in the first six months of fiscal 2024?'), 'year-to-date');
    assert.equal(askedSpan('What is the FY2018 capital expenditure amount for 3M?'), undefined);
  });
});

describe('rows: the same line item for part of the company', () => {
  it('reads a row\'s largest figure and its label as a key', () => {
    assert.equal(rowScale('Best Buy 908 - (1) 907 931 1 (2) 930'), 931);
    assert.equal(rowScale('Gross profit $ 2,725 $ 2,820 (1,577)'), 2820);
    assert.equal(rowScale('Gross margin 18.5% 19.4% 2023'), 0, 'percentages and bare years are no amounts');
    assert.equal(rowScale('Percentage of revenues 25.4% 31.2% $ 7'), 7);
    assert.equal(rowScale('Total assets'), 0);
    assert.equal(labelKey('Net revenue, total 9,497,578'), labelKey('Total net revenue 4,713,500'));
  });

  it('ranks a row below the same line item of another kept table whose figures are more than five times larger', async () => {
    const reader = new ExtractiveReader();
    const question = 'Was there any change in the number of Best Buy stores between Q2 of FY2024 and FY2023?';
    const part = leaf('Best Buy 127 1 - 128 127 - - 127', 'row', 'Fiscal 2024 | Fiscal 2023', 18);
    const mobile = leaf('Outlet Centers 20 1 (1) 20 16 2 - 18', 'row', 'Fiscal 2024 | Fiscal 2023', 18);
    const whole = leaf('Best Buy 908 - (1) 907 931 1 (2) 930', 'row', 'Fiscal 2024 | Fiscal 2023', 16);
    const yoga = leaf('Yardbird 24 - - 24 20 - - 20', 'row', 'Fiscal 2024 | Fiscal 2023', 16);
    // The smaller table scores higher against the question: without the rule its row is [1].
    const international = region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [part, mobile], 0.4);
    const domestic = region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [whole, yoga], 0.3);
    const a = await reader.answer(question, { text: '', tokens: 0, truncated: false, regions: [international, domestic] });
    assert.equal(a.citations[0]!.nodeId, whole.id, a.text);
    // A quarter beside its half year is no part: both keep their place.
    const quarter = leaf('Best Buy 127 1 - 128 127 - - 127', 'row', 'Fiscal 2024 | Fiscal 2023', 18);
    const half = leaf('Best Buy 250 1 - 251 250 - - 250', 'row', 'Fiscal 2024 | Fiscal 2023', 16);
    const b = await reader.answer(question, {
      text: '',
      tokens: 0,
      truncated: false,
      regions: [region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [quarter], 0.4), region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [half], 0.3)],
    });
    assert.equal(b.citations[0]!.nodeId, quarter.id, b.text);
  });
});
