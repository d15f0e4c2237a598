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
  assert.ok(named.matches('financebench/AMCOR_2023_10K.pdf'));
  assert.ok(!named.matches('financebench/GENERALMILLS_2022_10K.pdf'));
  const top = withNamedSources(fused, 4, { ...named, reserve: 2 }, fileOf);
  assert.deepEqual(top.map((f) => [f.id, f.named ?? false]), [
    ['GENERALMILLS_2022_10K#1', false],
    ['WALMART_2020_10K#4', false],
    ['AMCOR_2023_10K#51', true],
    ['AMCOR_2023Q2_10Q#3', true],
  ]);
  // Enough named entries already, none below k, or no names: the top k as ranked.
  assert.deepEqual(withNamedSources(fused, 6, { ...named, reserve: 1 }, fileOf).map((f) => f.id), fused.slice(0, 6).map((f) => f.id));
  assert.deepEqual(withNamedSources(fused.slice(0, 4), 3, { ...named, reserve: 2 }, fileOf).map((f) => f.id), fused.slice(0, 3).map((f) => f.id));
  assert.deepEqual(withNamedSources(fused, 3, undefined, fileOf).map((f) => f.id), fused.slice(0, 3).map((f) => f.id));
});

test('named sources: period labels, question words and names under three letters name nothing; "3M" does', () => {
  assert.equal(namedFiles('What was the net income in FY2019?'), undefined);
  assert.equal(namedFiles('How many ways are available to help reduce the stress of teaching?'), undefined);
  assert.equal(namedFiles('Is it in the US or UK?'), undefined);
  const m = namedFiles('What is the FY2018 capital expenditure amount (in USD millions) for 3M?')!;
  assert.ok(m.matches('3M_2018_10K.pdf'));
  assert.ok(namedFiles('Who gave Tesla\'s eulogy?')!.matches('squad/Nikola_Tesla.md'));
});
