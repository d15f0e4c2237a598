// Question analysis (answer type, parts, entities) and region support (coverage, answer cues,
// quotable regions): what the no-LLM critic and the extractive reader decide with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  asksProcedure,
  analyzeQuestion,
  askedKindWords,
  answerTypeOf,
  isPeriodOrCurrency,
  isPeriodSpan,
  nestedReference,
  questionFocus,
  questionParts,
  splitConjoined,
} from '../../../src/core/text/question';
import { asksCompanyActivity, COMPANY_DESCRIPTION, superlativeKind } from '../../../src/core/profiles/filings/cues';
import { answerCue, askedListSize, foldIrregularVerbs, isQuotable, listedItems, partCoverage, supportTerms, termWeights } from '../../../src/core/text/support';
import { contentTerms } from '../../../src/core/text/terms';
import { filingTerms } from '../../../src/core/profiles/filings/terms';

describe('question analysis', () => {
  it('names the words that say what kind of answer is asked: a unit of date, a type or kind', () => {
    assert.deepEqual(askedKindWords('What year did Genghis Khan die?'), ['year']);
    assert.deepEqual(askedKindWords('What day of the week does the Time for Reflection take place?'), ['day', 'week']);
    assert.deepEqual(askedKindWords('In which century was it built?'), ['century']);
    assert.deepEqual(askedKindWords('What type of rally was held?'), ['type']);
    assert.deepEqual(askedKindWords('How many years did the war last?'), []);
    assert.deepEqual(askedKindWords('What stadium did Super Bowl 50 take place in?'), []);
  });

  it('finds the phrase that makes a question multi-hop by its form, and none in a lookup', () => {
    const hops: Array<[string, string]> = [
      ["What team was Anna Benson's husband on?", "Anna Benson's husband"],
      ['Who married the publisher of abolitionist newspaper The North Star?', 'the publisher of'],
      ['Who is the sibling of the actress who played Susan Walker in Miracle on 34th street?', 'the actress who p'],
      ['When did the person who ended the Archaemenid Empire by conquest in 330 BC die?', 'the person who e'],
      ['When was countrywide bought by the company that bought FleetBoston Financial?', 'the company that b'],
      ['Who is the federal leader of the party in which John Lynch-Staunton held a position?', 'the party in which J'],
      ["What summit is located in the county who's county seat is Helena?", "the county who's c"],
      ['When was the film containing the song "Still Here" published?', 'the film containing t'],
      ['What league was founded by the company that owns the stadium?', 'the company that o'],
    ];
    for (const [q, want] of hops) assert.equal(nestedReference(q), want, q);
    const lookups = [
      "Who gave Tesla's eulogy?",
      "What is Jacksonville's hottest month on average?",
      'Name a text that might be used by a religious teacher to teach.',
      'What was the team that won the 1959 cup?',
      'Who was the founder of the Oracle Corporation?',
      "Who was Kublai Khan's grandfather?",
      'Sleep hormones shift the cytokine balance to which cytokine?',
      'What years did the original Doctor Who series run?',
      "Has AMCOR's quick ratio improved or declined between FY2023 and FY2022?",
    ];
    for (const q of lookups) assert.equal(nestedReference(q), undefined, q);
  });

  it('reads the expected kind of answer from the wh-word and the noun asked about', () => {
    const cases: Array<[string, string]> = [
      ['When did the 1973 oil crisis begin?', 'date'],
      ['In what year was the company founded?', 'date'],
      ['What year did the war end?', 'date'],
      ['How much revenue did the segment report in 2022?', 'number'],
      ['How many employees does the company have?', 'number'],
      ['What was the total capital expenditure in FY2019?', 'number'],
      ['Who portrayed Corliss Archer?', 'person'],
      ['Where is the headquarters?', 'place'],
      ['Which city hosted the games?', 'place'],
      ['Were Scott Derrickson and Ed Wood of the same nationality?', 'yesno'],
      ['What should be replanted there?', 'other'],
    ];
    for (const [q, want] of cases) assert.equal(answerTypeOf(q), want, q);
  });

  it('splits a question into the things it asks, and keeps one-clause questions whole', () => {
    assert.deepEqual(questionParts('Which plot lost ash trees to dieback, and what should be replanted there?'), ['Which plot lost ash trees to dieback', 'what should be replanted there']);
    assert.deepEqual(questionParts('Who founded the firm? When did it go public?'), ['Who founded the firm', 'When did it go public']);
    assert.deepEqual(questionParts('Was the Bank of England founded before the Bank of Scotland and the Bank of Ireland?'), ['Was the Bank of England founded before the Bank of Scotland and the Bank of Ireland']);
    assert.deepEqual(questionParts('What government position was held by the woman who portrayed Corliss Archer in Kiss and Tell?').length, 1);
  });

  it('splits conjoined names only when each side is a name of its own', () => {
    assert.deepEqual(splitConjoined('Scott Derrickson and Ed Wood'), ['Scott Derrickson', 'Ed Wood']);
    assert.deepEqual(splitConjoined('Kiss and Tell'), ['Kiss and Tell']);
    const a = analyzeQuestion('Were Scott Derrickson and Ed Wood of the same nationality?');
    assert.deepEqual(a.entities, ['Scott Derrickson', 'Ed Wood']);
    assert.equal(a.comparison, true);
    assert.equal(analyzeQuestion('When did the 1973 oil crisis begin?').comparison, false);
  });

  it('compares only named things the question itself compares', () => {
    const compared = (q: string) => analyzeQuestion(q).compared;
    assert.deepEqual(compared('Which animated film was released first, The Country Bears or The Wild?'), ['The Country Bears', 'The Wild']);
    // A comparing word inside a title, or "of the same name", compares nothing; nor is a year a compared thing.
    assert.deepEqual(compared('Which author influenced the animated Easter television special "The First Easter Rabbit"?'), []);
    assert.deepEqual(compared('Who directed the 1941 film based on the novel of the same name by Zane Grey?'), []);
    assert.equal(analyzeQuestion('Who directed the 1941 film based on the novel of the same name by Zane Grey?').comparison, false);
    // A name inside another the question names is not a second thing ("Easter" in the title).
    assert.deepEqual(compared('Which is older, the Easter special "The First Easter Rabbit" or Frosty?'), ['The First Easter Rabbit', 'Frosty']);
    // "both" / "either" pair one-word names too.
    assert.deepEqual(compared('Are both genera Silphium and Heliotropium genera of flowering plants?'), ['Silphium', 'Heliotropium']);
    assert.deepEqual(analyzeQuestion('Is Silphium and Heliotropium a band?').entities, ['Silphium and Heliotropium']);
  });
});

