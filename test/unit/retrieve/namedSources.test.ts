// A question that names a source (a company's filing, an article) keeps a few of each round's top k
// for that source's items: the best-ranked named candidates below k take the last unnamed places.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namedFiles } from '../../../src/core/engine/live';
import { withNamedSources } from '../../../src/core/retrieve/hybrid';

const fileOf = (id: string) => `${id.split('#')[0]}.pdf`;
const fused = ['GENERALMILLS_2022_10K#1', 'WALMART_2020_10K#4', 'GENERALMILLS_2022_10K#2', 'COSTCO_2021_10K#9', 'AMCOR_2023_10K#51', 'WALMART_2020_10K#7', 'AMCOR_2023Q2_10Q#3', 'AMCOR_2023_10K#50'].map((id) => ({ id }));

test('named sources: the best-ranked named candidates take the last unnamed places of the top k', () => {
  const named = namedFiles("Has AMCOR's quick ratio improved or declined between FY2023 and FY2022?")!;
  // Another company's filing of a year the question names fits, but far less than the named one.
  assert.ok(named.prefer('financebench/AMCOR_2023_10K.pdf') > named.prefer('financebench/GENERALMILLS_2022_10K.pdf') + 5);
  assert.equal(named.prefer('financebench/COSTCO_2021_10K.pdf'), 0);
  const top = withNamedSources(fused, 4, { ...named, reserve: 2 }, fileOf);
  assert.deepEqual(top.map((f) => [f.id, f.named ?? false]), [
    ['GENERALMILLS_2022_10K#1', false],
    ['WALMART_2020_10K#4', false],
    ['AMCOR_2023_10K#51', true],
    // FY2023 and FY2022, no quarter: the 10-K fits better than the quarter's 10-Q ranked above it.
    ['AMCOR_2023_10K#50', true],
  ]);
  // Enough named entries already, none below k, or no names: the top k as ranked.
  assert.deepEqual(withNamedSources(fused, 6, { ...named, reserve: 1 }, fileOf).map((f) => f.id), fused.slice(0, 6).map((f) => f.id));
  assert.deepEqual(withNamedSources(fused.slice(0, 4), 3, { ...named, reserve: 2 }, fileOf).map((f) => f.id), fused.slice(0, 3).map((f) => f.id));
  assert.deepEqual(withNamedSources(fused, 3, undefined, fileOf).map((f) => f.id), fused.slice(0, 3).map((f) => f.id));
});

test('named sources: period labels, question words and names under three letters name nothing; "3M" does', () => {
  // A fiscal period alone prefers the files of that period.
  const fy = namedFiles('What was the net income in FY2019?')!;
  assert.deepEqual(['BESTBUY_2019_10K.pdf', 'MGMRESORTS_2022Q4_EARNINGS.pdf', 'Teacher.md'].map((f) => fy.prefer(f)), [1, 0, 0]);
  const cash = namedFiles('Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?')!;
  assert.ok(cash.prefer('BESTBUY_2024Q2_10Q.pdf') > cash.prefer('AMCOR_2023_10K.pdf'));
  assert.equal(namedFiles('When did the 1973 oil crisis begin?'), undefined);
  assert.equal(namedFiles('How many ways are available to help reduce the stress of teaching?'), undefined);
  assert.equal(namedFiles('Is it in the US or UK?'), undefined);
  const m = namedFiles('What is the FY2018 capital expenditure amount (in USD millions) for 3M?')!;
  assert.ok(m.prefer('3M_2018_10K.pdf') > 0);
  assert.ok(namedFiles('Who gave Tesla\'s eulogy?')!.prefer('squad/Nikola_Tesla.md') > 0);
});

test('named sources: the filing of the period the question names fits best', () => {
  const stores = namedFiles('Was there any change in the number of Best Buy stores between Q2 of FY2024 and FY2023?')!;
  assert.ok(stores.prefer('financebench/BESTBUY_2024Q2_10Q.pdf') > stores.prefer('financebench/BESTBUY_2019_10K.pdf'));
  assert.ok(stores.prefer('financebench/AMCOR_2023_10K.pdf') < stores.prefer('financebench/BESTBUY_2019_10K.pdf'));
  // An annual question: the year's 10-K over the same year's quarterly report.
  const annual = namedFiles('What are major acquisitions that AMCOR has done in FY2023, FY2022 and FY2021?')!;
  assert.ok(annual.prefer('AMCOR_2023_10K.pdf') > annual.prefer('AMCOR_2023Q2_10Q.pdf'));
  const quarter = namedFiles("What is the nature & purpose of AMCOR's restructuring liability as oF Q2 of FY2023 close?")!;
  assert.ok(quarter.prefer('AMCOR_2023Q2_10Q.pdf') > quarter.prefer('AMCOR_2023_10K.pdf'));
  // In the top k, only the best-fitting named file counts: the 2019 10-K's items do not fill the reserve.
  const fused = ['BESTBUY_2019_10K#1', 'BESTBUY_2019_10K#2', 'AMCOR_2023_10K#3', 'BESTBUY_2024Q2_10Q#4', 'BESTBUY_2024Q2_10Q#5'].map((id) => ({ id }));
  const top = withNamedSources(fused, 3, { ...stores, reserve: 2 }, fileOf);
  assert.deepEqual(top.map((f) => f.id), ['BESTBUY_2019_10K#1', 'BESTBUY_2024Q2_10Q#4', 'BESTBUY_2024Q2_10Q#5']);
});
