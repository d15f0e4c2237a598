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