describe('region support', () => {
  it('weights terms by rarity and counts the context (title) half', () => {
    const regions = [new Set(['oil', 'crisis', 'octob']), new Set(['oil', 'price']), new Set(['oil', 'embargo'])];
    const w = termWeights(regions);
    assert.ok(w('crisis') > w('oil'), 'a term in one region outweighs one in all');
    const part = { terms: ['oil', 'crisis'] };
    assert.equal(partCoverage(part, regions[0]!, new Set(), w).coverage, 1);
    const viaTitle = partCoverage(part, new Set(['oil']), new Set(['crisis']), w);
    assert.ok(viaTitle.coverage > w('oil') / (w('oil') + w('crisis')) && viaTitle.coverage < 1);
    assert.deepEqual(partCoverage(part, new Set(['oil']), new Set(), w).missing, ['crisis']);
  });

  it('finds an answer of the asked kind that the question does not already name', () => {
    const q = new Set(contentTerms('When did the 1973 oil crisis begin?'));
    assert.equal(answerCue('date', 'The 1973 oil crisis began in October 1973.', q), 'October');
    assert.equal(answerCue('date', 'The 1973 oil crisis began with an embargo.', q), undefined);
    const n = new Set(contentTerms('How much did revenue grow in 2022?'));
    assert.equal(answerCue('number', 'Revenue grew by $4.2 billion in 2022.', n), '$4.2 billion');
    assert.equal(answerCue('number', 'Revenue grew strongly in 2022.', n), undefined);
    assert.equal(answerCue('number', 'There are several ways to mitigate the hazards of teaching.', new Set(['wai', 'teach'])), 'several');
    assert.equal(answerCue('number', 'There are infinitely many primes.', new Set(['prime'])), 'infinitely many');
    assert.equal(answerCue('number', 'Many teachers leave the profession.', new Set(['teacher'])), undefined, '"many" alone marks no answer');
    const p = new Set(contentTerms('Who portrayed Corliss Archer?'));
    assert.equal(answerCue('person', 'Shirley Temple portrayed Corliss Archer.', p), 'Shirley Temple');
    assert.equal(answerCue('other', 'Shirley Temple portrayed Corliss Archer.', p), undefined);
    const c = new Set(contentTerms('In which country did Ada Nkem win a gold medal?'));
    assert.equal(answerCue('place', 'Ada Nkem (born 16 February 1988) is a hurdler.', c), undefined, 'a month is no place');
    assert.equal(answerCue('place', 'Ada Nkem won gold in March at the games in Qatar.', c), 'Qatar');
    // An acronym is no person ("premiered on NBC"); a name an ordinal opens is a name, not a number.
    const w = new Set(contentTerms('Which author influenced the special?'));
    assert.equal(answerCue('person', 'The special premiered on NBC, later airing on CBS.', w), undefined);
    assert.equal(answerCue('person', 'The special premiered on NBC, based on a story by Margery Williams.', w), 'Margery Williams');
    assert.equal(answerCue('place', 'It was filmed in the USA.', w), 'USA');
    assert.equal(answerCue('person', 'It was made by the 1st Baron Revelstoke.', w), '1st Baron Revelstoke');
  });

  it('never lets an answer quote a heading, a caption, a title-like line or a fragment', () => {
    assert.equal(isQuotable('heading', '1973 oil crisis'), false);
    assert.equal(isQuotable('sentence', '1973 oil crisis'), false);
    assert.equal(isQuotable('sentence', 'Non-GAAP Financial Measures And Reconciliations'), false);
    assert.equal(isQuotable('sentence', 'Figure 3: Revenue by segment, 2019–2022'), false);
    assert.equal(isQuotable('sentence', 'Exhibit 10.1 Credit Agreement dated March 3, 2020'), false);
    assert.equal(isQuotable('sentence', 'The 1973 oil crisis began in October 1973.'), true);
    assert.equal(isQuotable('row', 'P5 | 3 | ash'), true);
  });
});

