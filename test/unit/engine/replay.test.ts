// Replay (src/core/engine/replay): real traces from the AskService over the demo corpus with the
// built-in encoder, replayed with other settings from their cached scores. The encoder is made
// to throw before every replay, so any re-embedding fails the test.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { openServices, type TestServices } from '../../helpers/services';
import { scoreNodes } from '../../../src/core/compress/nodeScorer';
import { canopyCompressor } from '../../../src/core/config/settings';
import { nodeVectors } from '../../../src/core/encode/nodeVectors';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import type { Encoder } from '../../../src/core/encode/encoder';
import { CanopyError } from '../../../src/core/errors';
import { regionFromTrace } from '../../../src/core/engine/recorded';
import { replayTrace } from '../../../src/core/engine/replay';
import type { AskTrace, CompressorSetting, TraceNode } from '../../../src/contracts/trace';
import type { Critic } from '../../../src/core/critic/critic';
import { RuleCritic } from '../../../src/core/critic/ruleCritic';

const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';
/** A question the demo corpus answers only in part: the rule critic keeps finding a gap. */
const gapQuestion = 'Which plot lost ash trees to dieback, and who paid for the replanting?';

function walk(n: TraceNode, out: TraceNode[] = []): TraceNode[] {
  out.push(n);
  n.children.forEach((c) => walk(c, out));
  return out;
}

const trees = (t: AskTrace) => t.rounds.flatMap((r) => r.retrieved.filter((i) => i.tree).map((i) => i.tree!));

/** Everything of a round that the replay must reproduce (timings and ids aside). */
const roundView = (t: AskTrace) =>
  t.rounds.map((r) => ({ round: r.round, query: r.query, added: r.addedItemIds, critic: r.critic, retrieved: r.retrieved, candidates: r.candidates }));

