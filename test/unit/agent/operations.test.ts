// The host-independent agent operations over a real index (built-in encoder): the cited regions
// point at the exact text in the file, traces are saved and found again, bad input is refused.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { citationOf } from '../../../src/core/agent/citations';
import { askForAgent, getTrace, listQuestions, searchEvidence, summarizeTrace } from '../../../src/core/agent/operations';
import { CanopyError } from '../../../src/core/errors';
import type { AskTrace } from '../../../src/contracts/trace';
import { indexedFixture, type FixtureWorkspace } from '../../helpers/fixtureWorkspace';

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
  let fx: FixtureWorkspace;
  const saved: string[] = [];
  before(async () => {
    fx = await indexedFixture('e2e-workspace');
  });
  after(async () => {
    await fx?.dispose();
  });

  it('searchEvidence returns kept regions whose citations point at the exact text, and saves the trace', async () => {
    const result = await searchEvidence(fx.workspace, `  ${QUESTION} `, { onTrace: (_t, file) => void saved.push(file) });
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
    assert.equal(saved.length, 1);
    assert.ok(saved[0]!.endsWith(result.traceName));
    assert.ok(result.rounds.length >= 1 && result.rounds[0]!.query === QUESTION);
  });

  it('askForAgent answers with citations into the file, and the trace is listed and found by id and by name', async () => {
    const result = await askForAgent(fx.workspace, QUESTION, {
      onTrace: () => {
        throw new Error('an exporter failure never fails the answer');
      },
    });
    assert.equal(result.mode, 'extractive');
    assert.match(result.answer, /2024-03-12/);
    assert.ok(result.citations.length > 0);
    for (const c of result.citations) {
      const text = readFileSync(join(fx.root, c.file), 'utf8');
      assert.ok(c.chars, `${c.ref}: no offsets`);
      assert.ok(text.slice(c.chars.start, c.chars.end).includes(c.text.trim().split(/\s+/)[0]!), `${c.ref} does not hold ${c.text}`);
    }
    const listed = await listQuestions(fx.workspace);
    assert.ok(listed.some((s) => s.id === result.traceId && s.name === result.traceName));
    const byId = await getTrace(fx.workspace, result.traceId);
    const byName = await getTrace(fx.workspace, result.traceName);
    assert.equal(byId.trace.id, result.traceId);
    assert.deepEqual(byName.trace, byId.trace);
    const summary = summarizeTrace(byId.trace, byId.name);
    assert.equal(summary.answer, result.answer);
    assert.equal(summary.rounds.length, byId.trace.rounds.length);
    assert.equal(summary.regions.length, byId.trace.readerInput.regions.length);
    assert.ok(!('tree' in (summary.rounds[0]!.retrieved[0] as object)), 'the summary carries no scored trees');
  });

  it('refuses bad input with CanopyError codes', async () => {
    const code = (err: unknown) => (err as CanopyError).code;
    await assert.rejects(searchEvidence(fx.workspace, '   '), (e) => code(e) === 'E_BAD_INPUT');
    await assert.rejects(searchEvidence(fx.workspace, QUESTION, { maxRegions: 0 }), (e) => code(e) === 'E_BAD_INPUT');
    await assert.rejects(askForAgent(fx.workspace, 'x'.repeat(4001)), (e) => code(e) === 'E_BAD_INPUT');
    await assert.rejects(getTrace(fx.workspace, 'no-such-trace'), (e) => code(e) === 'E_NOT_FOUND' && /list_questions/.test((e as Error).message));
    await assert.rejects(listQuestions(fx.workspace, 0), (e) => code(e) === 'E_BAD_INPUT');
  });

  it('reports a folder that was never indexed as E_NOT_FOUND', async () => {
    const { CanopyWorkspace } = await import('../../../src/core/app/workspace');
    const { resolveSettings } = await import('../../../src/core/config/settings');
    const { builtinModelDir } = await import('../../helpers/fixtureWorkspace');
    const empty = new CanopyWorkspace({ root: fx.root, indexDir: join(fx.root, '..', 'no-index'), settings: resolveSettings({}), encoder: { kind: 'builtin' }, builtinModelDir });
    try {
      await assert.rejects(searchEvidence(empty, QUESTION), (e) => (e as CanopyError).code === 'E_NOT_FOUND');
    } finally {
      await empty.dispose();
    }
  });

  it('maxRegions caps the listed regions and keptRegions still counts them all', async () => {
    const all = await searchEvidence(fx.workspace, 'wind speed readings of the north mast');
    const one = await searchEvidence(fx.workspace, 'wind speed readings of the north mast', { maxRegions: 1 });
    assert.equal(one.regions.length, 1);
    assert.equal(one.keptRegions, all.keptRegions);
    assert.ok(all.keptRegions >= 1);
    const trace: AskTrace = (await getTrace(fx.workspace, one.traceId)).trace;
    assert.equal(trace.readerInput.regions.length, one.keptRegions);
  });
});