describe('question focus and support terms (extractive reader)', () => {
  it('reads irregular verb forms as their base form, leaving forms that are other words alone', () => {
    assert.equal(foldIrregularVerbs('Genghis Khan died in 1227; the war began and Tesla grew up'), 'Genghis Khan die in 1227; the war begin and Tesla grow up');
    assert.deepEqual(supportTerms('He won the race'), supportTerms('He win the race'));
    assert.equal(foldIrregularVerbs('He left the Fed in Lent and found a shot'), 'He left the Fed in Lent and found a shot');
  });

  it('keeps the sentence that asks and its definitions, drops instructions, lead-ins and units', () => {
    assert.equal(
      questionFocus("We want to calculate a financial metric. Please help us compute it. Here's the question: what is the FY2022 retention ratio for General Mills? Round answer to two decimal places."),
      'what is the FY2022 retention ratio for General Mills?',
    );
    assert.equal(questionFocus('What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response by relying on the cash flow statement.'), 'What is the FY2018 capital expenditure amount for 3M?');
    assert.equal(
      questionFocus('What is the FY2021 inventory turnover ratio for Nike? Inventory turnover ratio is defined as: (FY2021 COGS) / (average inventory). Answer in units of percents.'),
      'What is the FY2021 inventory turnover ratio for Nike? Inventory turnover ratio is defined as: (FY2021 COGS) / (average inventory).',
    );
    assert.equal(questionFocus('revenue by segment'), 'revenue by segment', 'text without a question is kept whole');
  });

  it('knows when a question asks for several things, and how many an enumeration names', () => {
    assert.equal(askedListSize('What are three kinds of phagocytes?'), 3);
    assert.equal(askedListSize('Name two of the founders.'), 2);
    assert.equal(askedListSize('How many three-day weeks were there?'), undefined);
    assert.equal(askedListSize('Which team won in 2 games?'), undefined, 'a count after a preposition qualifies, it does not ask');
    assert.equal(askedListSize('What is the capital of France?'), undefined);
    assert.equal(listedItems('The innate leukocytes include the phagocytes (macrophages, neutrophils, and dendritic cells).'), 3);
    assert.equal(listedItems('Neutrophils and macrophages are phagocytes.'), 2);
    assert.equal(listedItems('Dendritic cells are phagocytes in tissues near the skin.'), 0);
  });

  it('folds possessives, split words, decades and formulas for support', () => {
    assert.ok(supportTerms("Tesla's eulogy").includes(contentTerms('Tesla')[0]!));
    assert.ok(supportTerms('Consolidated Balance Shee t').includes(contentTerms('sheet')[0]!));
    assert.ok(supportTerms("the play performed in the 1970's").includes('1970s'), 'a decade with an apostrophe is the decade');
    assert.ok(supportTerms('In the triplet form, O 2 molecules are paramagnetic.').includes('o2'), 'a formula whose subscript came apart');
    assert.ok(supportTerms('CO 2 emissions').includes('co2'));
    assert.ok(!supportTerms('Apollo 11 in July').includes('apollo11') && !supportTerms('World War 2').includes('war2'), 'a word and a number stay apart');
    assert.ok(!supportTerms('Purchases of property, plant and equipment').includes(contentTerms('capex')[0]!), 'line items keep their own names outside the filings profile');
  });

  it('reads fiscal years and line items under their other names in the filings profile (filingTerms)', () => {
    assert.ok(filingTerms('FY2021 total assets').includes('2021'));
    const capex = contentTerms('capital expenditure');
    const row = filingTerms('Purchases of property, plant and equipment (PP&E) (1,577)');
    assert.ok(capex.every((t) => row.includes(t)), 'a cash-flow purchases row covers "capital expenditure"');
    const cogs = filingTerms('What is the FY2016 COGS for Microsoft?');
    assert.ok(contentTerms('cost of revenue').every((t) => filingTerms('Total cost of revenue 32,780').includes(t)) && cogs.includes(contentTerms('cost')[0]!));
    const ceo = filingTerms("Does Foot Locker's new CEO have previous CEO experience?");
    assert.ok(contentTerms('chief executive officer').every((t) => ceo.includes(t)) && filingTerms('former Chief Executive Officer of Ulta Beauty').includes(contentTerms('CEO')[0]!), 'an officer by title or initials');
    const spinOff = filingTerms('How much will Pfizer pay to spin off Upjohn?');
    const separating = filingTerms('costs in connection with separating Upjohn');
    assert.ok(contentTerms('spinoff').every((t) => spinOff.includes(t) && separating.includes(t)), 'a spin-off is a separation of a business');
    assert.ok(!filingTerms('The two rivers separate near the delta.').includes(contentTerms('spinoff')[0]!), 'a plain "separate" is no spin-off');
  });
});

