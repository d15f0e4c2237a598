// The ask pipeline's round loop: every stop condition, repeated items, compressors, the trace.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ask, type AskDeps, type AskOptions } from '../../../src/core/engine/ask';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import type { Critic, CriticInput, CriticVerdict } from '../../../src/core/critic/critic';
import { RuleCritic } from '../../../src/core/critic/ruleCritic';
import { CancelledError } from '../../../src/core/errors';
import { checkTrace } from '../../../src/contracts/trace';
import { ExtractiveReader } from '../../../src/core/read/extractiveReader';
import { hashEmbed, hashEmbeddings } from '../../helpers/hashEmbeddings';
import { textItem } from '../../helpers/items';
import { ListRetriever } from '../../helpers/listRetriever';

const corpus = [
  textItem('films/kiss.md', 'Kiss and Tell (1945 film)', [
    ['Kiss and Tell is a 1945 American comedy film.', 'It stars Shirley Temple as Corliss Archer.'],
    ['The film was directed by Richard Wallace.', 'It was produced by Columbia Pictures.'],
  ]),
  textItem('people/temple.md', 'Shirley Temple', [
    ['Shirley Temple Black was an American actress and diplomat.', 'She served as United States Ambassador to Ghana.'],
    ['She was Chief of Protocol of the United States.'],
  ]),
  textItem('misc/oak.md', 'Pedunculate oak', [['The pedunculate oak is a large deciduous tree.', 'It is native to most of Europe.']]),
];

const options: AskOptions = {
  topK: 1,
  maxRounds: 3,
  branchingFactor: 2,
  compressor: { name: 'canopy' },
  readerTokenCap: 16000,
  encoderId: 'hash-256',
  retrieval: { dense: false, bm25: true, topics: false, fusion: 'rrf', rrfK: 60 },
};

function deps(critic: Critic | undefined, retriever = new ListRetriever(corpus)): AskDeps & { retriever: ListRetriever } {
  const emb = hashEmbeddings();
  return {
    retriever,
    embedQuery: async (t) => hashEmbed(t),
    embedTexts: emb.embed,
    ...(critic ? { critic } : {}),
    reader: new ExtractiveReader(),
    tokens: bpeTokenCounter(),
    index: { root: '/corpus', generation: 1, items: corpus.length },
    newId: () => 'trace-1',
  };
}

/** A critic that answers from a script, recording what it saw. */
class ScriptedCritic implements Critic {
  readonly kind = 'rule' as const;
  readonly seen: CriticInput[] = [];
  constructor(private readonly verdicts: CriticVerdict[]) {}
  async judge(input: CriticInput): Promise<CriticVerdict> {
    this.seen.push(input);
    return this.verdicts[Math.min(this.seen.length - 1, this.verdicts.length - 1)]!;
  }
}

