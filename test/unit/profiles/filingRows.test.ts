// Table rows as answers to financial-statement questions (src/core/profiles/filings/rows.ts) and the
// filings profile's reader features built on them (src/core/judge/readerFeatures.ts): a statement
// row naming the asked line item with a figure for the asked period has the highest `filing_row`,
// prose that mentions the metric none; the statement a question names is found under a PDF-split
// title. The reader model weighs these features with the others (judge/models/reader.json).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readQuestion } from '../../../src/core/judge/questionReading';
import { readerCandidates } from '../../../src/core/judge/readerFeatures';
import { askedFigure, askedSpan, formulaItems, hasFigure, isLineItem, labelKey, periodSpan, rowLabel, rowScale, rowSupport, statementNameTerms, statementsAsked, statementsNamed, tableFacts, yearsNamed } from '../../../src/core/profiles/filings/rows';
import type { EvidenceRegion } from '../../../src/core/read/reader';
import type { RegionKind, RegionNode } from '../../../src/contracts/region';

let n = 0;
function leaf(text: string, kind: RegionKind = 'sentence', header?: string, page = 10): RegionNode {
  return { id: `r/0.${n++}`, kind, modality: 'text', text, ...(header !== undefined ? { header } : {}), anchor: { file: 'x.pdf', page }, children: [] };
}
function region(file: string, title: string, kind: RegionKind, leaves: RegionNode[], score = 0.3): EvidenceRegion {
  const node: RegionNode = { id: `${file}/${n++}`, kind, modality: 'text', text: leaves.map((l) => l.text).join('\n'), anchor: { file }, children: leaves };
  return { itemId: `${file}#${n++}`, itemTitle: title, file, node, score, leafScores: new Map(leaves.map((l) => [l.id, score])), document: { language: 'eng', profiles: ['filing'] } };
}
/** Each leaf's reader features for the question over the regions (all of filings). */
function features(question: string, regions: EvidenceRegion[]): (leaf: RegionNode) => Record<string, number> {
  const reading = readerCandidates(readQuestion(question), regions);
  return (leaf) => reading.candidates.find((c) => c.leaf.id === leaf.id)!.features;
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

describe('filings profile: the statement-row feature', () => {
  it('is highest for the statement row with the asked year\'s figure, and 0 for prose that mentions the metric', () => {
    const prose = leaf('Capital expenditures increased in 2018 as the company expanded manufacturing capacity across several business groups.', 'sentence', undefined, 40);
    const proseAmount = leaf('We expect capital expenditures of about $1.8 billion in 2019.', 'sentence', undefined, 41);
    const head = leaf('2018 2017 2016', 'row', undefined, 59);
    const capex = leaf('Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)', 'row', '2018 | 2017 | 2016', 59);
    const ops = leaf('Net cash provided by operating activities 6,439 6,240 6,662', 'row', '2018 | 2017 | 2016', 59);
    const inv = leaf('Net cash used in investing activities (222) (3,086) (1,403)', 'row', '2018 | 2017 | 2016', 59);
    const f = features('What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response by relying on the cash flow statement.', [
      region('3M_2018_10K.pdf', '3M 10-K', 'paragraph', [prose, proseAmount], 0.5),
      region('3M_2018_10K.pdf', '3M 10-K', 'table', [head, ops, capex, inv], 0.2),
    ]);
    assert.equal(f(capex).filing_row, 1, 'the best row of the named statement');
    for (const other of [prose, proseAmount, ops, inv]) assert.ok(f(other).filing_row! < f(capex).filing_row!, other.text);
    assert.equal(f(prose).filing_row, 0);
  });

  it('reaches the balance sheet under a PDF-split title ("Balance Shee t") and the asked year\'s table', () => {
    const segment = [leaf('Total assets by segment', 'row'), leaf('Total assets 40,100 38,900', 'row', 'Segments | 2021 | 2020', 80)];
    const older = [leaf('Total assets 33,017 30,000', 'row', 'Consolidated Balance Shee t | 2019 | 2018', 20)];
    const sheet = [leaf('Total current assets 26,291 20,556', 'row', 'Consolidated Balance Shee t | 2021 | 2020', 37), leaf('Total assets 59,268 55,556', 'row', 'Consolidated Balance Shee t | 2021 | 2020', 37)];
    const f = features('Using only the information within the balance sheet, how much total assets did Costco have at the end of FY2021? Answer in USD millions.', [
      region('COSTCO_2021_10K.pdf', 'Costco 10-K', 'table', segment),
      region('COSTCO_2021_10K.pdf', 'Costco 10-K', 'table', older),
      region('COSTCO_2021_10K.pdf', 'Costco 10-K', 'table', sheet),
    ]);
    const best = f(sheet[1]!).filing_row!;
    for (const other of [...segment, ...older, sheet[0]!]) assert.ok(f(other).filing_row! < best, other.text);
  });

  it('cuts a row whose table\'s columns name only other years', () => {
    const older = leaf('Total Domestic segment stores 1,369 (71) 1,298', 'row', 'Fiscal 2017 | Fiscal 2018', 31);
    const current = leaf('Total Domestic segment stores 1,000 (12) 988', 'row', 'Fiscal 2024 | Fiscal 2023', 12);
    const f = features('How many Best Buy domestic segment stores were there in Q2 of FY2024?', [region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [older]), region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [current])]);
    assert.ok(f(older).filing_row! <= 0.3 * f(current).filing_row!, JSON.stringify([f(older).filing_row, f(current).filing_row]));
  });

  it('gives a statement row, never the auditor\'s sentence naming every statement, the row feature', () => {
    const auditor = leaf('We have audited the accompanying consolidated balance sheets of Nike as of May 31, 2021 and 2020, and the related consolidated statements of income and of cash flows.', 'sentence', undefined, 56);
    const cogs = leaf('Cost of sales 28,925 21,162', 'row', 'Consolidated Statements of Income | 2021 | 2020', 58);
    const inv = leaf('Inventories 6,854 7,367', 'row', 'Consolidated Balance Sheets | 2021 | 2020', 60);
    const f = features('When primarily referencing the income statement and the balance sheet, what is the FY2021 inventory turnover ratio for Nike? Inventory turnover ratio is defined as: (FY2021 COGS) / (average inventory between FY2020 and FY2021).', [
      region('NIKE_2021_10K.pdf', 'Nike 10-K', 'paragraph', [auditor]),
      region('NIKE_2021_10K.pdf', 'Nike 10-K', 'table', [cogs]),
      region('NIKE_2021_10K.pdf', 'Nike 10-K', 'table', [inv]),
    ]);
    assert.equal(f(auditor).filing_row, 0);
    assert.ok(f(cogs).filing_row! > 0 && f(inv).filing_row! > 0);
  });

  it('gives no row feature to another company\'s filing when the question names one', () => {
    const theirs = leaf('Cost of sales 7,772 7,468 6,829', 'row', 'Statements of Income | 2016 | 2015', 69);
    const ours = leaf('Cost of revenue 32,780 33,038', 'row', 'Income Statements | 2016 | 2015', 36);
    const f = features('What is the FY2016 COGS for Microsoft? Use the income statement.', [region('NIKE_2016_10K.pdf', 'NIKE 10-K', 'table', [theirs]), region('MICROSOFT_2016_10K.pdf', 'Microsoft 10-K', 'table', [ours])]);
    assert.equal(f(theirs).filing_row, 0);
    assert.ok(f(ours).filing_row! > 0);
    assert.equal(f(ours).named_source, 1);
  });

  it('gives no row feature to a filing\'s row when the question names another source of the evidence (an article)', () => {
    const row = leaf('Average price per share $ 76.88 $ 83.71', 'row', 'Six Months Ended | 2023 | 2022', 21);
    const article = { ...region('Jacksonville_Florida.md', 'Jacksonville, Florida', 'paragraph', [leaf('Mean monthly temperatures range from around 53 F in January to 82 F in July.', 'sentence', undefined, 0)]), document: { language: 'eng', profiles: [] } };
    const f = features("What is Jacksonville's hottest month on average?", [region('RETAILER_2024Q2_10Q.pdf', 'Retailer 10-Q', 'table', [row]), article]);
    assert.equal(f(row).filing_row, 0);
  });

  it('measures a row against half the metric at least: a row that names one word of it is no line item asked', () => {
    const weak = leaf('Foreign tax rate differential 54 43 18', 'row', '2023 | 2022 | 2021', 92);
    const f = features('What would income differentials be if individual contributions were relevant to the social product?', [region('ACME_2023_10K.pdf', 'Acme 10-K', 'table', [weak])]);
    assert.ok(f(weak).filing_row! > 0 && f(weak).filing_row! < 0.5, String(f(weak).filing_row));
  });

  it('weighs a row of a filing of another period than the one the question names below the same row of that period', () => {
    const annual = leaf('Cash and cash equivalents 689 775', 'row', 'June 30, | 2023 | 2022', 52);
    const quarter = leaf('Cash and cash equivalents $ 1,093 $ 1,874', 'row', 'July 29, 2023 | January 28, 2023', 19);
    const f = features('Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?', [
      region('ACME_2023_10K.pdf', 'Acme 10-K', 'table', [annual]),
      region('GLOBEX_2024Q2_10Q.pdf', 'Globex 10-Q', 'table', [quarter]),
    ]);
    assert.ok(f(quarter).filing_row! > f(annual).filing_row!, JSON.stringify([f(quarter).filing_row, f(annual).filing_row]));
  });

  it('reads a filing\'s table row that is prose or a header of column labels as text, not as a row of figures', () => {
    const glossary = leaf('Upjohn Business Pfizer’s former global, primarily off-patent branded and generics business, which included a portfolio of 20 globally recognized brands', 'row', undefined, 5);
    const header = leaf('Three Months Ended Six Months Ended', 'row', undefined, 37);
    const item = leaf('Revenues $ 12,734 $ 27,742 (54)', 'row', 'Three Months Ended | 2023 | 2022', 37);
    const f = features('As of Q2 2023, is Pfizer spinning off any large business segments?', [region('PFIZER_2023Q2_10Q.pdf', 'Pfizer 10-Q', 'table', [glossary, header, item])]);
    assert.equal(f(glossary).row, 0);
    assert.equal(f(glossary).row_support, undefined);
    assert.equal(f(header).row, 0);
    assert.equal(f(item).row, 1);
    assert.equal(isLineItem(item.text), true);
    assert.equal(isLineItem(glossary.text), false);
    assert.equal(isLineItem('Best Buy Mobile 32 - - 32 33 - - 33'), true);
    const outside = readerCandidates(readQuestion('Is Pfizer spinning off a business?'), [{ ...region('notes.md', 'Notes', 'table', [glossary]), document: { language: 'eng', profiles: [] } }]);
    assert.equal(outside.candidates[0]!.features.row, 1, 'outside the profile a row is a row');
  });

  it('is no feature at all for a document outside the profile', () => {
    const capex = leaf('Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)', 'row', '2018 | 2017 | 2016', 59);
    const r = { ...region('notes.md', 'Notes', 'table', [capex]), document: { language: 'eng', profiles: [] } };
    const f = features('What is the FY2018 capital expenditure amount for 3M?', [r]);
    assert.equal(f(capex).filing_row, undefined);
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

  it('marks a row whose line item another kept table carries with figures more than five times larger (a part of the company), not a quarter beside its half year', () => {
    const question = 'Was there any change in the number of Best Buy stores between Q2 of FY2024 and FY2023?';
    const part = leaf('Best Buy 127 1 - 128 127 - - 127', 'row', 'Fiscal 2024 | Fiscal 2023', 18);
    const mobile = leaf('Outlet Centers 20 1 (1) 20 16 2 - 18', 'row', 'Fiscal 2024 | Fiscal 2023', 18);
    const whole = leaf('Best Buy 908 - (1) 907 931 1 (2) 930', 'row', 'Fiscal 2024 | Fiscal 2023', 16);
    const yoga = leaf('Yardbird 24 - - 24 20 - - 20', 'row', 'Fiscal 2024 | Fiscal 2023', 16);
    const f = features(question, [region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [part, mobile], 0.4), region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [whole, yoga], 0.3)]);
    assert.equal(f(part).filing_part_row, 1);
    assert.equal(f(whole).filing_part_row, 0);
    const quarter = leaf('Best Buy 127 1 - 128 127 - - 127', 'row', 'Fiscal 2024 | Fiscal 2023', 18);
    const half = leaf('Best Buy 250 1 - 251 250 - - 250', 'row', 'Fiscal 2024 | Fiscal 2023', 16);
    const g = features(question, [region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [quarter], 0.4), region('BESTBUY_2024Q2_10Q.pdf', 'Best Buy 10-Q', 'table', [half], 0.3)]);
    assert.equal(g(quarter).filing_part_row, 0);
    assert.equal(g(half).filing_part_row, 0);
  });
});