describe('replay from cached scores', () => {
  let indexDir: string;
  let ws: TestServices;
  let small: AskTrace; // k = 3, a question with a gap: several rounds, items added in later rounds, stopped at the limit
  let full: AskTrace; // k = 10
  let learned: AskTrace; // the gap question with the critic model's stop
  let encodes = 0;
  let trapped = false;

  /** From now on any encoder call fails the test. */
  const trapEncoder = async () => {
    const enc: Encoder = (await ws.embeddings.load()).encoder;
    if (trapped) return;
    const real = enc.encode.bind(enc);
    enc.encode = async (texts, signal) => {
      if (trapped) {
        encodes++;
        throw new Error(`the encoder was called during a replay with ${texts.length} text(s)`);
      }
      return real(texts, signal);
    };
    trapped = true;
  };

  before(async () => {
    indexDir = mkdtempSync(join(tmpdir(), 'canopy-replay-'));
    // Without the look-ahead or the critic model's stop, so the gap question's trace has follow-up
    // rounds to replay (the look-ahead's own stop is replayed below, with the critic passed in; the
    // critic model's, in the last test).
    ws = openServices({ root: demo, indexDir, settings: { criticLookAhead: false, criticModel: false } });
    await ws.index.index(ws.settings);
    small = (await ws.ask.ask(gapQuestion, ws.settings, { topK: 3, maxRounds: 2 })).trace;
    full = (await ws.ask.ask(question, ws.settings)).trace;
    learned = (await ws.ask.ask(gapQuestion, { ...ws.settings, criticModel: true }, { topK: 3, maxRounds: 2 })).trace;
    await trapEncoder();
  });

  after(async () => {
    await ws?.close();
    rmSync(indexDir, { recursive: true, force: true });
  });

  it('rebuilds inner-node texts from the leaves exactly (token counts match the trace)', () => {
    const tokens = bpeTokenCounter();
    for (const tree of trees(full)) {
      const region = regionFromTrace(tree);
      const regions = new Map<string, string>();
      const collect = (n: typeof region) => {
        regions.set(n.id, n.text);
        n.children.forEach(collect);
      };
      collect(region);
      for (const n of walk(tree)) assert.equal(tokens.count(regions.get(n.id)!), n.tokens, n.id);
    }
  });

  it('with the recorded settings reproduces the recorded trace', async () => {
    assert.ok(small.rounds.length >= 2, 'the k = 3 trace has follow-up rounds');
    assert.ok(small.rounds.slice(1).some((r) => r.addedItemIds.length > 0), 'a later round added items');
    for (const original of [small, full]) {
      const again = await ws.ask.replay(original, {}, ws.settings);
      assert.deepEqual(roundView(again), roundView(original));
      assert.deepEqual(again.readerInput, original.readerInput);
      assert.deepEqual(again.answer, original.answer);
      assert.deepEqual(again.totals, original.totals);
      assert.deepEqual(again.stop, original.stop);
      assert.deepEqual(again.replay, { of: original.id, changed: {}, notes: [] });
      assert.notEqual(again.id, original.id);
    }
    assert.equal(encodes, 0);
  });

  it('reproduces the recorded trace for every recorded configuration (compressor × critic × k)', async () => {
    // The critic the trace recorded as an LLM's: replay reuses its verdicts (critic: 'recorded').
    const scripted: Critic = {
      kind: 'llm',
      judge: async ({ round, question: q }) =>
        round === 1 ? { sufficient: false, missing: ['replanting'], followUpQuery: `${q} replanting species`, source: 'llm' } : { sufficient: true, missing: [], source: 'llm' },
    };
    // The settings' default compressor (CANOPY with a glimpse) first, and the plain rule: the
    // hybrid and look-ahead asks below run with the default too.
    const compressors: CompressorSetting[] = [canopyCompressor(ws.settings), { name: 'canopy' }, { name: 'canopy', itemGate: 0.05 }, { name: 'canopy', items: 0.3, wholeBelow: 200 }, { name: 'canopy', items: 0.3, minItems: 2, glimpse: 1 }, { name: 'none' }, { name: 'flat', m: 6 }, { name: 'threshold', threshold: 0.2 }];
    const critics: Array<'rule' | 'none' | Critic> = ['rule', 'none', scripted];
    trapped = false; // asking encodes the new queries
    const recorded: AskTrace[] = [];
    for (const compressor of compressors) for (const critic of critics) for (const topK of [3, 10]) recorded.push((await ws.ask.ask(question, ws.settings, { compressor, critic, topK })).trace);
    // Hybrid node scores, both lexical models.
    for (const nodeScore of [{ dense: 1, lexical: 0.5 }, { dense: 1, lexical: 1, model: 'coverage' as const }]) {
      for (const critic of ['rule', 'none'] as const) recorded.push((await ws.ask.ask(gapQuestion, ws.settings, { critic, topK: 3, maxRounds: 2, nodeScore })).trace);
    }
    // The rule critic with its look-ahead on the gap question: what the follow-up would retrieve
    // decides the round; a replay cannot search again and reuses the recorded verdict.
    const probedStop = (await ws.ask.ask(gapQuestion, ws.settings, { topK: 3, maxRounds: 2, critic: new RuleCritic({ lookAhead: true }) })).trace;
    {
      const details = probedStop.rounds[0]!.critic!.details as { probe?: { worth: boolean; query: string } };
      assert.ok(details.probe, 'the critic probed its follow-up query');
      if (!details.probe.worth) {
        assert.equal(probedStop.rounds.length, 1);
        assert.equal(probedStop.stop.reason, 'no-follow-up');
        assert.match(probedStop.stop.note, /finds nothing that answers better/);
      }
      recorded.push(probedStop);
    }
    await trapEncoder();
    trapped = true;
    const seen = new Set(recorded.map((t) => `${JSON.stringify(t.settings.compressor)} ${t.settings.critic} ${t.settings.topK} ${JSON.stringify(t.settings.nodeScore ?? null)}`));
    assert.equal(seen.size, compressors.length * critics.length * 2 + 4, 'every configuration was recorded');
    assert.ok(recorded.some((t) => t.rounds.some((r) => (r.critic?.details as { probe?: unknown } | undefined)?.probe)), 'some traces record a probe');
    assert.ok(recorded.some((t) => t.settings.nodeScore && t.rounds[0]!.retrieved[0]!.tree!.components), 'hybrid traces carry the components');
    assert.ok(recorded.some((t) => t.rounds.some((r) => r.retrieved.some((i) => i.gate && !i.gate.kept && i.keptNodeIds.length === 0))), 'the rank gate dropped an item, and the trace says why');
    assert.ok(recorded.some((t) => t.rounds.length > 1 && t.settings.critic === 'rule'), 'some rule-critic traces have follow-up rounds');
    assert.ok(recorded.some((t) => t.settings.critic === 'llm' && t.stop.reason === 'critic-sufficient' && t.rounds.length === 2));
    for (const original of recorded) {
      const label = `${JSON.stringify(original.settings.compressor)} critic=${original.settings.critic} k=${original.settings.topK} node=${JSON.stringify(original.settings.nodeScore ?? null)}`;
      const again = await ws.ask.replay(original, {}, ws.settings);
      assert.deepEqual(roundView(again), roundView(original), label);
      assert.deepEqual(again.readerInput, original.readerInput, label);
      assert.deepEqual(again.answer, original.answer, label);
      assert.deepEqual(again.totals, original.totals, label);
      assert.deepEqual(again.stop, original.stop, label);
      const notes = original.settings.critic === 'llm' ? ['the LLM critic’s recorded verdicts are reused; they judged the recorded evidence'] : [];
      assert.deepEqual(again.replay, { of: original.id, changed: {}, notes }, label);
    }
    assert.equal(encodes, 0);
  });

  it('re-weighs hybrid node scores from the recorded components without the encoder', async () => {
    trapped = false;
    const hybrid = (await ws.ask.ask(question, ws.settings, { nodeScore: { dense: 1, lexical: 0.5 }, critic: 'none' })).trace;
    await trapEncoder();
    trapped = true;
    const nodes = trees(hybrid).flatMap((t) => walk(t));
    assert.ok(nodes.every((n) => n.score === undefined || (n.components && Math.abs(n.score - (n.components.dense + 0.5 * n.components.lexical)) < 1e-9)), 'score = dense + 0.5 × lexical');
    assert.ok(nodes.some((n) => (n.components?.lexical ?? 0) > 0), 'some node has lexical evidence');
    const tokens = bpeTokenCounter();
    const dense = await replayTrace(hybrid, { nodeScore: { dense: 1, lexical: 0 } }, { tokens });
    assert.deepEqual(dense.replay!.changed, { nodeScore: { dense: 1, lexical: 0 } });
    assert.equal(dense.settings.nodeScore, undefined);
    // Dense alone: every score is the recorded dense component, and matches asking with the dense cosine.
    const byId = new Map(nodes.map((n) => [n.id, n]));
    for (const n of trees(dense).flatMap((t) => walk(t))) if (n.score !== undefined) assert.ok(Math.abs(n.score - byId.get(n.id)!.components!.dense) < 1e-9, n.id);
    trapped = false;
    // Asked with the dense cosine itself (the settings' default is the profile's hybrid score).
    const plain = (await ws.ask.ask(question, { ...ws.settings, nodeScore: 'dense' }, { critic: 'none' })).trace;
    assert.equal(plain.settings.nodeScore, undefined);
    trapped = true;
    assert.deepEqual(dense.rounds[0]!.retrieved.map((r) => r.keptNodeIds), plain.rounds[0]!.retrieved.map((r) => r.keptNodeIds));
    const heavier = await replayTrace(hybrid, { nodeScore: { dense: 1, lexical: 2 } }, { tokens });
    for (const n of trees(heavier).flatMap((t) => walk(t))) if (n.score !== undefined) assert.ok(Math.abs(n.score - (n.components!.dense + 2 * n.components!.lexical)) < 1e-9, n.id);
    assert.equal(encodes, 0);
  });

  it('changes the compressor from the trace alone (no index needed)', async () => {
    const tokens = bpeTokenCounter();
    const none = await replayTrace(full, { compressor: { name: 'none' } }, { tokens });
    for (const item of none.rounds[0]!.retrieved) {
      assert.deepEqual(item.keptNodeIds, [item.tree!.id], 'no compression keeps the whole item');
      assert.equal(item.tokens.kept, item.tokens.whole);
    }
    assert.equal(none.totals.evidenceTokens, none.totals.uncompressedTokens);
    assert.deepEqual(none.replay!.changed, { compressor: { name: 'none' } });

    const flat = await replayTrace(full, { compressor: { name: 'flat', m: 4 } }, { tokens });
    const keptLeaves = flat.rounds[0]!.retrieved.flatMap((i) => i.keptNodeIds);
    assert.equal(keptLeaves.length, 4);
    // The four kept leaves are the four best-scoring leaves of the round.
    const leaves = flat.rounds[0]!.retrieved.flatMap((i) => walk(i.tree!).filter((n) => n.children.length === 0));
    const best = [...leaves].sort((a, b) => b.score! - a.score!).slice(0, 4).map((n) => n.id);
    assert.deepEqual(new Set(keptLeaves), new Set(best));
    assert.ok(flat.totals.evidenceTokens < full.totals.evidenceTokens);

    const threshold = await replayTrace(full, { compressor: { name: 'threshold', threshold: 0.3 } }, { tokens });
    for (const item of threshold.rounds[0]!.retrieved) {
      for (const n of walk(item.tree!)) {
        if (n.children.length > 0) continue;
        assert.equal(item.keptNodeIds.includes(n.id), n.score! >= 0.3, n.id);
        assert.equal(n.decision, n.score! >= 0.3 ? 'kept-by-baseline' : 'dropped-by-baseline');
      }
    }
    assert.equal(encodes, 0);
  });

  it('changes rounds and critic: fewer rounds stop at the limit, more than recorded say they diverged', async () => {
    const tokens = bpeTokenCounter();
    const one = await replayTrace(small, { maxRounds: 1 }, { tokens });
    assert.equal(one.rounds.length, 1);
    assert.equal(one.stop.reason, 'round-limit');
    const none = await replayTrace(small, { critic: 'none' }, { tokens });
    assert.equal(none.rounds.length, 1);
    assert.equal(none.rounds[0]!.critic, undefined);
    assert.equal(none.settings.critic, 'none');
    // A flat compressor keeps other evidence, so the rule critic asks another follow-up query
    // than the recorded one: the replay cannot retrieve for it and says so.
    const flat = await replayTrace(small, { compressor: { name: 'flat', m: 1 } }, { tokens });
    const r1 = flat.rounds[0]!;
    assert.ok(r1.critic?.followUpQuery, 'the rule critic still finds gaps');
    assert.notEqual(r1.critic.followUpQuery, small.rounds[1]!.query);
    assert.equal(flat.stop.reason, 'replay-diverged');
    assert.match(flat.stop.note, /never ran/);
    assert.equal(flat.rounds.length, 1);
    const more = await replayTrace(small, { maxRounds: small.rounds.length + 1 }, { tokens });
    assert.equal(more.rounds.length, small.rounds.length);
    assert.equal(small.stop.reason, 'round-limit', 'the recorded run still had gaps at its limit');
    assert.equal(more.stop.reason, 'replay-diverged');
    assert.match(more.stop.note, new RegExp(`round ${small.rounds.length + 1} would retrieve`));
    assert.equal(encodes, 0);
  });

  it('re-groups the trees with another B; group scores equal scoring the re-grouped tree with the query vector', async () => {
    const b3 = await ws.ask.replay(full, { branchingFactor: 3 }, ws.settings);
    assert.deepEqual(b3.replay!.changed, { branchingFactor: 3 });
    assert.equal(b3.settings.branchingFactor, 3);
    const source = await ws.ask.replaySource(ws.settings);
    const q = await source.queryVector(full.rounds[0]!.query);
    assert.ok(q, 'the workspace remembers the query it encoded');
    let groups = 0;
    let widened = 0;
    for (const tree of trees(b3)) {
      for (const n of walk(tree)) {
        assert.ok(n.children.length <= 3, `${n.id} has ${n.children.length} children`);
        if (n.kind === 'group') groups++;
        if (n.children.length === 3) widened++;
      }
      // The reference: vectors of the re-grouped tree straight from the cache, scored with q.
      const vectors = await nodeVectors(regionFromTrace(tree), async (texts) => (await source.cachedVectors(texts)).map((v) => v!));
      const reference = scoreNodes(q!, vectors);
      // The default node score is hybrid: its dense component is the cosine.
      for (const n of walk(tree)) {
        const dense = n.components ? n.components.dense : n.score!;
        assert.ok(Math.abs(dense - reference.get(n.id)!) < 1e-5, `${n.id}: ${dense} vs ${reference.get(n.id)}`);
      }
      assert.ok(walk(tree).some((n) => n.components), 'the replay records the hybrid components');
    }
    assert.ok(widened > 0, 'B = 3 put three children under some node');
    assert.ok(groups > 0);
    // Leaves are the same regions with the same text as in the original trace.
    const leafTexts = (t: AskTrace) => trees(t).flatMap((tree) => walk(tree).filter((n) => n.children.length === 0).map((n) => n.text)).sort();
    assert.deepEqual(leafTexts(b3), leafTexts(full));
    assert.equal(encodes, 0);
  });

  it('a larger k scores the extra items from the index and the cache, as a fresh ask would', async () => {
    const grown = await ws.ask.replay(small, { topK: 5, maxRounds: 1 }, ws.settings);
    trapped = false; // the reference ask may encode
    const fresh = (await ws.ask.ask(gapQuestion, ws.settings, { topK: 5, maxRounds: 1 })).trace;
    trapped = true;
    assert.deepEqual(grown.rounds[0]!.addedItemIds, fresh.rounds[0]!.addedItemIds);
    assert.equal(grown.rounds[0]!.addedItemIds.length, 5);
    const byId = (t: AskTrace) => new Map(t.rounds[0]!.retrieved.map((i) => [i.itemId, i]));
    const got = byId(grown);
    for (const [id, want] of byId(fresh)) {
      assert.deepEqual(got.get(id)!.keptNodeIds, want.keptNodeIds, id);
      assert.deepEqual(got.get(id)!.tokens, want.tokens, id);
      for (const [a, b] of walk(got.get(id)!.tree!).map((n, i) => [n, walk(want.tree!)[i]!] as const)) {
        assert.equal(a.id, b.id);
        assert.ok(Math.abs(a.score! - b.score!) < 1e-6, a.id);
        assert.equal(a.decision, b.decision, a.id);
      }
    }
    assert.match(grown.replay!.notes.join('\n'), /scored from the index and the embedding cache/);
    assert.equal(encodes, 0);
  });

  it('refuses what it cannot do without re-embedding, with a message that says why', async () => {
    const tokens = bpeTokenCounter();
    await assert.rejects(replayTrace(full, { branchingFactor: 4 }, { tokens }), (err: unknown) => err instanceof CanopyError && err.code === 'E_BAD_INPUT' && /needs the workspace index and embedding cache/.test(err.message));
    await assert.rejects(replayTrace(small, { topK: 6 }, { tokens }), /needs the workspace index/);
    // A workspace that never encoded the query (a new window) cannot score new items.
    const other = openServices({ root: demo, indexDir });
    try {
      await assert.rejects(other.ask.replay(small, { topK: 6 }, other.settings), /no longer cached/);
      // …but every change the cache can serve still works there.
      const b4 = await other.ask.replay(full, { branchingFactor: 4 }, other.settings);
      assert.equal(b4.settings.branchingFactor, 4);
    } finally {
      await other.close();
    }
    for (const bad of [{ branchingFactor: 5 }, { topK: 0 }, { maxRounds: 1.5 }, { compressor: { name: 'flat' as const, m: 0 } }]) {
      await assert.rejects(replayTrace(full, bad, { tokens }), (err: unknown) => err instanceof CanopyError && err.code === 'E_BAD_INPUT', JSON.stringify(bad));
    }
    assert.equal(encodes, 0);
  });

  it("reproduces a trace the critic model stopped: its verdict, probability and reasons, and the answer's judgments", async () => {
    assert.ok(learned.settings.criticModel, 'the trace names the critic model');
    assert.ok(learned.settings.readerModel, 'and the reader model');
    const verdict = learned.rounds[0]!.critic!;
    assert.ok(verdict.judgment && verdict.judgment.contributions.length > 0, 'the verdict carries the probability and its reasons');
    assert.ok(learned.answer.citations.some((c) => c.judgment), 'a quote carries its judgment');
    const again = await ws.ask.replay(learned, {}, ws.settings);
    assert.deepEqual(roundView(again), roundView(learned));
    assert.deepEqual(again.answer, learned.answer);
    assert.deepEqual(again.stop, learned.stop);
    assert.equal(encodes, 0);
  });

  it('saves replays beside the traces; the history lists, reads and deletes them by file name only', async () => {
    const replayed = await ws.ask.replay(full, { compressor: { name: 'none' } }, ws.settings);
    const names = await Promise.all([small, full, replayed].map(async (t) => (await ws.traces.save(t)).split(/[\\/]/).pop()!));
    const list = await ws.traces.list();
    assert.deepEqual(new Set(list.map((e) => e.name)), new Set(names));
    const entry = list.find((e) => e.id === replayed.id)!;
    assert.equal(entry.replayOf, full.id);
    assert.equal(entry.question, question);
    assert.deepEqual(await ws.traces.read(entry.name), replayed);
    for (const bad of ['../secrets.json', '/etc/passwd', 'a/b.json', '.hidden.json', 'x.txt']) {
      await assert.rejects(ws.traces.read(bad), /not a trace file name/, bad);
      await assert.rejects(ws.traces.delete(bad), /not a trace file name/, bad);
    }
    await ws.traces.delete(entry.name);
    assert.equal((await ws.traces.list()).some((e) => e.id === replayed.id), false);
    assert.equal(encodes, 0);
  });
});
