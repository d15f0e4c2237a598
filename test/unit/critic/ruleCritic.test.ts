// The deterministic critic: coverage of question terms and entities, bridge entities, and the
// follow-up query it writes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeGain, RuleCritic } from '../../../src/core/critic/ruleCritic';
import { contentTerms, entitySpans } from '../../../src/core/text/terms';

const critic = new RuleCritic();
const base = { round: 1, previousQueries: [] as string[] };
/** One kept item of round 1 as the critic sees it: its title and kept text. */
const keptItem = (itemId: string, title: string, text: string) => ({ itemId, title, rank: 0, round: 1, keptTexts: [text] });

describe('RuleCritic', () => {
  const judge = (question: string, evidence: Array<{ title: string; text: string; profiles?: string[] }>, extra: Partial<{ previousQueries: string[]; seenTitles: string[] }> = {}) =>
    critic.judge({
      ...base,
      question,
      evidence: evidence.map((e, i) => ({
        itemId: `i${i}`,
        title: e.title,
        rank: i,
        round: 1,
        keptTexts: [e.text],
        ...(e.profiles ? { regions: [{ itemId: `i${i}`, itemTitle: e.title, file: `f${i}.pdf`, node: { id: `i${i}/0`, kind: 'paragraph' as const, modality: 'text' as const, text: e.text, anchor: { file: `f${i}.pdf` }, children: [] }, score: 0.5, document: { language: 'eng', profiles: e.profiles } }] } : {}),
      })),
      seenTitles: extra.seenTitles ?? evidence.map((e) => e.title),
      previousQueries: extra.previousQueries ?? [],
    });

  it('asks for the second hop of a nested question when the words are covered only by the first hop', async () => {
    const question = 'What country is the director of Blue Harbour from?';
    const firstHop = await judge(question, [{ title: 'Blue Harbour', text: 'Blue Harbour is a 1998 film by the director Maren Holt, shot in the country of Norway.' }]);
    assert.equal(firstHop.sufficient, false, 'the first hop covers every word, but the director has no item yet');
    assert.ok(firstHop.missing.includes('Maren Holt'), JSON.stringify(firstHop.missing));
    assert.match(firstHop.followUpQuery ?? '', /^Maren Holt\b/);
    assert.deepEqual(firstHop.followUpNames, ['Maren Holt', 'Norway'], 'the next round takes the items titled so first');
    const gap = (firstHop.details as { hopGap: { nestedReference: string; firstHop: string } }).hopGap;
    assert.deepEqual([gap.nestedReference, gap.firstHop], ['the director of', 'Blue Harbour']);

    const bothHops = await judge(question, [
      { title: 'Blue Harbour', text: 'Blue Harbour is a 1998 drama film by the director Maren Holt.' },
      { title: 'Maren Holt', text: 'Maren Holt is a film director from the country of Norway, born in Bergen.' },
    ]);
    assert.equal(bothHops.sufficient, true, JSON.stringify(bothHops.details));
    assert.equal((bothHops.details as { hopGap?: unknown }).hopGap, undefined);

    const lookup = await judge('What country is Blue Harbour set in?', [{ title: 'Blue Harbour', text: 'Blue Harbour is a 1998 film set in the country of Norway.' }]);
    assert.equal(lookup.sufficient, true, 'a lookup needs no second hop');
  });

  it('does not take a sentence that never names the question\'s named thing for its answer', async () => {
    const question = 'When was the host of the talk radio program Faith Hour born?';
    const v = await judge(question, [
      { title: 'Faith Hour', text: 'Faith Hour first aired on Sundays in 1984.' },
      // Covers "host", "talk radio", "program", "born" with a date, but is about another show.
      { title: 'Stella Mills', text: 'Stella Mills (born September 29, 1961) is the host of a talk radio program.' },
    ]);
    assert.equal(v.sufficient, false, JSON.stringify(v.details));
    const part = (v.details as { parts: Array<{ best: string; answered: boolean }> }).parts[0]!;
    assert.equal(part.answered, false, JSON.stringify(part));
    const answered = await judge(question, [
      { title: 'Faith Hour', text: 'Faith Hour is a talk radio program hosted by Dan Prager.' },
      { title: 'Dan Prager', text: 'Dan Prager (born August 2, 1948) is the host of Faith Hour, a talk radio program.' },
    ]);
    assert.equal(answered.sufficient, true, JSON.stringify(answered.details));
  });

  it('takes a nested question\'s bridge from the item about the thing the phrase names, in the sentence that says the relation', async () => {
    const question = "What team was Anna Benson's husband on?";
    const v = await judge(question, [
      // Another item covers "team" and "husband" better and names other people: no bridge from it.
      { title: 'Everywoman Husband', text: 'The team owner Gloria Swanson and her husband bought Platinum Equity, a team sponsor.' },
      { title: 'Anna Benson', text: 'Anna Benson is an American model and writer. Her husband is the baseball pitcher Kris Benson.' },
    ]);
    assert.equal(v.sufficient, false);
    const bridges = (v.details as { bridges: string[] }).bridges;
    assert.equal(bridges[0], 'Kris Benson', JSON.stringify(v.details));
    assert.ok(!bridges.some((b) => /Swanson|Platinum/.test(b)), JSON.stringify(bridges));
    assert.match(v.followUpQuery ?? '', /^Kris Benson\b/);
    // Once the bridge's own item is there, the nested phrase has nothing left to ask.
    const both = await judge(question, [
      { title: 'Anna Benson', text: 'Anna Benson is an American model and writer. Her husband is the baseball pitcher Kris Benson.' },
      { title: 'Kris Benson', text: 'Kris Benson is a former pitcher who played for the team of the Pittsburgh Pirates.' },
    ]);
    assert.ok(!(both.details as { bridges: string[] }).bridges.includes('Kris Benson'), JSON.stringify(both.details));
  });

  it('reads a possessive in the question as the evidence writes the name ("Tesla\'s eulogy" is about Tesla)', async () => {
    const v = await judge("Who gave Tesla's eulogy?", [
      { title: 'Nikola Tesla', text: 'On 10 January 1943, New York City mayor Fiorello La Guardia read a eulogy for Tesla over the radio.' },
      { title: 'Westinghouse', text: 'The acquisition of a motor gave Westinghouse a key patent for its system.' },
    ]);
    assert.equal(v.sufficient, true, JSON.stringify(v.details));
    const part = (v.details as { parts: Array<{ missingTerms: string[] }> }).parts[0]!;
    assert.ok(!part.missingTerms.some((t) => t.startsWith('tesla')), JSON.stringify(part));
  });

  it('reads an item as about the thing its title names, not the places its disambiguation mentions', async () => {
    const v = await judge('What is the seat of the county where Van Hook Township is located?', [
      { title: 'Van Hook Township, Mountrail County, North Dakota', text: 'Van Hook Township is a township located in Mountrail County in the state of North Dakota.' },
    ]);
    assert.equal(v.sufficient, false, 'the county has no item of its own yet');
    assert.match(v.followUpQuery ?? '', /Mountrail County/);
  });

  it('stops a lookup whose answer is in one kept sentence (terms covered, an answer of the asked kind)', async () => {
    const v = await judge('When did the 1973 oil crisis begin?', [
      { title: '1973 oil crisis', text: '1973 oil crisis. The 1973 oil crisis began in October 1973 when the members of OAPEC proclaimed an oil embargo.' },
    ]);
    assert.equal(v.sufficient, true, JSON.stringify(v.details));
    assert.deepEqual(v.missing, []);
    assert.equal(v.followUpQuery, undefined);
    const part = (v.details as { parts: Array<{ cue?: string; answered: boolean }> }).parts[0]!;
    assert.equal(part.answered, true);
    assert.equal(part.cue, 'October');
  });

  it('outside filings keeps period-like words as the words of what is asked ("Q4 model", "TTM baseline")', async () => {
    const evidence = [{ title: 'Forecasting notes', text: 'The seasonal model beats the naive baseline on every holdout month, by 4 points of MAPE.' }];
    const v = await judge('Does the Q4 model outperform the TTM baseline?', evidence);
    assert.equal(v.sufficient, false, JSON.stringify(v.details));
    assert.ok(v.missing.some((m) => /q4/i.test(m)) && v.missing.some((m) => /ttm/i.test(m)), JSON.stringify(v.missing));
  });

  it('reads a year where a row\'s header names it (the table\'s 2017 column), and never searches for the year alone', async () => {
    const title = 'Streamflix annual report';
    const v = await critic.judge({
      ...base,
      question: "What were Streamflix's revenues in 2017?",
      evidence: [{ itemId: 'i0', title, rank: 0, round: 1, keptTexts: ['Revenues $ 11,692 $ 8,830 $ 6,780'], keptLeaves: ['Year ended December 31, | 2017 | 2016 | 2015\nRevenues $ 11,692 $ 8,830 $ 6,780'] }],
      seenTitles: [title],
      previousQueries: [],
    });
    assert.equal(v.sufficient, true, JSON.stringify(v.details));
    const elsewhere = await judge("What were Streamflix's revenues in 2017?", [{ title: 'Streamflix annual report', text: 'Revenues were $8,830 million in 2016, up from $6,780 million.' }]);
    assert.equal(elsewhere.sufficient, false);
    assert.notEqual(elsewhere.followUpQuery?.trim(), '2017', 'the year is searched with what it qualifies');
  });

  it('judges what a filing question asks, not its reporting periods, currency or instructions', async () => {
    const evidence = [
      {
        title: 'Northwind Inc. Form 10-Q',
        text: 'Cash and cash equivalents were $1,093 million at July 29, 2023, compared with $1,874 million at January 28, 2023, a decrease of $781 million.',
        // The filings profile (its cover page says it is one) reads the periods a filing question writes its own way.
        profiles: ['filing'],
      },
    ];
    // "FY2023", "Q2 of FY2024" never occur in a filing, which writes its own dates.
    const v = await judge('Was there any decrease in cash and cash equivalents between FY2023 and Q2 of FY2024?', evidence);
    assert.equal(v.sufficient, true, JSON.stringify(v.details));
    assert.ok(!v.missing.some((m) => /fy|q2/i.test(m)), JSON.stringify(v.missing));
    // An instruction sentence around the question ("If … then state that and explain why.") is no part to answer.
    const instructed = await judge(
      'Did cash and cash equivalents decrease in Q2 FY2024? If cash is not a useful metric for a company like this, then state that and explain why.',
      evidence,
    );
    assert.equal(instructed.sufficient, true, JSON.stringify(instructed.details));
    // A real gap is still one: the words of the asked metric are not in the evidence.
    const gap = await judge('Did the quick ratio decrease between FY2023 and FY2022 in USD?', evidence);
    assert.equal(gap.sufficient, false);
    assert.deepEqual(
      gap.missing.filter((m) => /fy|usd/i.test(m)),
      [],
      JSON.stringify(gap.missing),
    );
  });

  it('is not satisfied by the question’s own terms without an answer of the asked kind', async () => {
    // Every term is covered, but no date other than the question's own "1973" is there.
    const v = await judge('When did the 1973 oil crisis begin?', [{ title: 'Oil', text: 'The 1973 oil crisis began with an embargo by the oil producers.' }]);
    assert.equal(v.sufficient, false);
  });

  it('answers each part of a two-part question separately, and asks only for the unanswered part', async () => {
    const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';
    const one = await judge(question, [{ title: 'Survey', text: 'Plot P5 lost three mature ash trees to ash dieback in 2025.' }]);
    assert.equal(one.sufficient, false);
    const parts = (one.details as { parts: Array<{ part: string; answered: boolean }> }).parts;
    assert.deepEqual(parts.map((p) => p.answered), [true, false]);
    assert.match(one.followUpQuery ?? '', /replanted/);
    assert.doesNotMatch(one.followUpQuery ?? '', /dieback/, 'the answered part is not searched again');
    const both = await judge(question, [
      { title: 'Survey', text: 'Plot P5 lost three mature ash trees to ash dieback in 2025.' },
      { title: 'Recommendations', text: 'The P5 gap should be replanted with oak and small-leaved lime.' },
    ]);
    assert.equal(both.sufficient, true, JSON.stringify(both.details));
  });

  it('follows a bridge: a named thing the best sentence introduces, searched with the unanswered words', async () => {
    const question = 'What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?';
    const v = await judge(question, [{ title: 'Kiss and Tell (1945 film)', text: 'Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer.' }]);
    assert.equal(v.sufficient, false);
    assert.deepEqual((v.details as { bridges: string[] }).bridges.includes('Shirley Temple'), true);
    const q = v.followUpQuery ?? '';
    assert.match(q, /^Shirley Temple/);
    assert.match(q, /government/);
    assert.doesNotMatch(q, /Kiss and Tell/, 'the hop already found is not searched again');
    // With an item about the bridge retrieved, the bridge is explored and not proposed again.
    const v2 = await judge(question, [
      { title: 'Kiss and Tell (1945 film)', text: 'Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer.' },
      { title: 'Shirley Temple', text: 'Shirley Temple Black was an American actress who later served as United States ambassador.' },
    ]);
    assert.ok(!(v2.details as { bridges: string[] }).bridges.includes('Shirley Temple'));
  });

  it('of names a sentence introduces as often, takes first one with an item of its own, and names what it looks for', async () => {
    const question = 'Who did the actor who played a bellhop in Dead Heat on a Merry-Go-Round play in Star Wars?';
    const evidence = [
      keptItem(
        'dh',
        'Crime films of 1966',
        'Dead Heat on a Merry-Go-Round is a 1966 crime film written and directed by Bernard Girard, starring James Coburn, Camilla Sparv, Aldo Ray, Todd Armstrong, Robert Webber, Rose Marie, and Harrison Ford (in his film debut) as a bellhop.',
      ),
    ];
    // An item the question does not name, so only the tie-break between equal counts can lift the name.
    const input = { ...base, question, evidence, seenTitles: ['Crime films of 1966'] };
    const plain = await critic.judge(input);
    const plainBridges = (plain.details as { bridges: string[] }).bridges;
    assert.ok(!plainBridges.includes('Harrison Ford'), `without titles the cast's longest names come first: ${plainBridges.join(', ')}`);
    const asked: string[][] = [];
    const v = await critic.judge({
      ...input,
      ownItems: async (names) => {
        asked.push([...names]);
        return new Set(names.filter((n) => n === 'Harrison Ford'));
      },
    });
    assert.ok(asked[0]!.includes('Harrison Ford') && asked[0]!.includes('James Coburn'), 'the names the sentence introduces are looked up once');
    assert.equal(asked.length, 1);
    const details = v.details as { bridges: string[]; ownItems?: string[] };
    assert.equal(details.bridges[0], 'Harrison Ford');
    assert.deepEqual(details.ownItems, ['Harrison Ford']);
    assert.match(v.followUpQuery ?? '', /^Harrison Ford/);
    assert.ok(v.followUpNames?.includes('Harrison Ford'), 'the follow-up looks for it by title');
  });

  it('follows first a named thing with an item of its own that an item the question names introduces', async () => {
    const question = 'The character Jack from While You Were Sleeping was born in what year?';
    const evidence = [
      { title: 'Jack and the Beanstalk', text: 'Jack and the Beanstalk is an English fairy tale, first published in 1734 beside Sleeping Beauty and Simple Simon.' },
      { title: 'Jack Gantos', text: 'Jack Gantos, the character writer born that year in Mount Pleasant, wrote Jack Henry books while sleeping little.' },
      { title: 'While You Were Sleeping (film)', text: 'While You Were Sleeping is a 1995 romantic comedy film directed by Jon Turteltaub.' },
      { title: 'While You Were Sleeping (film)', text: 'It stars Sandra Bullock as Lucy, a token collector, and Bill Pullman as Jack, the brother of a man whose life she saves.' },
    ].map((e, i) => ({ itemId: e.title, title: e.title, rank: i, round: 1, keptTexts: [e.text] }));
    const input = { ...base, question, evidence, seenTitles: evidence.map((e) => e.title) };
    const plain = await critic.judge(input);
    assert.equal(plain.sufficient, false);
    assert.ok(!(plain.details as { bridges: string[] }).bridges.includes('Bill Pullman'), 'the part\'s best sentences name other things');
    const v = await critic.judge({ ...input, ownItems: async (names) => new Set(names.filter((n) => n === 'Bill Pullman' || n === 'Simple Simon')) });
    const bridges = (v.details as { bridges: string[] }).bridges;
    assert.equal(bridges[0], 'Bill Pullman', `bridges: ${bridges.join(', ')}`);
    assert.ok(v.followUpNames?.includes('Bill Pullman'));
  });

  it('asks for a named thing of the question whose own item no round retrieved, however well its words are covered', async () => {
    const question = 'Often seen at the Academy Awards pre-show, what is Robin Roberts\'s occupation?';
    const evidence = [keptItem('pre', 'Academy Awards pre-show', 'The Academy Awards pre-show is often hosted by media personalities, such as Robin Roberts, whose occupation is journalism.')];
    const input = { ...base, question, evidence, seenTitles: ['Academy Awards pre-show'] };
    const plain = await critic.judge(input);
    assert.equal(plain.sufficient, true, JSON.stringify(plain.details));
    const v = await critic.judge({ ...input, ownItems: async (names) => new Set(names.filter((n) => n === 'Robin Roberts')) });
    assert.equal(v.sufficient, false);
    assert.deepEqual((v.details as { namedAbsent?: string[] }).namedAbsent, ['Robin Roberts']);
    assert.ok(v.followUpNames?.includes('Robin Roberts'));
    assert.match(v.followUpQuery ?? '', /Robin Roberts/);
  });

  it('never repeats a query it already issued: it says there is nothing new to ask', async () => {
    const question = 'Which government position did the actress hold?';
    const evidence = [{ title: 'Film', text: 'The actress starred in a comedy about a teenager.' }];
    const first = await judge(question, evidence);
    assert.equal(first.sufficient, false);
    assert.ok(first.followUpQuery);
    assert.deepEqual(first.missing.slice(0, 3), ['government', 'position', 'hold']);
    const again = await judge(question, evidence, { previousQueries: [first.followUpQuery!] });
    assert.equal(again.sufficient, false);
    assert.equal(again.followUpQuery, undefined);
    assert.ok((again.details as { noNewQuery?: string }).noNewQuery);
  });

  it('finds a named thing in the evidence by its words, not their stems', async () => {
    const question = 'Which actor acted in the film Arrival?';
    const stem = await judge(question, [{ title: 'Dan Rowe', text: 'The actor Dan Rowe arrived in Hollywood in 1990 and acted in a film.' }]);
    assert.deepEqual((stem.details as { missingEntities: string[] }).missingEntities, ['Arrival']);
    assert.equal(stem.sufficient, false);
    assert.match(stem.followUpQuery ?? '', /Arrival/);
    // A plural or a possessive still names it.
    const named = await judge(question, [{ title: 'Dan Rowe', text: "The actor Dan Rowe acted in the film Arrival's sequel." }]);
    assert.deepEqual((named.details as { missingEntities: string[] }).missingEntities, []);
  });

  it('takes a compared thing as named only by its whole name', async () => {
    const question = 'Which animated film was released first, The Country Bears or The Wild?';
    const bears = { title: 'The Country Bears', text: 'The Country Bears is a 2002 American animated film.' };
    for (const other of [
      { title: 'Running Wild with Bear Grylls', text: 'Running Wild with Bear Grylls is a 2014 series, with wild dogs.' },
      { title: '2013 Chargers season', text: 'The Chargers won the Wild Card round, then lost in the Divisional round.' },
    ]) {
      const partly = await judge(question, [bears, other]);
      assert.equal(partly.sufficient, false, JSON.stringify(partly.details));
      // Searched for by its name alone: what a sentence about something else names is no bridge to it.
      assert.equal(partly.followUpQuery, 'The Wild');
      assert.deepEqual(partly.followUpNames, ['The Wild']);
    }
    const mentioned = await judge(question, [bears, { title: 'Disney films of 2006', text: "Disney's The Wild (2006) is an American animated film." }]);
    assert.equal(mentioned.sufficient, true, JSON.stringify(mentioned.details));
    // A compared title the question capitalises its own way, or splits at a colon, is still named.
    const colon = await judge('Which film came out first, Killer: Dead Or Alive or Blue Harbour?', [
      { title: 'Killer: Dead or Alive', text: 'Killer: Dead or Alive is a 2006 thriller film.' },
      { title: 'Blue Harbour', text: 'Blue Harbour is a 1998 film.' },
    ]);
    assert.equal(colon.sufficient, true, JSON.stringify(colon.details));
    const whole = await judge(question, [bears, { title: 'The Wild', text: 'The Wild is a 2006 American animated film.' }]);
    assert.equal(whole.sufficient, true, JSON.stringify(whole.details));
  });

  it('searches for a nested question\'s bridge without the words its first hop already says, and never for a month', async () => {
    const question = 'What is the area of the university at which Dan Rowe served as head football coach?';
    const v = await judge(question, [{ title: 'Dan Rowe', text: 'In November 1995 he served as head football coach at Harlow University, winning 40 games.' }]);
    assert.equal(v.sufficient, false, JSON.stringify(v.details));
    assert.deepEqual((v.details as { bridges: string[] }).bridges, ['Harlow University']);
    assert.equal(v.followUpQuery, 'Harlow University area');
  });

  it('needs every named thing of a comparison in the evidence', async () => {
    const question = 'Were Scott Derrickson and Ed Wood of the same nationality?';
    const one = await judge(question, [{ title: 'Scott Derrickson', text: 'Scott Derrickson is an American director, screenwriter and producer.' }]);
    assert.equal(one.sufficient, false);
    assert.match(one.followUpQuery ?? '', /Ed Wood/);
    const both = await judge(question, [
      { title: 'Scott Derrickson', text: 'Scott Derrickson is an American director, screenwriter and producer.' },
      { title: 'Ed Wood', text: 'Edward Davis Wood Jr. was an American filmmaker, actor, writer and producer.' },
    ]);
    assert.equal(both.sufficient, true, JSON.stringify(both.details));
  });
});

