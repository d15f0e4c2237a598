// The host-independent agent operations over the core services and a real index (built-in
// encoder): the cited regions point at the exact text in the file, traces are saved, reported as
// 'answered' events and found again, the settings of the moment apply, bad input is refused.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { citationOf } from '../../../src/core/agent/citations';
import { AgentOperations, describeTrace, type AgentAnsweredEvent } from '../../../src/core/agent/operations';
import { resolveSettings } from '../../../src/core/config/settings';
import { CanopyError } from '../../../src/core/errors';
import type { AskTrace } from '../../../src/contracts/trace';
import { indexedFixture, type IndexedFixture } from '../../helpers/fixtureWorkspace';
import { openServices } from '../../helpers/services';

const QUESTION = 'When were the anemometer and the wind vane recalibrated?';

/** 0-based line and column of a UTF-16 offset. */
function position(text: string, offset: number): { line: number; character: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length - 1, character: before[before.length - 1]!.length };
}

describe('citationOf', () => {
  it('reads text anchors as 1-based lines and a 0-based editor range', () => {
    const c = citationOf({ file: 'a.md', charStart: 10, charEnd: 30, startLine: 2, startColumn: 3, endLine: 3, endColumn: 5 });
    assert.deepEqual(c, {
      ref: 'a.md:2-3',
      file: 'a.md',
      lines: { start: 2, end: 3 },
      range: { start: { line: 1, character: 3 }, end: { line: 2, character: 5 } },
      chars: { start: 10, end: 30 },
    });
  });

  it('does not count a line the region only touches at column 0', () => {
    assert.deepEqual(citationOf({ file: 'a.md', startLine: 4, startColumn: 0, endLine: 6, endColumn: 0 }).lines, { start: 4, end: 5 });
    assert.equal(citationOf({ file: 'a.md', startLine: 4, startColumn: 0, endLine: 4, endColumn: 0 }).ref, 'a.md:4');
  });

  it('names PDF pages, table rows and transcript times the way people read them', () => {
    const pdf = citationOf({ file: 'r.pdf', page: 2, pageEnd: 3, bbox: [1.234, 2, 3, 4] });
    assert.equal(pdf.ref, 'r.pdf p.3–4');
    assert.deepEqual([pdf.page, pdf.pageEnd, pdf.bbox], [3, 4, [1.23, 2, 3, 4]]);
    const row = citationOf({ file: 't.csv', row: 0, startLine: 2, startColumn: 0, endLine: 2, endColumn: 9 });
    assert.equal(row.ref, 't.csv row 1 (line 2)');
    assert.equal(citationOf({ file: 'talk.vtt', timeStart: 30, timeEnd: 3725 }).ref, 'talk.vtt 00:30–1:02:05');
  });
});

