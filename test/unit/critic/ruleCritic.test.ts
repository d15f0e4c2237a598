// The deterministic critic: coverage of question terms and entities, bridge entities, and the
// follow-up query it writes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RuleCritic } from '../../../src/core/critic/ruleCritic';
import { entitySpans } from '../../../src/core/text/terms';

const critic = new RuleCritic();
const base = { round: 1, previousQueries: [] as string[] };

describe('RuleCritic', () => {
  it('is satisfied when every question term is covered and no unexplored entity remains', async () => {
    const v = await critic.judge({
      ...base,
      question: 'When was the oak planted?',
      seenTitles: ['Oak'],
      evidence: [{ itemId: 'a', title: 'Oak', rank: 0, round: 1, keptTexts: ['The oak was planted in spring.'] }],
    });
    assert.equal(v.sufficient, true);
    assert.deepEqual(v.missing, []);
    assert.equal(v.followUpQuery, undefined);
  });

  it('names uncovered question words (not stems) and puts them in the follow-up', async () => {
    const v = await new RuleCritic({ minTermCoverage: 1 }).judge({
      ...base,
      question: 'Which government position did the actress hold?',
      seenTitles: ['Film'],
      evidence: [{ itemId: 'a', title: 'Film', rank: 0, round: 1, keptTexts: ['The actress starred in a comedy.'] }],
    });
    assert.equal(v.sufficient, false);
    assert.deepEqual(v.missing, ['government', 'position', 'hold']);
    assert.match(v.followUpQuery ?? '', /government position hold/);
  });

  it('proposes bridge entities that no retrieved item is about yet', async () => {
    const evidence = [{ itemId: 'a', title: 'Kiss and Tell', rank: 0, round: 1, keptTexts: ['Kiss and Tell stars Shirley Temple as Corliss Archer.'] }];
    const v = await critic.judge({ ...base, question: 'Who played Corliss Archer in Kiss and Tell?', seenTitles: ['Kiss and Tell'], evidence });
    assert.deepEqual((v.details as { bridges: string[] }).bridges, ['Shirley Temple']);
    assert.equal(v.sufficient, false);
    // Once an item about the bridge has been retrieved, the bridge is explored.
    const v2 = await critic.judge({ ...base, question: 'Who played Corliss Archer in Kiss and Tell?', seenTitles: ['Kiss and Tell', 'Shirley Temple'], evidence });
    assert.deepEqual((v2.details as { bridges: string[] }).bridges, []);
    assert.equal(v2.sufficient, true);
  });

  it('does not repeat a bridge it already searched for', async () => {
    const evidence = [{ itemId: 'a', title: 'Kiss and Tell', rank: 0, round: 1, keptTexts: ['Kiss and Tell stars Shirley Temple.'] }];
    const v = await critic.judge({ ...base, question: 'Who starred in Kiss and Tell?', seenTitles: ['Kiss and Tell'], evidence, previousQueries: ['Who starred? Shirley Temple'] });
    assert.deepEqual((v.details as { bridges: string[] }).bridges, []);
  });
});

describe('entitySpans', () => {
  it('finds capitalised runs with joiners, numbers and quoted phrases, skipping sentence-initial stop words', () => {
    assert.deepEqual(entitySpans('The Bank of England was founded in 1694 under a "Royal Charter".').sort(), ['1694', 'Bank of England', 'Royal Charter'].sort());
  });
});

describe('entitySpans at sentence starts and line breaks', () => {
  it('does not join a heading to the sentence below it, nor take a capitalised first word for a name', () => {
    assert.deepEqual(entitySpans('Recommendations\n\nReplant the P5 gap with oak. Findings were clear.').sort(), ['P5']);
  });
  it('keeps multi-word names that open a sentence', () => {
    assert.deepEqual(entitySpans('Bank of England rules. Kiss and Tell is a film. Shirley Temple acted.').sort(), ['Bank of England', 'Kiss and Tell', 'Shirley Temple']);
  });
});
