// The extractive reader (no LLM): one quote per part of the question, chosen by term coverage
// and an answer of the asked kind, never a heading; citations point at the quoted region.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExtractiveReader } from '../../../src/core/read/extractiveReader';
import type { EvidenceRegion, ReaderInput } from '../../../src/core/read/reader';
import type { RegionKind, RegionNode } from '../../../src/contracts/region';

let n = 0;
function leaf(text: string, kind: RegionKind = 'sentence'): RegionNode {
  return { id: `it/0.${n++}`, kind, modality: 'text', text, anchor: { file: 'doc.md', charStart: 0, charEnd: text.length }, children: [] };
}

function input(items: Array<{ title: string; leaves: RegionNode[]; score?: number }>): ReaderInput {
  const regions: EvidenceRegion[] = items.map((it, i) => {
    const node: RegionNode = { id: `item${i}/0`, kind: 'paragraph', modality: 'text', text: it.leaves.map((l) => l.text).join(' '), anchor: { file: `f${i}.md` }, children: it.leaves };
    return { itemId: `item${i}`, itemTitle: it.title, file: `f${i}.md`, node, score: it.score ?? 0.3, leafScores: new Map(it.leaves.map((l) => [l.id, it.score ?? 0.3])) };
  });
  return { text: '', tokens: 0, truncated: false, regions };
}

describe('ExtractiveReader', () => {
  const reader = new ExtractiveReader();

  it('quotes the sentence that answers a "when" question, not the heading that repeats its words', async () => {
    const heading = leaf('1973 oil crisis', 'heading');
    const answer = leaf('The 1973 oil crisis began in October 1973, when the members of OAPEC proclaimed an oil embargo.');
    const other = leaf('The crisis had many short- and long-term effects on global politics.');
    const a = await reader.answer('When did the 1973 oil crisis begin?', input([{ title: '1973 oil crisis', leaves: [heading, other, answer] }]));
    assert.match(a.text, /began in October 1973/);
    assert.doesNotMatch(a.text, /^1973 oil crisis \[1\]/);
    assert.equal(a.citations[0]!.nodeId, answer.id, 'the citation points at the quoted region');
  });

  it('answers every part of a two-part question with its own quote', async () => {
    const lost = leaf('Plot P5 lost three mature ash trees to ash dieback between the visits.');
    const replant = leaf('Replant the P5 gap with a mix of oak, lime and hornbeam.');
    const noise = leaf('Soil moisture was logged hourly by buried sensors.');
    const a = await reader.answer('Which plot lost ash trees to dieback, and what should be replanted there?', input([
      { title: 'Survey', leaves: [lost, noise] },
      { title: 'Recommendations', leaves: [replant] },
    ]));
    assert.deepEqual(a.citations.slice(0, 2).map((c) => c.nodeId), [lost.id, replant.id]);
  });

  it('prefers a sentence with an amount for "how much", and quotes each named thing of a comparison', async () => {
    const vague = leaf('Capital expenditure grew as the company expanded its stores in 2019.');
    const amount = leaf('In 2019 capital expenditure was $1.6 billion.');
    const a = await reader.answer('How much was the capital expenditure in 2019?', input([{ title: '10-K', leaves: [vague, amount] }]));
    assert.equal(a.citations[0]!.nodeId, amount.id);
    const x = leaf('Scott Derrickson is an American director, screenwriter and producer.');
    const y = leaf('Edward Davis Wood Jr. was an American filmmaker, actor, writer and producer.');
    const b = await reader.answer('Were Scott Derrickson and Ed Wood of the same nationality?', input([
      { title: 'Scott Derrickson', leaves: [x] },
      { title: 'Ed Wood', leaves: [y] },
    ]));
    assert.deepEqual(new Set(b.citations.map((c) => c.nodeId)), new Set([x.id, y.id]));
  });

  it('says so when the evidence holds only headings', async () => {
    const a = await reader.answer('When did it begin?', input([{ title: 'T', leaves: [leaf('1973 oil crisis', 'heading')] }]));
    assert.equal(a.citations.length, 0);
    assert.match(a.text, /only headings/);
  });
});