describe('agent operations over an indexed folder', () => {
  let fx: IndexedFixture;
  const answered: AgentAnsweredEvent[] = [];
  before(async () => {
    fx = await indexedFixture('e2e-workspace');
    fx.agent.onEvent((e) => void answered.push(e));
  });
  after(async () => {
    await fx?.dispose();
  });

  it('searchEvidence returns kept regions whose citations point at the exact text, and saves the trace', async () => {
    const result = await fx.agent.searchEvidence(`  ${QUESTION} `);
    assert.equal(result.question, QUESTION);
    assert.ok(result.regions.length > 0, 'no regions kept');
    assert.equal(result.keptRegions, result.regions.length);
    assert.deepEqual(result.regions.map((r) => r.n), result.regions.map((_, i) => i + 1));
    for (const r of result.regions) {
      const c = r.citation;
      assert.ok(c.chars && c.range && c.lines, `${c.ref}: a text region without positions`);
      const text = readFileSync(join(fx.root, c.file), 'utf8');
      // The range and the offsets name the same span; the lines are the range's, 1-based.
      assert.deepEqual(c.range.start, position(text, c.chars.start), `${c.ref}: start`);
      assert.deepEqual(c.range.end, position(text, c.chars.end), `${c.ref}: end`);
      assert.equal(c.lines.start, c.range.start.line + 1);
      // Every word of the region's text is in the cited span.
      const span = text.slice(c.chars.start, c.chars.end);
      for (const word of r.text.split(/\s+/).filter((w) => /\w/.test(w))) assert.ok(span.includes(word), `${c.ref}: "${word}" is not in ${JSON.stringify(span)}`);
      assert.ok(r.item.rank >= 1 && typeof r.item.score === 'number');
    }
    const recalibration = result.regions.find((r) => r.text.includes('2024-03-12'));
    assert.ok(recalibration, `no kept region quotes the date: ${JSON.stringify(result.regions.map((r) => r.text))}`);
    assert.equal(recalibration.citation.file, 'notes/sensors.md');
    const lines = readFileSync(join(fx.root, 'notes/sensors.md'), 'utf8').split('\n');
    const dateLine = lines.findIndex((l) => l.includes('2024-03-12')) + 1;
    const { start, end } = recalibration.citation.lines!;
    assert.ok(start <= dateLine && dateLine <= end, `lines ${start}-${end} do not cover line ${dateLine}`);
    assert.equal(answered.length, 1);
    assert.deepEqual([answered[0]!.operation, answered[0]!.question, answered[0]!.trace.id], ['searchEvidence', QUESTION, result.traceId]);
    assert.ok(answered[0]!.file.endsWith(result.traceName));
    assert.equal(result.warnings, undefined);
    assert.ok(result.rounds.length >= 1 && result.rounds[0]!.query === QUESTION);
  });

  it('ask answers with citations into the file, and the trace is listed and found by id and by name', async () => {
    const unsubscribe = fx.agent.onEvent(() => {
      throw new Error('a listener failure never fails the answer');
    });
    const result = await fx.agent.ask(QUESTION).finally(unsubscribe);
    assert.equal(answered.at(-1)?.trace.id, result.traceId);
    assert.equal(result.mode, 'extractive');
    assert.match(result.answer, /2024-03-12/);
    assert.ok(result.citations.length > 0);
    for (const c of result.citations) {
      const text = readFileSync(join(fx.root, c.file), 'utf8');
      assert.ok(c.chars, `${c.ref}: no offsets`);
      assert.ok(text.slice(c.chars.start, c.chars.end).includes(c.text.trim().split(/\s+/)[0]!), `${c.ref} does not hold ${c.text}`);
    }
    const listed = await fx.agent.listQuestions();
    assert.ok(listed.some((s) => s.id === result.traceId && s.name === result.traceName));
    const byId = await fx.agent.getTrace(result.traceId);
    const byName = await fx.agent.getTrace(result.traceName);
    assert.equal(byId.trace.id, result.traceId);
    assert.deepEqual(byName.trace, byId.trace);
    const summary = describeTrace(byId.trace, byId.name);
    assert.equal(summary.answer, result.answer);
    assert.equal(summary.rounds.length, byId.trace.rounds.length);
    assert.equal(summary.regions.length, byId.trace.readerInput.regions.length);
    assert.ok(!('tree' in (summary.rounds[0]!.retrieved[0] as object)), 'the summary carries no scored trees');
  });

  it('refuses bad input with CanopyError codes', async () => {
    const code = (err: unknown) => (err as CanopyError).code;
    const before = answered.length;
    await assert.rejects(fx.agent.searchEvidence('   '), (e) => code(e) === 'E_BAD_INPUT' && (e as Error).message === 'the question is empty');
    await assert.rejects(fx.agent.searchEvidence(42 as unknown as string), (e) => code(e) === 'E_BAD_INPUT' && (e as Error).message === 'the question must be a string');
    await assert.rejects(fx.agent.searchEvidence(QUESTION, { maxRegions: 0 }), (e) => code(e) === 'E_BAD_INPUT' && /maxRegions must be from 1 to 100/.test((e as Error).message));
    await assert.rejects(fx.agent.ask('x'.repeat(4001)), (e) => code(e) === 'E_BAD_INPUT' && /longer than 4000/.test((e as Error).message));
    await assert.rejects(fx.agent.getTrace('no-such-trace'), (e) => code(e) === 'E_NOT_FOUND' && /list_questions/.test((e as Error).message));
    await assert.rejects(fx.agent.listQuestions(0), (e) => code(e) === 'E_BAD_INPUT');
    assert.equal(answered.length, before, 'no question was asked');
  });

  it('reads the settings at each question, and passes the adapter the host allows', async () => {
    let settings = resolveSettings({ topK: 1, maxRounds: 1 });
    const adapterSeen: string[] = [];
    const agent = new AgentOperations({
      asker: fx.services.ask,
      traces: fx.services.traces,
      settings: () => settings,
      adapterCheckpoint: (s) => {
        adapterSeen.push(s.adapterCheckpoint);
        return { value: 'no-such-checkpoint.json' };
      },
    });
    const first = await agent.searchEvidence(QUESTION);
    let trace = (await agent.getTrace(first.traceId)).trace;
    assert.deepEqual([trace.settings.topK, trace.settings.maxRounds, trace.rounds.length], [1, 1, 1]);
    assert.equal(trace.rounds[0]!.retrieved.length, 1);
    // The checkpoint the host chose could not be loaded: the question is answered, and says so.
    assert.match(first.warnings?.[0] ?? '', /^adapter: .*untrained encoder/);
    settings = resolveSettings({ topK: 3, maxRounds: 1, adapterCheckpoint: 'set.json' });
    const second = await agent.searchEvidence(QUESTION, { topK: 2 });
    trace = (await agent.getTrace(second.traceId)).trace;
    assert.equal(trace.settings.topK, 2, 'a per-call topK wins over the settings');
    assert.deepEqual(adapterSeen, ['', 'set.json']);
  });

  it('reports a folder that was never indexed as E_NOT_FOUND, or indexes it first where the host does', async () => {
    const empty = openServices({ root: fx.root, indexDir: join(fx.root, '..', 'no-index') });
    try {
      const bare = new AgentOperations({ asker: empty.ask, traces: empty.traces, settings: () => empty.settings });
      await assert.rejects(bare.searchEvidence(QUESTION), (e) => (e as CanopyError).code === 'E_NOT_FOUND' && /no Canopy index/.test((e as Error).message));
      let indexed = 0;
      const indexing = new AgentOperations({
        asker: empty.ask,
        traces: empty.traces,
        settings: () => empty.settings,
        ensureIndex: async () => {
          indexed++;
          await empty.index.index(empty.settings);
        },
      });
      const found = await indexing.searchEvidence(QUESTION);
      assert.equal(indexed, 1);
      assert.ok(found.regions.some((r) => r.text.includes('2024-03-12')));
    } finally {
      await empty.close();
    }
  });

  it('maxRegions caps the listed regions and keptRegions still counts them all', async () => {
    const all = await fx.agent.searchEvidence('wind speed readings of the north mast');
    const one = await fx.agent.searchEvidence('wind speed readings of the north mast', { maxRegions: 1 });
    assert.equal(one.regions.length, 1);
    assert.equal(one.keptRegions, all.keptRegions);
    assert.ok(all.keptRegions >= 1);
    const trace: AskTrace = (await fx.agent.getTrace(one.traceId)).trace;
    assert.equal(trace.readerInput.regions.length, one.keptRegions);
  });
});
