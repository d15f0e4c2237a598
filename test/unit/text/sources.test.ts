// The sources a question names (src/core/text/sources.ts): company names by their entity spans or
// capitals, matched against file names and titles; period labels name none.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { namesSource, questionSourceNames } from '../../../src/core/text/sources';

describe('sources a question names', () => {
  it('matches a company written as a name, in capitals or with digits, against file names', () => {
    const amcor = questionSourceNames("Has AMCOR's quick ratio improved or declined between FY2023 and FY2022?");
    assert.ok(namesSource(amcor, 'financebench/AMCOR_2023_10K.pdf'));
    assert.ok(!namesSource(amcor, 'financebench/3M_2018_10K.pdf'));
    assert.ok(namesSource(questionSourceNames('What is the FY2019 total amount of inventories for Best Buy?'), 'BESTBUY_2019_10K.pdf'));
    assert.ok(namesSource(questionSourceNames('What is the FY2018 capital expenditure amount for 3M?'), '3M_2018_10K.pdf'));
  });

  it('reads no source from period labels or from the instructions around the question', () => {
    const names = questionSourceNames('Was there any drop in cash between FY 2023 and Q2 of FY2024? Answer in USD millions.');
    assert.ok(!namesSource(names, 'Q2_FY2024_report.pdf'), names.join(' '));
    assert.ok(!names.includes('usd'), names.join(' '));
  });
});