describe('ExtractiveReader: the answering sentence beside a restating one', () => {
  const reader = new ExtractiveReader();

  it('quotes the neighbour of a sentence that only restates the question, over a sentence elsewhere that names more question words', async () => {
    const restating = leaf('Joseph Willard was president of Harvard.');
    const answer = leaf('The liberal Samuel Webber was appointed to the presidency two years later.');
    const elsewhere = leaf('Harvard elected a president from the liberal wing again in 1869.');
    const a = await reader.answer('Which liberal succeeded Joseph Willard as president of Harvard?', input([
      { title: 'History', leaves: [restating, answer] },
      { title: 'Governance', leaves: [elsewhere] },
    ]));
    assert.equal(a.citations[0]!.nodeId, answer.id, a.text);
    assert.ok(!a.citations.some((c) => c.nodeId === restating.id), 'a sentence that adds nothing to the question is not an answer');
  });

  it('still quotes a restating sentence for a yes/no question', async () => {
    const yes = leaf('Pfizer completed the spin-off of Upjohn.');
    const a = await reader.answer('Did Pfizer complete the spin-off of Upjohn?', input([{ title: 'Notes', leaves: [yes] }]));
    assert.equal(a.citations[0]!.nodeId, yes.id);
  });

  it('reads a possessive as the name it belongs to ("Tesla\'s" covers a sentence naming Tesla)', async () => {
    const other = leaf('The mayor read a eulogy for the composer Dvořák at the concert hall.');
    const naming = leaf('Louis Adamic read the eulogy written for Tesla over the radio.');
    const a = await reader.answer("Who read Tesla's eulogy?", input([{ title: 'Nikola', leaves: [other, naming] }]));
    assert.equal(a.citations[0]!.nodeId, naming.id);
  });
});

describe('ExtractiveReader: a quote with the neighbours it needs', () => {
  const reader = new ExtractiveReader();

  it('quotes the sentence before one that opens with a pronoun, so the quote says who "he" is', async () => {
    const before = leaf('Dominic Glynn arranged the theme for the 1986 season; Murray Gold returned as composer for the 2010 series.');
    const he = leaf('He was responsible for a new version of the theme which was reported to have had a hostile reception from some viewers.');
    const other = leaf('The theme tune has been released on several albums over the years.');
    const a = await reader.answer('Which series version had a hostile reception from some Doctor Who viewers?', input([{ title: 'Doctor Who music', leaves: [other, before, he] }]));
    const ids = a.citations.map((c) => c.nodeId);
    assert.ok(ids.includes(he.id), a.text);
    assert.ok(ids.indexOf(before.id) === ids.indexOf(he.id) - 1, `the antecedent comes right before the pronoun sentence: ${a.text}`);
    assert.match(a.text, /2010 series/);
    assert.deepEqual(a.citations.map((c) => c.marker), a.citations.map((_, i) => i + 1), 'markers in reading order');
  });

  it('quotes the sentence after that names what the quote describes ("This has been called …")', async () => {
    const describes = leaf('Luther points out that the Ten Commandments, as an expression of his eternal will, also positively teach how the Christian ought to live.');
    const names = leaf('This has traditionally been called the "third use of the law."');
    const noise = [
      leaf('Luther wrote about the law and the gospel in many sermons on Christian life.'),
      leaf('The law, Luther held, accuses every Christian who tries to live by it.'),
      leaf('Christians live under grace, and teaching about the law changed after Luther.'),
    ];
    const a = await reader.answer('Teaching Christians how they should live is what use of the law?', input([
      { title: 'Luther', leaves: [describes, names] },
      { title: 'Sermons', leaves: noise },
    ]));
    assert.equal(a.citations[0]!.nodeId, describes.id, a.text);
    assert.equal(a.citations[1]!.nodeId, names.id, a.text);
    assert.match(a.text, /third use of the law/);
  });

  it('does not attach a neighbour that does not refer back', async () => {
    const answer = leaf('The Broncos defeated the Panthers 24–10 in Super Bowl 50.');
    const next = leaf('Peyton Manning retired after the season ended in February.');
    const a = await new ExtractiveReader({ maxQuotes: 1 }).answer('Who won Super Bowl 50?', input([{ title: 'Super Bowl 50', leaves: [answer, next] }]));
    assert.equal(a.citations[0]!.nodeId, answer.id);
    assert.ok(!a.citations.some((c) => c.nodeId === next.id), a.text);
  });
});

describe('ExtractiveReader: answer kinds', () => {
  const reader = new ExtractiveReader();

  it('quotes the enumeration when the question asks for three things', async () => {
    const one = leaf('Neutrophils are normally found in the bloodstream and are the most abundant type of phagocyte.');
    const list = leaf('The innate leukocytes include the phagocytes (macrophages, neutrophils, and dendritic cells), mast cells and basophils.');
    const two = leaf('Dendritic cells are phagocytes in tissues that are in contact with the external environment.');
    const a = await reader.answer('What are three kinds of phagocytes?', input([{ title: 'Immune system', leaves: [one, two, list] }]));
    assert.equal(a.citations[0]!.nodeId, list.id, a.text);
  });

  it('reads a decade with an apostrophe as the decade ("the 1970\'s" finds "the early 1970s")', async () => {
    const seventies = leaf('In the early 1970s, Trevor Martin played the role in the play Seven Keys to Doomsday.');
    const other = leaf('In 1989 a new stage play, The Ultimate Adventure, toured the country.');
    const a = await reader.answer("What was the name of the play performed in the 1970's?", input([{ title: 'Stage', leaves: [other, seventies] }]));
    assert.equal(a.citations[0]!.nodeId, seventies.id, a.text);
  });
});

