// The topic compass wired into the product: the indexer fits the metadata bank with each
// generation, updates it incrementally, refits on drift or a new encoder, keeps it crash-safe and
// garbage-collected with its generation; a restarted process reopens it. The workspace, with
// canopy.topics.enabled, trains a first scorer, wraps the hybrid retriever, and the ask
// pipeline writes the compass's record into the trace. Real parser, store, BM25, bank files.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { runIndexer, type IndexerDeps } from '../../../src/core/index/indexer';
import { paths, readCurrent } from '../../../src/core/index/layout';
import { LocalStore } from '../../../src/core/index/localStore';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { HybridRetriever } from '../../../src/core/retrieve/hybrid';
import { openCompass, trainOnIndex } from '../../../src/core/topics/compassIndex';
import { readTopicBank, readTopicScorer, topicStage, topicSummaryOf, writeTopicScorer, type TopicIndexOptions } from '../../../src/core/topics/indexTopics';
import { hashEmbed, hashEmbeddings } from '../../helpers/hashEmbeddings';
import { openServices, type TestServices } from '../../helpers/services';

const subjects: Record<string, string[]> = {
  trees: ['oak', 'ash', 'beech', 'birch', 'alder', 'willow'],
  rivers: ['flood', 'gauge', 'bank', 'current', 'sediment', 'weir'],
  birds: ['owl', 'heron', 'wren', 'kestrel', 'swift', 'finch'],
};

/** A file about one subject: sentences built from that subject's words only. */
function doc(subject: string, n: number): string {
  const w = subjects[subject]!;
  const s = (i: number) => `The ${w[(n + i) % 6]} and the ${w[(n + i + 1) % 6]} near the ${w[(n + i + 2) % 6]} ${subject} site ${n}.`;
  return `# ${subject} note ${n}\n\n${s(0)} ${s(1)} ${s(2)}\n`;
}