describe('entitySpans', () => {
  it('finds capitalised runs with joiners, numbers and quoted phrases, skipping sentence-initial stop words', () => {
    assert.deepEqual(entitySpans('The Bank of England was founded in 1694 under a "Royal Charter".').sort(), ['1694', 'Bank of England', 'Royal Charter'].sort());
  });
});

describe('entitySpans: ordinals and quotations', () => {
  it('lets an ordinal open the name it precedes, and keeps numbers apart', () => {
    assert.deepEqual(entitySpans('He led the 6th Armored Division in 1944, then the 432d Wing.').sort(), ['1944', '432d Wing', '6th Armored Division']);
    assert.deepEqual(entitySpans('He came 2nd in the race.'), []);
  });
  it('does not quote what lies between one quotation and the next', () => {
    const text = 'a cast member on "Alpha" (1995) before appearing in films such as "The Last Kiss".';
    assert.deepEqual(entitySpans(text).sort(), ['1995', 'Alpha', 'The Last Kiss']);
    // A stray closing quote opens nothing either.
    assert.deepEqual(entitySpans('" (1995) before appearing in films such as "The Last Kiss"').filter((e) => e.includes('before')), []);
  });
});

describe('entitySpans at sentence starts and line breaks', () => {
  it('does not join a heading to the sentence below it, nor take a capitalised first word for a name', () => {
    assert.deepEqual(entitySpans('Recommendations\n\nReplant the P5 gap with oak. Findings were clear.').sort(), ['P5']);
  });
  it('keeps multi-word names that open a sentence', () => {
    assert.deepEqual(entitySpans('Bank of England rules. Kiss and Tell is a film. Shirley Temple acted.').sort(), ['Bank of England', 'Kiss and Tell', 'Shirley Temple']);
  });

  describe('looks ahead before it asks for another round (probe)', () => {
    const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';
    const evidence = [{ itemId: 'i0', title: 'Survey', rank: 0, round: 1, keptTexts: ['Plot P5 lost three mature ash trees to ash dieback in 2025.'] }];
    const ask = (probe: (q: string) => Promise<Array<{ itemId: string; title: string; leaves: string[] }> | undefined>, options = {}) =>
      new RuleCritic({ lookAhead: true, ...options }).judge({ ...base, question, evidence, seenTitles: ['Survey'], probe });

    it('asks for the round when a new item answers the gap better', async () => {
      const queries: string[] = [];
      const v = await ask(async (q) => {
        queries.push(q);
        return [{ itemId: 'n1', title: 'Recommendations', leaves: ['The P5 gap should be replanted with oak and small-leaved lime.'] }];
      });
      assert.equal(v.sufficient, false);
      assert.equal(queries.length, 1, 'one probe, for the follow-up query');
      assert.equal(v.followUpQuery, queries[0]);
      const probe = (v.details as { probe: { worth: boolean; reason: string } }).probe;
      assert.equal(probe.worth, true);
      assert.match(probe.reason, /Recommendations/);
    });

    it('stops, naming the gap, when the new items cover it no better than the evidence', async () => {
      const v = await ask(async () => [
        { itemId: 'n1', title: 'Weather', leaves: ['It rained for most of the week of the survey.', 'Wind speeds stayed low.'] },
      ]);
      assert.equal(v.sufficient, false);
      assert.equal(v.followUpQuery, undefined, 'no round for a search that brings nothing better');
      assert.ok(v.missing.length > 0, 'the gap is still named');
      const details = v.details as { probe: { worth: boolean }; noNewQuery: string };
      assert.equal(details.probe.worth, false);
      assert.match(details.noNewQuery, /finds nothing that answers better/);
    });

    it('asks for the item about a named thing the answer introduces when the index holds one, and reuses that search', async () => {
      const question = 'What city is the flying unit of the Harbour Wing stationed in?';
      const evidence = [{ itemId: 'i0', title: 'Harbour Wing', rank: 0, round: 1, keptTexts: ['The flying unit of the Harbour Wing is stationed at Kestrel Air Base in the city of Dunmore.'] }];
      const queries: string[] = [];
      const judgeWith = (items: Array<{ itemId: string; title: string; leaves: string[] }>) =>
        new RuleCritic({ lookAhead: true }).judge({
          ...base,
          question,
          evidence,
          seenTitles: ['Harbour Wing'],
          probe: async (q) => {
            queries.push(q);
            return items;
          },
        });
      const found = await judgeWith([{ itemId: 'n1', title: 'Kestrel Air Base', leaves: ['Kestrel Air Base lies north of Dunmore.'] }]);
      assert.equal(found.sufficient, false, JSON.stringify(found.details));
      assert.equal(queries.length, 1, 'one search, which the round reuses');
      assert.equal(found.followUpQuery, queries[0]);
      assert.match(found.followUpQuery ?? '', /Kestrel Air Base/);
      assert.equal((found.details as { answerBridge: { item: string } }).answerBridge.item, 'Kestrel Air Base');
      assert.ok(found.missing.includes('Kestrel Air Base'));
      // Items that only mention it (or are about something else) are no gap: the evidence stands.
      const none = await judgeWith([{ itemId: 'n2', title: 'Air bases of Dunmore', leaves: ['Kestrel Air Base is one of them.'] }]);
      assert.equal(none.sufficient, true, JSON.stringify(none.details));
      // Without the look-ahead the critic does not search on a sufficient verdict.
      let probed = 0;
      const plain = await new RuleCritic({ lookAhead: false }).judge({ ...base, question, evidence, seenTitles: ['Harbour Wing'], probe: async () => (probed++, []) });
      assert.equal(plain.sufficient, true);
      assert.equal(probed, 0);
    });

    it('looks first for a named thing with an item of its own that an item the question names introduces, outside a comparison', async () => {
      const question = 'What county is Ron Teachworth from?';
      const evidence = [
        { itemId: 'rt', title: 'Ron Teachworth', rank: 0, round: 1, keptTexts: ['Ron Teachworth is an American artist and filmmaker from Wayne County.', 'He grew up in Rochester Hills.'] },
        { itemId: 'gb', title: 'Going Back (film)', rank: 1, round: 1, keptTexts: ['Going Back is a 1983 drama film directed by Ron Teachworth and starring Bruce Campbell.'] },
      ];
      const probes: Array<{ q: string; names: readonly string[] }> = [];
      const judgeWith = (q: string, ownItems?: (names: readonly string[]) => Promise<ReadonlySet<string>>) =>
        new RuleCritic({ lookAhead: true }).judge({
          ...base,
          question: q,
          evidence,
          seenTitles: evidence.map((e) => e.title),
          probe: async (query, _signal, names = []) => {
            probes.push({ q: query, names });
            return names.includes('Rochester Hills') ? [{ itemId: 'rh', title: 'Rochester Hills, Michigan', leaves: ['Rochester Hills is a city in Oakland County.'] }] : [];
          },
          ...(ownItems ? { ownItems } : {}),
        });
      const plain = await judgeWith(question);
      assert.equal(plain.sufficient, true, 'without titles the answer stands');
      const v = await judgeWith(question, async (names) => new Set(names.filter((n) => n === 'Rochester Hills')));
      assert.equal(v.sufficient, false, JSON.stringify(v.details));
      assert.equal((v.details as { answerBridge: { item: string } }).answerBridge.item, 'Rochester Hills, Michigan');
      assert.ok(probes.at(-1)!.names.includes('Rochester Hills'), JSON.stringify(probes));
    });

    it('stops when the search brings no new item at all', async () => {
      const v = await ask(async () => []);
      assert.equal(v.followUpQuery, undefined);
      assert.match((v.details as { noNewQuery: string }).noNewQuery, /no new item/);
    });

    it('counts a new item about a bridge entity as worth the round', () => {
      const gain = probeGain([{ itemId: 'n1', title: 'Maren Holt', leaves: ['Maren Holt is a film maker.'] }], [], ['Maren Holt'], [], new Set(['blue', 'harbour']), () => 1, 0.15);
      assert.equal(gain.worth, true);
      assert.match(gain.reason, /bridge Maren Holt/);
      assert.equal(probeGain([{ itemId: 'n1', title: 'Weather', leaves: ['It rained.'] }], [], ['Maren Holt'], [], new Set(), () => 1, 0.15).worth, false);
    });

    it('does not count another part of a document it already holds as the next hop', async () => {
      const probe = async () => [{ itemId: 'n2', title: 'Blue Harbour (lines 40–52)', leaves: ['The film was shot on the coast in 1997.'] }];
      const v = await new RuleCritic({ lookAhead: true }).judge({
        ...base,
        question: 'What country is Blue Harbour set in?',
        evidence: [{ itemId: 'i0', title: 'Blue Harbour (lines 1–12)', rank: 0, round: 1, keptTexts: ['Blue Harbour is a 1998 drama film directed by Maren Holt.'] }],
        seenTitles: ['Blue Harbour (lines 1–12)'],
        probe,
      });
      assert.equal(v.followUpQuery, undefined, JSON.stringify(v.details));
      assert.equal((v.details as { probe: { worth: boolean } }).probe.worth, false);
    });

    it('takes a new article about a thing the evidence mentions for the next hop, never a page of a document titled by its heading', () => {
      const hop = { mentioned: new Set(['part', 'form', '10', 'k', 'maren', 'holt']), questionSequence: ' director blue harbour ', seenSubjects: new Set(['Blue Harbour']) };
      const unanswered = [{ part: { text: 'Where was the director born?', answerType: 'place' as const, terms: ['director', 'born'], entities: [] }, best: 0.5 }];
      const page = probeGain([{ itemId: 'p', title: 'PART I (p. 94–95)', leaves: ['Item 1. Business.'] }], unanswered, [], [], new Set(['director', 'born']), () => 1, 0.15, hop);
      assert.equal(page.worth, false, page.reason);
      const article = probeGain([{ itemId: 'a', title: 'Maren Holt', leaves: ['Item 1. Business.'] }], unanswered, [], [], new Set(['director', 'born']), () => 1, 0.15, hop);
      assert.equal(article.worth, true, article.reason);
      assert.match(article.reason, /is about Maren Holt, which the evidence mentions/);
    });

    it('takes an article for the next hop when the question has its words but not as its name', () => {
      // "How many people live in the County serviced by The Collier Area Transit system?": both
      // words of "Collier County" are the question's, the county is not named by it.
      const question = ` ${contentTerms('How many people live in the County serviced by The Collier Area Transit system?').join(' ')} `;
      const hop = { mentioned: new Set(contentTerms('administered by the Collier County Department of Transportation')), questionSequence: question, seenSubjects: new Set(['Collier Area Transit']) };
      const unanswered = [{ part: { text: 'How many people live in the County', answerType: 'number' as const, terms: contentTerms('people live county'), entities: [] }, best: 0.5 }];
      const county = probeGain([{ itemId: 'c', title: 'Collier County, Florida', leaves: ['Collier County is a county in Florida.'] }], unanswered, [], [], new Set(contentTerms('county collier')), () => 1, 0.15, hop);
      assert.equal(county.worth, true, county.reason);
      assert.match(county.reason, /“Collier County, Florida” is about Collier County, Florida, which the evidence mentions/);
      // The question's own name is no next hop: "Collier Area Transit" is a phrase of the question.
      const own = probeGain([{ itemId: 't', title: 'Collier Area Transit (bus)', leaves: ['Collier Area Transit runs buses.'] }], unanswered, [], [], new Set(contentTerms('county collier')), () => 1, 0.15, { ...hop, seenSubjects: new Set() , mentioned: new Set([...hop.mentioned, ...contentTerms('area transit')]) });
      assert.equal(own.worth, false, own.reason);
    });

    it('runs the follow-up of a question multi-hop by its form without looking, and says why', async () => {
      let called = 0;
      const v = await new RuleCritic({ lookAhead: true }).judge({
        ...base,
        question: 'What country is the director of Blue Harbour from?',
        evidence: [{ itemId: 'i0', title: 'Blue Harbour (lines 1–12)', rank: 0, round: 1, keptTexts: ['Blue Harbour is a 1998 drama film directed by Maren Holt.'] }],
        seenTitles: ['Blue Harbour (lines 1–12)'],
        probe: async () => {
          called++;
          return [{ itemId: 'n2', title: 'Blue Harbour (lines 40–52)', leaves: ['The film was shot on the coast in 1997.'] }];
        },
      });
      assert.equal(called, 0, 'no look-ahead for a nested reference');
      assert.ok(v.followUpQuery, JSON.stringify(v.details));
      assert.match(v.followUpQuery, /Maren Holt/, 'the follow-up goes to the bridge');
      assert.equal((v.details as { nestedReference?: string }).nestedReference, 'the director of');
      assert.equal((v.details as { probe?: unknown }).probe, undefined);
    });

    it('keeps the follow-up when the caller cannot search (no probe, or a probe without an answer)', async () => {
      const v = await ask(async () => undefined);
      assert.ok(v.followUpQuery);
      assert.equal((v.details as { probe?: unknown }).probe, undefined);
    });

    it('looks ahead by default, and not when told not to', async () => {
      let called = 0;
      const judgeWith = (critic: RuleCritic) =>
        critic.judge({
          ...base,
          question,
          evidence,
          seenTitles: ['Survey'],
          probe: async () => {
            called++;
            return [];
          },
        });
      const looked = await judgeWith(new RuleCritic());
      assert.equal(called, 1, 'the default looks ahead');
      assert.equal(looked.followUpQuery, undefined, 'a search that brings nothing ends the rounds');
      const v = await judgeWith(new RuleCritic({ lookAhead: false }));
      assert.equal(called, 1, 'lookAhead: false does not look');
      assert.ok(v.followUpQuery, 'the follow-up is asked without looking');
    });
  });
});