describe('ExtractiveReader: filings', () => {
  const reader = new ExtractiveReader();
  const row = (header: string, text: string, file: string): RegionNode => ({ ...leaf(text, 'row'), header, anchor: { file, page: 59 } });

  it('answers from the table row under the line item\'s other name, in the filing the question names, never from the statement heading', async () => {
    const heading = leaf('Consolidated Statement of Cash Flows', 'heading');
    const capex = row('2018 | 2017 | 2016', 'Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)', '3M_2018_10K.pdf');
    const otherRow = row('2018 | 2017 | 2016', 'Proceeds from sale of businesses 846 1,065 96', '3M_2018_10K.pdf');
    const elsewhere = leaf('For fiscal 2022, net cash used for investing activities of $570 million was primarily due to ongoing capital expenditures.');
    const regions: EvidenceRegion[] = [
      { itemId: 'adobe', itemTitle: 'ADOBE INC.', file: 'ADOBE_2022_10K.pdf', node: { id: 'adobe/0', kind: 'paragraph', modality: 'text', text: elsewhere.text, anchor: { file: 'ADOBE_2022_10K.pdf' }, children: [elsewhere] }, score: 0.6, leafScores: new Map([[elsewhere.id, 0.6]]) },
      { itemId: 'mmm', itemTitle: 'UNITED STATES SECURITIES AND EXCHANGE COMMISSION', file: '3M_2018_10K.pdf', node: { id: 'mmm/0', kind: 'table', modality: 'table', text: '', anchor: { file: '3M_2018_10K.pdf', page: 59 }, children: [heading, otherRow, capex] }, score: 0 },
    ];
    const a = await reader.answer(
      'What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to the question by relying on the details shown in the cash flow statement.',
      { text: '', tokens: 0, truncated: false, regions },
    );
    assert.equal(a.citations[0]!.nodeId, capex.id, a.text);
    assert.match(a.text, /1,577/);
    assert.ok(!a.citations.some((c) => c.nodeId === heading.id), 'a heading is never quoted');
  });
});

describe('ExtractiveReader: what a filing question is about', () => {
  const reader = new ExtractiveReader();

  it('does not answer from a sentence that shares only the years with the question', async () => {
    const buyback = leaf('On August 17, 2022, our Board of Directors approved a $400 million buyback, completed in fiscal year 2023.');
    const acquisition = leaf('On March 17, 2023, the Company completed the acquisition of a medical packaging site in Shanghai.');
    const other = leaf('The Company sponsors defined benefit plans for current and former employees.');
    const a = await reader.answer('What are major acquisitions that Acme has done in FY2023, FY2022 and FY2021?', input([
      // The buyback scores higher against the question: without the rule it is [1].
      { title: 'Acme 10-K', leaves: [buyback], score: 0.5 },
      { title: 'Acme 10-K', leaves: [acquisition, other], score: 0.45 },
    ]));
    assert.equal(a.citations[0]!.nodeId, acquisition.id, a.text);
  });

  it('answers a question about what is expected with a sentence that states the expectation, the separation read as the spin-off', async () => {
    const past = leaf('Under agreements related to the 2020 spin-off of the Upjohn Business, net amounts due to Viatris were $25 million as of July 2, 2023.');
    const expected = leaf('We expect to incur costs of approximately $700 million in connection with separating Upjohn.');
    const a = await reader.answer('How much does Pfizer expect to pay to spin off Upjohn in the future in USD million?', input([
      { title: 'Pfizer 10-Q', leaves: [past], score: 0.4 },
      { title: 'Pfizer 10-Q', leaves: [expected], score: 0.34 },
    ]));
    assert.equal(a.citations[0]!.nodeId, expected.id, a.text);
  });
});

