import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, fixture, fixtureText, ofKind } from './helpers';

test('vtt: cues grouped into 30-second segments with times and exact char offsets', async () => {
  const doc = await parseFile('talk.vtt', fixture('talk.vtt'));
  const source = fixtureText('talk.vtt');
  assert.equal(assertExactLeaves(doc.items, source, ['segment']), 3);
  const segs = ofKind(doc.items, 'segment');
  assert.deepEqual(
    segs.map((s) => [s.anchor.timeStart, s.anchor.timeEnd]),
    [
      [1, 33],
      [41, 45],
      [62, 65],
    ],
  );
  assert.ok(segs[0]!.text.startsWith('Welcome to the ridge station briefing.'));
  assert.ok(segs[0]!.text.endsWith('The gauge was clogged with leaves.'));
  assert.equal(segs[1]!.text, '<v Hale>We cleaned it on site.');
  assert.ok(segs.every((s) => s.modality === 'transcript'));
  assert.ok(!segs.some((s) => s.text.includes('NOTE')));
});

test('srt: comma timestamps, cue numbers, 30-second windows', async () => {
  const doc = await parseFile('talk.srt', fixture('talk.srt'));
  assert.equal(assertExactLeaves(doc.items, fixtureText('talk.srt'), ['segment']), 2);
  const segs = ofKind(doc.items, 'segment');
  assert.deepEqual(
    segs.map((s) => [s.anchor.timeStart, s.anchor.timeEnd]),
    [
      [1, 4],
      [31, 39],
    ],
  );
  assert.equal(segs[0]!.text, 'Welcome to the ridge station briefing.');
});