describe('ask pipeline rounds', () => {
  const question = 'Which government position was held by the woman who portrayed Corliss Archer in Kiss and Tell?';

  it('runs one round without a critic', async () => {
    const t = await ask(question, options, deps(undefined));
    assert.equal(t.rounds.length, 1);
    assert.equal(t.stop.reason, 'round-limit');
    assert.equal(t.settings.critic, 'none');
  });

  it('stops when the critic judges the evidence sufficient', async () => {
    const critic = new ScriptedCritic([{ sufficient: true, missing: [], source: 'rule' }]);
    const t = await ask(question, options, deps(critic));
    assert.equal(t.rounds.length, 1);
    assert.equal(t.stop.reason, 'critic-sufficient');
    assert.equal(t.rounds[0]!.critic?.sufficient, true);
  });

  it('follows the critic\'s follow-up query and stops at the round limit', async () => {
    const critic = new ScriptedCritic([
      { sufficient: false, missing: ['position'], followUpQuery: 'Shirley Temple ambassador position', source: 'rule' },
      { sufficient: false, missing: ['tree'], followUpQuery: 'pedunculate oak tree', source: 'rule' },
      { sufficient: false, missing: ['more'], followUpQuery: 'anything else', source: 'rule' },
    ]);
    const d = deps(critic);
    const t = await ask(question, options, d);
    assert.equal(t.rounds.length, 3);
    assert.equal(t.stop.reason, 'round-limit');
    assert.deepEqual(t.rounds.map((r) => r.query), [question, 'Shirley Temple ambassador position', 'pedunculate oak tree']);
    assert.deepEqual(t.rounds.map((r) => r.addedItemIds[0]), ['films/kiss.md#0', 'people/temple.md#0', 'misc/oak.md#0']);
    assert.equal(critic.seen.length, 3);
    assert.equal(critic.seen[1]!.evidence.length, 2, 'the critic sees the accumulated evidence');
  });

  it('stops when a follow-up retrieves nothing new, and never re-compresses a repeated item', async () => {
    const critic = new ScriptedCritic([{ sufficient: false, missing: ['x'], followUpQuery: 'Kiss and Tell 1945 film Shirley Temple Corliss Archer', source: 'rule' }]);
    const small = new ListRetriever(corpus.slice(0, 1));
    const t = await ask(question, { ...options, topK: 2 }, deps(critic, small));
    assert.equal(t.rounds.length, 2);
    assert.equal(t.stop.reason, 'no-new-items');
    const again = t.rounds[1]!.retrieved.find((r) => r.itemId === 'films/kiss.md#0')!;
    assert.equal(again.repeated, true);
    assert.equal(again.tree, undefined, 'a repeated item carries no new scored tree');
    assert.deepEqual(again.keptNodeIds, t.rounds[0]!.retrieved[0]!.keptNodeIds);
  });

  it('multi-hop with the rule critic: the bridge entity finds the second hop', async () => {
    const t = await ask(question, options, deps(new RuleCritic()));
    const items = t.rounds.flatMap((r) => r.addedItemIds);
    assert.ok(items.includes('films/kiss.md#0') && items.includes('people/temple.md#0'), JSON.stringify(t.rounds.map((r) => r.query)));
    assert.match(t.rounds[1]!.query, /Shirley Temple/);
  });

  it('is cancellable', async () => {
    const abort = new AbortController();
    abort.abort();
    await assert.rejects(ask(question, options, deps(new RuleCritic()), abort.signal), CancelledError);
  });

  it('records a complete trace: scored tree, decisions, reader input, answer with citations', async () => {
    const t = await ask('Who directed Kiss and Tell?', { ...options, topK: 2 }, deps(undefined));
    const first = t.rounds[0]!.retrieved[0]!;
    assert.ok(first.tree);
    const nodes: NonNullable<typeof first.tree>[] = [];
    const walk = (n: NonNullable<typeof first.tree>) => {
      nodes.push(n);
      n.children.forEach(walk);
    };
    walk(first.tree);
    assert.ok(nodes.every((n) => ['descend', 'keep-whole', 'dropped-sibling', 'not-visited'].includes(n.decision)));
    assert.ok(nodes.filter((n) => n.decision !== 'not-visited').every((n) => typeof n.score === 'number'));
    assert.ok(t.readerInput.text.startsWith('[1] '));
    assert.equal(t.readerInput.tokens, bpeTokenCounter().count(t.readerInput.text));
    assert.ok(t.totals.evidenceTokens <= t.totals.uncompressedTokens);
    assert.equal(t.answer.mode, 'extractive');
    assert.ok(t.answer.citations.length >= 1);
    for (const c of t.answer.citations) assert.ok(t.answer.text.includes(`[${c.marker}]`));
    // Saved and read back, the trace passes its schema and loses nothing: every field the engine
    // writes is one the schema names (the value read drops keys the schema does not know).
    const saved: unknown = JSON.parse(JSON.stringify(t));
    const read = checkTrace(saved);
    assert.ok(read.ok, read.ok ? '' : read.problem);
    assert.deepEqual(read.value, saved);
  });

  it('compares compressors on the same retrieval: none keeps everything, flat keeps m leaves', async () => {
    const none = await ask('Who directed Kiss and Tell?', { ...options, topK: 3, compressor: { name: 'none' } }, deps(undefined));
    const flat = await ask('Who directed Kiss and Tell?', { ...options, topK: 3, compressor: { name: 'flat', m: 2 } }, deps(undefined));
    assert.equal(none.totals.evidenceTokens, none.totals.uncompressedTokens);
    assert.equal(flat.readerInput.regions.length, 2);
    assert.ok(flat.totals.evidenceTokens < none.totals.evidenceTokens);
  });

  it('caps the reader input and says so', async () => {
    const t = await ask('Kiss and Tell Shirley Temple oak', { ...options, topK: 3, compressor: { name: 'none' }, readerTokenCap: 40 }, deps(undefined));
    assert.equal(t.readerInput.truncated, true);
    assert.ok(t.readerInput.tokens <= 40);
  });
});
