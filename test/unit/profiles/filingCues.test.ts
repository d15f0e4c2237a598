// The filings profile's cues as reader features (src/core/judge/readerFeatures.ts,
// src/core/profiles/filings/cues.ts): own words that are only periods, an expectation for a
// question about the future, a description of the company for a question about what it does, a
// row of the table of the kind a "which … had the most" question picks from, the filing of the
// period the question names — each only for documents that fit the profile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeptRegion } from '../../../src/core/critic/critic';
import { readQuestion } from '../../../src/core/judge/questionReading';
import { readerCandidates } from '../../../src/core/judge/readerFeatures';
import { COMPANY_DESCRIPTION } from '../../../src/core/profiles/filings/cues';
import type { RegionKind, RegionNode } from '../../../src/contracts/region';

let n = 0;
const leaf = (text: string, kind: RegionKind = 'sentence', header?: string): RegionNode => ({ id: `c/0.${n++}`, kind, modality: 'text', text, anchor: { file: 'x.pdf', page: 3 }, children: [], ...(header ? { header } : {}) });
function region(file: string, leaves: RegionNode[], extra: Partial<KeptRegion> = {}, profiles = ['filing'], kind: RegionKind = 'paragraph'): KeptRegion {
  const node: RegionNode = { id: `${file}/${n++}`, kind, modality: 'text', text: leaves.map((l) => l.text).join(' '), anchor: { file }, children: leaves };
  return { itemId: `${file}#${n++}`, itemTitle: 'FORM 10-Q', file, node, score: 0.4, leafScores: new Map(leaves.map((l) => [l.id, 0.4])), document: { language: 'eng', profiles }, ...extra };
}
function features(question: string, regions: KeptRegion[]): (leaf: RegionNode) => Record<string, number> {
  const reading = readerCandidates(readQuestion(question), regions);
  return (l) => reading.candidates.find((c) => c.leaf.id === l.id)!.features;
}

describe('filings profile: cues', () => {
  it('marks a sentence whose own question words are only periods', () => {
    const buyback = leaf('On August 17, 2022, our Board of Directors approved a $400 million buyback, completed in fiscal year 2023.');
    const acquisition = leaf('On March 17, 2023, the Company completed the acquisition of a medical packaging site in Shanghai.');
    const f = features('What are major acquisitions that Acme has done in FY2023, FY2022 and FY2021?', [region('a.pdf', [buyback, acquisition])]);
    assert.equal(f(buyback).filing_period_only, 1);
    assert.equal(f(acquisition).filing_period_only, 0);
  });

  it('marks an expectation for a question about the future, the separation read as the spin-off', () => {
    const past = leaf('Under agreements related to the 2020 spin-off of the Upjohn Business, net amounts due to Viatris were $25 million as of July 2, 2023.');
    const expected = leaf('We expect to incur costs of approximately $700 million in connection with separating Upjohn.');
    const f = features('How much does Pfizer expect to pay to spin off Upjohn in the future in USD million?', [region('p.pdf', [past, expected])]);
    assert.ok(f(expected).filing_forward! > 0);
    assert.equal(f(past).filing_forward, 0);
  });

  it('weighs an expectation by how much of what is asked it names, not by its words of expecting', () => {
    const other = leaf('Based on quarter-end exchange rates, we expect to reclassify a pre-tax gain of $208 million within the next 12 months into income.');
    const asked = leaf('We expect to incur costs of approximately $700 million in connection with separating Upjohn.');
    const f = features('How much does Pfizer expect to pay to spin off Upjohn in the future in USD million?', [region('p.pdf', [other, asked])]);
    assert.ok(f(asked).filing_forward! > f(other).filing_forward!, JSON.stringify([f(asked).filing_forward, f(other).filing_forward]));
    assert.ok(f(other).filing_forward! < 1, 'an expectation of something else names little of what is asked');
  });

  it('marks the sentence that describes the company for a question about what it does', () => {
    const segment = leaf('Flexibles: consists of operations that manufacture flexible packaging in the food, medical and other industries.');
    const described = leaf('Today, we are a global leader in developing and producing responsible packaging for food and beverages.');
    const f = features('What industry does Acme primarily operate in?', [region('a.pdf', [segment, described])]);
    assert.equal(f(described).filing_describes, 1);
    assert.equal(f(segment).filing_describes, 0);
  });

  it('reads a verb\'s word after a determiner as a noun: "the major markets in which we sell" describes no company', () => {
    const markets = leaf('The major markets in which we sell our products historically have been, and continue to be, highly competitive.');
    const described = leaf('Today, we are a global leader in developing and producing responsible packaging for food and beverages.');
    const f = features('What industry does Acme primarily operate in?', [region('a.pdf', [markets, described])]);
    assert.equal(f(markets).filing_describes, 0);
    assert.equal(f(described).filing_describes, 1);
    assert.ok(COMPANY_DESCRIPTION.test('The Company markets its products through distributors.'), 'a verb after its subject is still one');
    assert.ok(COMPANY_DESCRIPTION.test('We design, manufacture and sell packaging.'));
  });

  it('marks the rows of the table of the kind a "which … had the biggest" question picks from, by its lead-in', () => {
    const header = 'Three Months Ended | 2023 | 2022 | % Change';
    const segment = leaf('Hospital Products 12,100 26,900 (55)', 'row', header);
    const geo = leaf('Developed Rest of World 1,306 3,400 (62)', 'row', header);
    const f = features('For Acme, which geographic region had the biggest drop in Q2 2023 year over year revenues?', [
      region('p.pdf', [segment], { leadIn: 'The following provides selected revenues by reportable segment:' }, ['filing'], 'table'),
      region('p.pdf', [geo], { leadIn: 'The following summarizes revenues by geographic area:' }, ['filing'], 'table'),
    ]);
    assert.equal(f(geo).filing_kind_table, 1);
    assert.equal(f(segment).filing_kind_table, 0);
    assert.ok(f(geo).lead_in_cover! >= f(segment).lead_in_cover!, 'the lead-in that names the kind covers at least as much');
  });

  it('prefers the filing of the period the question names', () => {
    const s = leaf('Best Buy had 1,138 stores in the United States at the end of the period.');
    const t = leaf('Best Buy had 1,238 stores in the United States at the end of the year.');
    const f = features('How many stores did Best Buy have at the end of Q2 of FY2024?', [region('BESTBUY_2024Q2_10Q.pdf', [s]), region('BESTBUY_2019_10K.pdf', [t])]);
    assert.ok(f(s).filing_source_period! > f(t).filing_source_period!, JSON.stringify([f(s).filing_source_period, f(t).filing_source_period]));
  });

  it('has none of these cues for a document outside the profile', () => {
    const expected = leaf('We expect to incur costs of approximately $700 million in connection with the move.');
    const f = features('How much do we expect to pay for the move in the future?', [region('plan.md', [expected], {}, [])]);
    assert.equal(f(expected).filing_forward, undefined);
  });
});
