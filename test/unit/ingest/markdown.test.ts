import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markdownChunks } from '../../../src/core/ingest/formats/markdown';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, assertInnerTexts, assertTreeShape, fixture, fixtureText, leaves, ofKind } from './helpers';

const exactKinds = ['sentence', 'row', 'heading', 'code'] as const;

test('markdown: headings nest into sections, leaves slice back exactly', async () => {
  const doc = await parseFile('docs/guide.md', fixture('guide.md'));
  const source = fixtureText('guide.md');
  assert.equal(doc.format, 'markdown');
  assert.equal(doc.title, 'Station Guide', 'front matter title');
  assert.ok(assertExactLeaves(doc.items, source, exactKinds) >= 20);
  assertTreeShape(doc.items, 2);
  assertInnerTexts(doc.items);

  const sections = ofKind(doc.items, 'section').map((s) => [s.level, s.children.find((c) => c.kind === 'heading')?.text ?? '']);
  assert.deepEqual(
    ofKind(doc.items, 'heading').map((h) => [h.level, h.text]),
    [
      [1, 'Station Guide'],
      [2, 'Sensors'],
      [2, 'Maintenance'],
      [3, 'Schedule'],
    ],
  );
  assert.ok(sections.length >= 4);
  const schedule = ofKind(doc.items, 'sentence').find((s) => s.text.startsWith('Visits happen'))!;
  assert.equal(schedule.context, 'Station Guide › Maintenance › Schedule');
  // Front matter is not content.
  assert.ok(!leaves(doc.items).some((l) => l.text.includes('author')));
});

test('markdown: sentences survive abbreviations and hard wraps', async () => {
  const doc = await parseFile('guide.md', fixture('guide.md'));
  const texts = ofKind(doc.items, 'sentence').map((s) => s.text);
  assert.ok(texts.includes('It was built in 1998 and rebuilt in 2015, e.g. after the storm.'));
  assert.ok(texts.includes('Dr. Hale leads the team.'));
  assert.ok(texts.includes('Readings are sent to the **central archive** over a radio link.'));
  assert.ok(texts.includes('A second line of the same paragraph ends here.'));
});

test('markdown: pipe table → row leaves with header and cells; list, image, code', async () => {
  const doc = await parseFile('guide.md', fixture('guide.md'), { branchingFactor: 4 });
  const rows = ofKind(doc.items, 'row');
  assert.deepEqual(
    rows.map((r) => r.cells),
    [
      ['Rain gauge', '10 min', 'Hale'],
      ['Thermometer', '10 min', 'Ortiz'],
      ['Wind vane', '1 min', 'Hale'],
    ],
  );
  assert.ok(rows.every((r) => r.header === 'Sensor | Interval | Owner'));
  assert.deepEqual(
    rows.map((r) => r.anchor.row),
    [0, 1, 2],
  );
  const table = ofKind(doc.items, 'table')[0]!;
  assert.ok(fixtureText('guide.md').slice(table.anchor.charStart, table.anchor.charEnd).startsWith('| Sensor | Interval | Owner |'), 'table range includes its header line');

  const items = ofKind(doc.items, 'listItem').map((l) => l.text);
  assert.deepEqual(items, ['Rain gauge: a tipping bucket.', 'Thermometer: shielded from the sun. It needs cleaning twice a year.', 'Wind vane.']);

  const [image] = ofKind(doc.items, 'image');
  assert.equal(image!.text, 'Map of the ridge station');
  assert.equal(image!.ref, 'images/ridge-map.png');
  assert.equal(image!.modality, 'image');

  const code = ofKind(doc.items, 'code').filter((c) => c.children.length === 0).map((c) => c.text);
  assert.deepEqual(code, ['def clean(sensor):\n    sensor.wipe()', 'def calibrate(sensor):\n    sensor.zero()']);
});