describe('reporting periods and currencies as questions write them', () => {
  it('knows fiscal years, quarters, halves and currency codes, and nothing else', () => {
    for (const t of ['fy2023', 'fy23', "q2'2023", 'q22023', 'q2', 'h1', '2q', 'ytd', 'usd', 'fy', '2023q4']) assert.equal(isPeriodOrCurrency(t), true, t);
    for (const t of ['2023', 'fiscal', 'quarter', 'revenue', 'q', 'usa', 'fyi', 'q5']) assert.equal(isPeriodOrCurrency(t), false, t);
  });
  it('takes a span of periods joined by "and" / "of" for a period, not a name that holds one', () => {
    assert.equal(isPeriodSpan('FY2023 and FY2022'), true);
    assert.equal(isPeriodSpan('Q2 of FY2024'), true);
    assert.equal(isPeriodSpan('USD'), true);
    assert.equal(isPeriodSpan('Best Buy'), false);
    assert.equal(isPeriodSpan('FY2023 Annual Report'), false);
  });
});

describe('filing questions about the company and about which thing ranks first', () => {
  it('knows a question about what the company does, "what business" included', () => {
    for (const q of ['What industry does AMCOR primarily operate in?', 'What does Foot Locker do?', 'What business is Block in?', "What is 3M's core business?", 'Which sector does Acme operate in?', 'What line of business is Acme in?'])
      assert.ok(asksCompanyActivity(q), q);
    for (const q of ['What does Pfizer expect to pay to spin off Upjohn?', 'What businesses did AMCOR acquire in FY2023?', 'What does the company do to reduce costs?', 'Who founded the business?', 'What is the FY2018 capital expenditure amount?'])
      assert.ok(!asksCompanyActivity(q), q);
  });

  it('knows a sentence that describes what a company is or does', () => {
    for (const s of ['Amcor is a global leader in developing and producing responsible packaging.', 'Today, we are a global leader in packaging.', 'We design, manufacture and sell athletic footwear.', '3M is a diversified technology company.', 'The Company operates in two segments.'])
      assert.ok(COMPANY_DESCRIPTION.test(s), s);
    for (const s of ['Net sales increased 5% in fiscal 2023.', 'Acme plc is a public limited company incorporated under the laws of Jersey.', 'This is a company-wide program.', 'The following table provides details of our revenue.', 'Revenue growth was the highest in the company history.'])
      assert.ok(!COMPANY_DESCRIPTION.test(s), s);
  });

  it('reads the kind a "which … had the biggest …" question picks from, without the names before it', () => {
    assert.equal(superlativeKind('Which region had the worst topline performance for MGM during FY2022?'), 'region');
    assert.equal(superlativeKind('For Pfizer, which geographic region had the biggest drop in Q22023 revenues?'), 'geographic region');
    assert.equal(superlativeKind('Which Best Buy product category performed the best (by top line) in Q2?'), 'product category');
    assert.equal(superlativeKind('Which team won the cup?'), undefined);
    assert.equal(superlativeKind('What was the largest acquisition?'), undefined);
  });
});