describe('topic compass in the indexer', () => {
  let root: string;
  let dir: string;
  const write = (rel: string, content: string) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), content);
  };
  const deps = (embeddings = hashEmbeddings(), topics: TopicIndexOptions | null = { k: 3 }): IndexerDeps => ({
    store: new LocalStore(dir),
    parse: (rel, bytes) => parseFile(rel, bytes, { graph: false }),
    embeddings,
    parserVersion: 'test',
    branchingFactor: 2,
    ...(topics ? { stage: topicStage(topics) } : {}),
  });
  const index = async (d = deps()) => runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 1 }), d);
  const topicFiles = () => readdirSync(dir).filter((n) => /^topics-\d+\.bin$/.test(n)).sort();

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'canopy-topics-ws-'));
    dir = mkdtempSync(join(tmpdir(), 'canopy-topics-idx-'));
    for (const s of Object.keys(subjects)) for (let n = 0; n < 5; n++) write(`${s}/${n}.md`, doc(s, n));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('fits the bank with the generation, and a new process reopens it with every item', async () => {
    const s = await index();
    assert.equal(topicSummaryOf(s)?.action, 'fit');
    assert.equal(topicSummaryOf(s)?.k, 3);
    assert.deepEqual(topicFiles(), [`topics-${s.generation}.bin`]);
    // "Restart": nothing in memory, everything from disk.
    const generation = await readCurrent(dir);
    const corpus = await CorpusIndex.open(new LocalStore(dir));
    const bank = await readTopicBank(dir, generation!);
    assert.ok(bank);
    assert.equal(bank.model.encoderId, 'hash-256');
    const items = Object.values(corpus.manifest.files).flatMap((f) => f.items);
    assert.deepEqual([...bank.ids].sort(), [...items].sort());
    // The topics separate the three subjects: each subject's files share one dominant topic.
    const top = (id: string) => bank.distribution(bank.indexOf(id)!)[0]!.topic;
    for (const subject of Object.keys(subjects)) {
      const ids = Object.entries(corpus.manifest.files).filter(([f]) => f.startsWith(`${subject}/`)).flatMap(([, e]) => e.items);
      const dominant = new Set(ids.map(top));
      assert.equal(dominant.size, 1, `${subject}: ${[...dominant]}`);
    }
    // Labels are the topics' top terms: each subject names exactly one topic.
    for (const subject of Object.keys(subjects)) assert.equal(bank.model.labels.filter((l) => l.includes(subject)).length, 1, bank.model.labels.join(' | '));
  });

  it('updates incrementally, refits on drift, collects old banks, and refits under a new encoder', async () => {
    const first = await index();
    // One file more whose text matches the fitted topics: an update, not a refit.
    write('trees/5.md', doc('trees', 0).replace('note 0', 'note 5'));
    const second = await index();
    assert.equal(topicSummaryOf(second)?.action, 'update');
    // The generation it was built from stays whole (bank included) for readers that opened it before the commit.
    assert.deepEqual(topicFiles(), [`topics-${first.generation}.bin`, `topics-${second.generation}.bin`]);
    const bank2 = (await readTopicBank(dir, second.generation))!;
    const corpus2 = await CorpusIndex.open(new LocalStore(dir));
    const added = corpus2.manifest.files['trees/5.md']!.items;
    assert.ok(added.every((id) => bank2.indexOf(id) !== undefined));
    assert.equal(bank2.size, first.items + added.length);
    // Remove most of a subject: the changed share passes the drift threshold.
    for (const n of [0, 1, 2, 3, 4]) rmSync(join(root, 'birds', `${n}.md`));
    const third = await index();
    assert.equal(topicSummaryOf(third)?.action, 'refit');
    assert.deepEqual(topicFiles(), [`topics-${second.generation}.bin`, `topics-${third.generation}.bin`], 'the bank of an older generation is garbage');
    const bank3 = (await readTopicBank(dir, third.generation))!;
    assert.equal(bank3.size, third.items);
    assert.equal(bank3.stats.changedSinceFit, 0, 'a refit starts the drift count again');
    // Another encoder: the bank is fitted from scratch in that encoder's space.
    const fourth = await index(deps(hashEmbeddings(128)));
    assert.equal(topicSummaryOf(fourth)?.action, 'fit');
    assert.equal((await readTopicBank(dir, fourth.generation))!.model.dim, 128);
  });

  it('a damaged bank is an index-corrupt error and the next index run fits a new one; topics off removes banks', async () => {
    const s = await index();
    const file = paths(dir).topics(s.generation);
    writeFileSync(file, Buffer.from('CNPYTOPB garbage'));
    await assert.rejects(readTopicBank(dir, s.generation), (err: Error & { code?: string }) => err.code === 'E_INDEX_CORRUPT');
    const again = await index();
    assert.equal(topicSummaryOf(again)?.action, 'fit');
    assert.match(topicSummaryOf(again)?.reason ?? '', /unreadable/);
    assert.ok(await readTopicBank(dir, again.generation));
    // Topics off and nothing changed: the live generation stays as it is, bank and all (unused).
    const unchanged = await index(deps(hashEmbeddings(), null));
    assert.equal(unchanged.unchanged, true);
    assert.equal(unchanged.generation, again.generation);
    assert.deepEqual(topicFiles(), [`topics-${again.generation}.bin`], 'nothing written; the older generation collected');
    // Topics off and a file changed: the new generation has no bank; only the previous one's
    // stays, for its readers, until the next generation is written.
    write('birds/0.md', `${doc('birds', 0)} It nests in hedges.`);
    const off = await index(deps(hashEmbeddings(), null));
    assert.equal(topicSummaryOf(off), undefined);
    assert.equal(off.generation, again.generation + 1);
    assert.deepEqual(topicFiles(), [`topics-${again.generation}.bin`]);
    write('birds/1.md', `${doc('birds', 1)} It nests in hedges.`);
    await index(deps(hashEmbeddings(), null));
    assert.deepEqual(topicFiles(), []);
  });

  it('a topic stage that fails leaves the generation without a bank, never the index unwritten', async () => {
    // A store that cannot list its vectors: a fit is impossible.
    class NoEntries extends LocalStore {
      override async entries(): Promise<never> {
        throw new Error('this store cannot list its vectors');
      }
    }
    const store = new NoEntries(dir);
    const warnings: string[] = [];
    const s = await index({ ...deps(), store, logger: { log: (level, m) => void (level === 'warn' && warnings.push(m)) } });
    assert.equal(topicSummaryOf(s), undefined);
    assert.deepEqual(topicFiles(), []);
    assert.match(warnings.join('\n'), /topics: no topic bank for generation \d+: this store cannot list its vectors/);
    assert.equal(await readCurrent(dir), s.generation, 'the generation was committed');
  });

  it('trains a scorer from qrels-style labels on the index, stores it, and the compass re-ranks with it', async () => {
    await index();
    const store = new LocalStore(dir);
    const corpus = await CorpusIndex.open(store);
    const bank = (await readTopicBank(dir, corpus.generation))!;
    const embedQuery = async (t: string) => hashEmbed(t);
    const hybrid = new HybridRetriever(corpus, embedQuery);
    const queries = Object.entries(corpus.manifest.files).map(([file, e]) => ({ id: file, text: `${file.split('/')[0]} ${subjects[file.split('/')[0]!]![Number(file.split('/')[1]![0]) % 6]}`, positives: e.items }));
    const a = await trainOnIndex({ corpus, bank, hybrid, embedQuery, source: 'qrels', queries }, { seed: 3, holdout: 0.2, epochs: 5 });
    const b = await trainOnIndex({ corpus, bank, hybrid, embedQuery, source: 'qrels', queries }, { seed: 3, holdout: 0.2, epochs: 5 });
    assert.deepEqual(a.checkpoint.weights, b.checkpoint.weights, 'seeded: the same weights');
    assert.equal(a.checkpoint.training.heldOutQueries, 3);
    assert.ok(a.checkpoint.training.heldOut?.['IE@1'], 'held-back queries are scored');
    assert.equal(await readTopicScorer(dir), undefined);
    const opened0 = await openCompass(corpus, hybrid, embedQuery);
    assert.ok('reason' in opened0 && /no trained topic scorer/.test(opened0.reason));
    await writeTopicScorer(dir, a.checkpoint);
    const opened = await openCompass(corpus, hybrid, embedQuery);
    assert.ok('retriever' in opened);
    const r = await opened.retriever.retrieve('flood gauge', 5);
    assert.ok(r.topics.selected.length > 0);
    assert.equal(r.topics.lift.length, r.candidates.length);
    assert.deepEqual(
      r.candidates.map((c) => c.itemId),
      r.topics.lift.map((l) => l.itemId),
    );
  });
});