test('markdown: CRLF and a UTF-8 BOM keep offsets exact', async () => {
  const lf = fixtureText('guide.md');
  const crlf = lf.replace(/\n/g, '\r\n');
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(crlf, 'utf8')]);
  const doc = await parseFile('guide.md', bytes);
  // Offsets index the decoded text without the BOM (as an editor shows it); CRLF stays two characters.
  assert.ok(assertExactLeaves(doc.items, crlf, exactKinds) >= 20);
  const plain = await parseFile('guide.md', fixture('guide.md'));
  const strip = (s: string): string => s.replace(/\r/g, '');
  assert.deepEqual(
    leaves(doc.items).map((l) => [l.kind, strip(l.text), l.anchor.startLine, l.anchor.startColumn]),
    leaves(plain.items).map((l) => [l.kind, l.text, l.anchor.startLine, l.anchor.startColumn]),
  );
});

test('markdown: an image-only paragraph is an image; inline images stay in the sentence', async () => {
  const src = 'Text with ![inline](a.png) image.\n\n[![Linked chart](chart.svg)](https://example.invalid)\n';
  const doc = await parseFile('x.md', Buffer.from(src));
  const images = ofKind(doc.items, 'image');
  assert.deepEqual(
    images.map((i) => [i.text, i.ref]),
    [['Linked chart', 'chart.svg']],
  );
  assert.equal(ofKind(doc.items, 'sentence')[0]!.text, 'Text with ![inline](a.png) image.');
});

test('markdown: a long file is parsed in pieces cut only where CommonMark starts a new block', async () => {
  const filler = (i: number): string => `Paragraph ${i} has a few plain sentences in it. It keeps the file growing steadily.`;
  const parts: string[] = [];
  for (let i = 0; i < 1400; i++) {
    if (i % 50 === 0) parts.push(`## Part ${i / 50}`);
    parts.push(filler(i));
    if (i === 900) parts.push('```text\nline one\n\n# not a heading inside code\n\nline two\n```');
    if (i === 1200) parts.push('<!-- a comment\n\n# not a heading inside a comment\n\n-->');
  }
  const source = parts.join('\n\n') + '\n';
  const chunks = markdownChunks(source);
  assert.ok(chunks.length > 3);
  assert.equal(chunks[0]![0], 0);
  assert.equal(chunks[chunks.length - 1]![1], source.length);
  chunks.slice(1).forEach(([start], i) => assert.equal(start, chunks[i]![1], 'contiguous'));
  const doc = await parseFile('long.md', Buffer.from(source), { itemMaxWords: 1_000_000 });
  assert.ok(assertExactLeaves(doc.items, source, exactKinds) > 2800);
  assert.deepEqual(
    ofKind(doc.items, 'heading').map((h) => h.text),
    Array.from({ length: 28 }, (_, i) => `Part ${i}`),
  );
  assert.equal(ofKind(doc.items, 'code').find((c) => c.text.includes('not a heading'))?.text, 'line one\n\n# not a heading inside code\n\nline two');
});

test('markdown: no piece boundary falls inside fenced code or an HTML comment', () => {
  let prefix = '';
  for (let i = 0; prefix.length < 32 * 1024 - 40; i++) prefix += `Filler paragraph ${i} of plain text.\n\n`;
  const fenced = '```\ncode\n\nNot a block start inside the fence\n\nmore code\n```\n\n';
  const comment = '<!--\n\nInside a comment\n\n-->\n\n';
  const source = `${prefix}${fenced}After the fence.\n\n${prefix}${comment}After the comment.\n`;
  const starts = markdownChunks(source).map(([s]) => s);
  const fenceAt = source.indexOf(fenced);
  const commentAt = source.indexOf(comment);
  assert.ok(starts.length >= 3);
  assert.ok(starts.includes(source.indexOf('After the fence.')), 'the first cut comes right after the fence');
  assert.ok(starts.includes(source.indexOf('After the comment.')), 'and right after the comment');
  for (const s of starts) {
    assert.ok(!(s > fenceAt && s < fenceAt + fenced.length), 'not inside the fence');
    assert.ok(!(s > commentAt && s < commentAt + comment.length), 'not inside the comment');
  }
});