describe('software questions and code names', () => {
  it('asks for a code name when the noun after what/which is a function, command, flag, package…', () => {
    assert.equal(answerTypeOf('Which function creates a Hono app?'), 'identifier');
    assert.equal(answerTypeOf('What packages do I install first?'), 'identifier');
    assert.equal(answerTypeOf('Which CLI flag turns on watch mode?'), 'identifier');
    // Further on, the noun says nothing of the answer's kind; a class of ships is no code.
    assert.equal(answerTypeOf('What is the number of packages?'), 'number');
    assert.equal(answerTypeOf('Which class of ships did she belong to?'), 'other');
  });

  it('finds a code name the question does not already name as the cue of such a question', () => {
    const asked = new Set(supportTerms('Which function creates a Hono app?'));
    assert.equal(answerCue('identifier', 'Use createMcpHonoApp() to get one.', asked), 'createMcpHonoApp');
    assert.equal(answerCue('identifier', 'Pass `--watch` to rebuild on save.', asked), '--watch');
    assert.equal(answerCue('identifier', 'npm install @scope/server zod', asked), '@scope/server');
    assert.equal(answerCue('identifier', 'The Hono app is created for you.', asked), undefined);
    // A code span that only repeats the question's words offers nothing new.
    assert.equal(answerCue('identifier', 'Call `createHonoApp` here.', asked), undefined);
  });

  it('reads an identifier as the words it joins, keeping the identifier itself', () => {
    assert.deepEqual(supportTerms('createMcpHonoApp'), contentTerms('createMcpHonoApp create Mcp Hono App'));
    assert.ok(supportTerms('QMD_EMBED_PARALLELISM').includes('parallel'));
    assert.ok(supportTerms('server.registerTool').includes('regist'));
    // Names with capitals inside that open with one, abbreviations and versions stay whole.
    assert.deepEqual(supportTerms('McDonald YouTube'), contentTerms('McDonald YouTube'));
    assert.deepEqual(supportTerms('U.S.A. v1.2.3'), contentTerms('U.S.A. v1.2.3'));
  });

  it('reads "the difference between X and Y" and "X vs. Y" as comparisons of things that need not be names', () => {
    const a = analyzeQuestion('What is the difference between a tool error and a protocol error?');
    assert.equal(a.comparison, true);
    assert.deepEqual(a.compared, ['tool error', 'protocol error']);
    assert.deepEqual(analyzeQuestion('Should I use stdio vs. HTTP for a local server?').compared, ['stdio', 'HTTP']);
    assert.equal(analyzeQuestion('What is the difference made by the new rule?').comparison, false);
  });

  it('reads a question that asks how to do something (code answers it), and not a "how" that asks a manner or an amount', () => {
    for (const q of ['How do I stop the qmd MCP daemon?', 'how can we register the types on a client', 'how to mount the handler in Hono', 'semver coerce example']) assert.equal(asksProcedure(q), true, q);
    for (const q of ['How did the war begin?', 'How many candidates are reranked?', 'Where does qmd cache its models?', 'How does a tool report invalid arguments?']) assert.equal(asksProcedure(q), false, q);
  });
});