describe('topic compass in the services and the ask trace', () => {
  const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
  let indexDir: string;
  let ws: TestServices;
  before(async () => {
    indexDir = mkdtempSync(join(tmpdir(), 'canopy-topics-wsidx-'));
    ws = openServices({ root: demo, indexDir, settings: { topicsEnabled: true } });
  });
  after(async () => {
    await ws.close();
    rmSync(indexDir, { recursive: true, force: true });
  });

  it('indexing fits topics and trains a first scorer; ask writes selected topics, weights and per-chunk lift into the trace', async () => {
    const summary = await ws.index.index(ws.settings);
    assert.equal(topicSummaryOf(summary)?.action, 'fit');
    assert.ok(existsSync(paths(indexDir).topics(summary.generation)));
    const checkpoint = await readTopicScorer(indexDir);
    assert.equal(checkpoint?.training.source, 'synthetic');
    const trace = (await ws.ask.ask('Which plot lost ash trees to dieback, and what should be replanted there?', ws.settings, { critic: 'none' })).trace;
    assert.equal(trace.settings.retrieval.topics, true);
    const round = trace.rounds[0]!;
    const topics = round.topics;
    assert.ok(topics, 'the round carries the compass record');
    assert.equal(topics.k, (await readTopicBank(indexDir, summary.generation))!.model.k);
    assert.ok(topics.selected.length > 0 && topics.selected.length <= 10);
    assert.ok(Math.abs(topics.selected.reduce((s, t) => s + t.weight, 0) - 1) < 1e-6, 'weights sum to 1');
    assert.ok(topics.selected.every((t) => t.label.length > 0));
    // The round's ranking is the compass's: the candidates in lift order, each with its topic lift.
    assert.deepEqual(
      round.candidates.map((c) => c.itemId),
      topics.lift.map((l) => l.itemId),
    );
    for (const c of round.candidates) {
      const l = topics.lift.find((x) => x.itemId === c.itemId)!;
      assert.ok(Math.abs((c.scores.topic ?? Number.NaN) - (l.withTopics - l.base)) < 1e-9);
    }
    assert.deepEqual(round.retrieved.map((r) => r.itemId), topics.lift.slice(0, round.retrieved.length).map((l) => l.itemId));
  });

  it('with topics off the same index answers from the hybrid alone, with no topics in the trace', async () => {
    // The same services, asked with the topics setting off: the setting of the request decides.
    const trace = (await ws.ask.ask('Which plot lost ash trees to dieback?', { ...ws.settings, topicsEnabled: false }, { critic: 'none' })).trace;
    assert.equal(trace.settings.retrieval.topics, false);
    assert.equal(trace.rounds[0]!.topics, undefined);
  });
});