describe('ExtractiveReader: tables by their lead-in, and the company described', () => {
  const reader = new ExtractiveReader();
  const row = (header: string, text: string, file: string): RegionNode => ({ ...leaf(text, 'row'), header, anchor: { file, page: 7 } });
  const table = (id: string, rows: RegionNode[], file: string, leadIn: string | undefined, context?: string): EvidenceRegion => ({
    itemId: id,
    itemTitle: 'FORM 10-Q',
    file,
    node: { id: `${id}/0`, kind: 'table', modality: 'table', text: rows.map((r) => r.text).join('\n'), anchor: { file, page: 7 }, children: rows.map((r) => (context ? { ...r, context } : r)) },
    score: 0.4,
    leafScores: new Map(rows.map((r) => [r.id, 0.4])),
    element: { document: 'FORM 10-Q', graphNodeId: `${id}/0`, type: 'table', summary: '', page: 7, order: 0, ...(leadIn ? { leadIn } : {}) },
  });

  it('of two copies of one line that tie, quotes the one whose lead-in is about the question', async () => {
    const header = 'July 29, 2023 | January 28, 2023';
    const note = row(header, 'Cash and cash equivalents $ 1,093 $ 1,874', 'q.pdf');
    const liquidity = row(header, 'Cash and cash equivalents $ 1,093 $ 1,874', 'q.pdf');
    const a = await reader.answer('Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?', {
      text: '',
      tokens: 0,
      truncated: false,
      regions: [
        table('note', [note], 'q.pdf', 'Cash, cash equivalents and restricted cash reported on our balance sheets are reconciled to the total shown on our statements of cash flows as follows:'),
        table('liquidity', [liquidity], 'q.pdf', 'Cash and cash equivalents were as follows ($ in millions):'),
      ],
    });
    assert.equal(a.citations[0]!.nodeId, liquidity.id, a.text);
  });

  it('answers which thing of a kind ranks first from a table whose heading or lead-in names the kind', async () => {
    const header = 'Three Months Ended | 2023 | 2022 | % Change';
    const segment = row(header, 'Hospital Products 12,100 26,900 (55)', 'p.pdf');
    const region = row(header, 'Developed Rest of World 1,306 3,400 (62)', 'p.pdf');
    const a = await reader.answer('For Acme, which geographic region had the biggest drop in Q2 2023 year over year revenues?', {
      text: '',
      tokens: 0,
      truncated: false,
      regions: [table('segments', [segment], 'p.pdf', 'The following provides selected revenues by reportable segment:'), table('regions', [region], 'p.pdf', 'The following summarizes revenues by geographic area:')],
    });
    assert.equal(a.citations[0]!.nodeId, region.id, a.text);
  });

  it('answers what industry a company is in with the sentence that describes the company', async () => {
    const segment = leaf('Flexibles: consists of operations that manufacture flexible packaging in the food, medical and other industries.');
    const described = leaf('Today, we are a global leader in developing and producing responsible packaging for food and beverages.');
    const a = await reader.answer('What industry does Acme primarily operate in?', input([
      { title: 'Acme 10-K', leaves: [segment], score: 0.4 },
      { title: 'Acme 10-K', leaves: [described], score: 0.4 },
    ]));
    assert.equal(a.citations[0]!.nodeId, described.id, a.text);
  });
});

describe('ExtractiveReader: the words that name the kind of answer', () => {
  const reader = new ExtractiveReader();

  it('does not match the asked kind of date: "What year …?" is answered by the year, not by a sentence about years', async () => {
    const years = leaf('Years after the siege of Leiden ended, the city founded a university.');
    const answer = leaf('The siege of Leiden ended on 3 October 1574.');
    const a = await reader.answer('What year did the siege of Leiden end?', input([{ title: 'History', leaves: [years, answer] }]));
    assert.equal(a.citations[0]!.nodeId, answer.id, a.text);
  });

  it('does not match "type" in "What type of …?": the answer names the thing, not its type', async () => {
    const types = leaf('All types of classes are held in the gym.');
    const answer = leaf('Students held a pep rally before the game.');
    const a = await reader.answer('What type of rally was held?', input([{ title: 'Campus', leaves: [types, answer] }]));
    assert.equal(a.citations[0]!.nodeId, answer.id, a.text);
  });
});

describe('ExtractiveReader: irregular verbs', () => {
  it('reads "died" as the "die" a question asks with: "What year did Genghis Khan die?" → "… died in August 1227"', async () => {
    const reader = new ExtractiveReader();
    const custom = leaf('Genghis Khan wished to die without spilling blood, as was the custom.');
    const answer = leaf('Genghis Khan died in August 1227 during the fall of Yinchuan.');
    const a = await reader.answer('What year did Genghis Khan die?', input([{ title: 'Genghis Khan', leaves: [custom, answer] }]));
    assert.equal(a.citations[0]!.nodeId, answer.id, a.text);
  });
});
