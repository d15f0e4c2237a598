import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { CanopyError, ErrorCodes } from '../../../src/core/errors';
import { parseFile } from '../../../src/core/ingest/parseFile';
import type { ParsedDocument } from '../../../src/core/ingest/parsedDocument';
import type { RegionNode } from '../../../src/contracts/region';
import { allNodes, assertInnerTexts, assertTreeShape, fixture, leaves, ofKind } from './helpers';
import { TextRun, writePdf } from './pdfWriter';

type Box = [number, number, number, number];
interface Glyph {
  c: string;
  x: number;
  y: number;
}

/**
 * Every visible glyph of each page with its centre, read with pdfjs directly (independently of
 * the parser). Characters share their text item's width evenly — the same approximation the
 * parser documents, since pdfjs exposes no per-glyph advances.
 */
async function glyphsByPage(bytes: Uint8Array): Promise<Glyph[][]> {
  const doc = await getDocument({ data: new Uint8Array(bytes), disableFontFace: true, isEvalSupported: false, verbosity: 0 }).promise;
  const out: Glyph[][] = [];
  for (let p = 1; p <= doc.numPages; p++) {
    const page = await doc.getPage(p);
    const content = await page.getTextContent();
    const glyphs: Glyph[] = [];
    for (const item of content.items) {
      if (!('str' in item)) continue;
      const [, , , d = 1, e = 0, f = 0] = item.transform as number[];
      const n = item.str.length;
      for (let k = 0; k < n; k++) {
        const c = item.str[k]!;
        if (/\s/.test(c)) continue;
        glyphs.push({ c, x: e + ((k + 0.5) * item.width) / n, y: f + 0.3 * Math.abs(d) });
      }
    }
    out.push(glyphs);
  }
  await doc.destroy();
  return out;
}

/** The glyphs whose centres lie in the box, top line first, left to right. */
function textUnder(glyphs: Glyph[], box: Box): string {
  return glyphs
    .filter((g) => g.x >= box[0] - 0.01 && g.x <= box[2] + 0.01 && g.y >= box[1] - 0.01 && g.y <= box[3] + 0.01)
    .sort((a, b) => Math.round(b.y - a.y) || a.x - b.x)
    .map((g) => g.c)
    .join('');
}

const squash = (s: string): string => s.replace(/\s+/g, '');

/** PDF invariants: every node has a page and a box inside its page; block and leaf text = glyphs under the box(es). */
async function assertPdfAnchors(doc: ParsedDocument, bytes: Uint8Array): Promise<number> {
  const glyphs = await glyphsByPage(bytes);
  const pageBox = new Map(doc.pages!.map((p) => [p.index, p.box]));
  let checked = 0;
  for (const n of allNodes(doc.items)) {
    assert.ok(n.anchor.page !== undefined && n.anchor.bbox !== undefined, `${n.id} (${n.kind}) has a page and a bbox`);
    const pb = pageBox.get(n.anchor.page!)!;
    const b = n.anchor.bbox!;
    assert.ok(b[0] >= pb[0] && b[1] >= pb[1] && b[2] <= pb[2] && b[3] <= pb[3] && b[0] <= b[2] && b[1] <= b[3], `${n.id} bbox ${b.join(',')} inside page ${pb.join(',')}`);
    if (['sentence', 'row', 'heading', 'paragraph', 'listItem', 'table'].includes(n.kind)) {
      const rects = n.anchor.rects && n.kind === 'sentence' ? n.anchor.rects : [b];
      const under = rects.map((r) => textUnder(glyphs[n.anchor.page!]!, r)).join('');
      assert.equal(under, squash(n.text), `${n.id} (${n.kind}) text equals the glyphs under its box`);
      checked++;
    }
  }
  return checked;
}

// A two-column page with a bold title, bold run-in headings and a full-width table below.
const left = [
  'The ridge station completed its tenth',
  'year of continuous records. Rainfall was',
  'below average for the third year in a',
  'row. The team replaced two sensors.',
];
const left2 = ['Monthly totals ranged from nine to', 'thirty millimetres. The wettest month', 'was March, when a storm crossed the', 'valley.'];
const right = ['Wind speeds stayed close to the long', 'term mean for most of the year. Gusts', 'above forty knots were rare and short.'];
const right2 = ['The vane was recalibrated in June after', 'a bearing failed. Data from May were', 'flagged as uncertain.'];

function column(x: number, top: number, blocks: Array<{ heading?: string; lines: string[] }>): TextRun[] {
  const runs: TextRun[] = [];
  let y = top;
  for (const b of blocks) {
    if (b.heading) {
      runs.push({ x, y, size: 10, text: b.heading, bold: true });
      y -= 14;
    }
    for (const line of b.lines) {
      runs.push({ x, y, size: 10, text: line });
      y -= 12;
    }
    y -= 12;
  }
  return runs;
}

function twoColumnPdf(): Uint8Array {
  const page1: TextRun[] = [
    { x: 72, y: 740, size: 16, text: 'Ridge Station Annual Review', bold: true },
    ...column(72, 700, [{ lines: left }, { heading: 'Rainfall', lines: left2 }]),
    ...column(320, 700, [{ lines: right }, { heading: 'Wind', lines: right2 }]),
  ];
  const table: Array<[string, string, string]> = [
    ['Month', 'Rain (mm)', 'Gust (kn)'],
    ['January', '12', '35'],
    ['February', '9', '41'],
    ['March', '30', '38'],
  ];
  table.forEach(([a, b, c], i) => {
    const y = 420 - i * 14;
    page1.push({ x: 72, y, size: 10, text: a }, { x: 300, y, size: 10, text: b }, { x: 420, y, size: 10, text: c });
  });
  const page2: TextRun[] = [
    { x: 72, y: 740, size: 10, text: 'Maintenance', bold: true },
    { x: 72, y: 726, size: 10, text: 'Two visits were made this year.' },
    { x: 72, y: 700, size: 10, text: '\x95' },
    { x: 86, y: 700, size: 10, text: 'The gauge was cleaned in April.' },
    { x: 72, y: 686, size: 10, text: '\x95' },
    { x: 86, y: 686, size: 10, text: 'The panel was replaced in October.' },
  ];
  return writePdf([page1, page2]);
}

function texts(nodes: RegionNode[]): string[] {
  return nodes.map((n) => n.text);
}

test('pdf (LibreOffice report): pages, headings, paragraphs, table rows, list; every box exact', async () => {
  const bytes = fixture('report.pdf');
  const doc = await parseFile('reports/report.pdf', bytes);
  assert.equal(doc.format, 'pdf');
  assert.equal(doc.pages!.length, 2);
  assert.equal(doc.title, 'Quarterly Field Report');
  assert.ok((await assertPdfAnchors(doc, bytes)) >= 25);
  assertTreeShape(doc.items, 2);
  assertInnerTexts(doc.items);

  assert.deepEqual(
    ofKind(doc.items, 'heading').map((h) => [h.anchor.page, h.level, h.text]),
    [
      [0, 1, 'Quarterly Field Report'],
      [0, 2, 'Measurements'],
      [1, 2, 'Maintenance'],
      [1, 2, 'Outlook'],
    ],
  );
  const rows = ofKind(doc.items, 'row');
  assert.deepEqual(
    rows.map((r) => r.cells),
    [
      ['Month', 'Rainfall (mm)', 'Mean temperature (C)'],
      ['January', '12', '3.5'],
      ['February', '9', '4.1'],
      ['March', '20', '7.8'],
    ],
  );
  assert.deepEqual(
    rows.map((r) => [r.anchor.row, r.header]),
    [
      [undefined, undefined],
      [0, 'Month | Rainfall (mm) | Mean temperature (C)'],
      [1, 'Month | Rainfall (mm) | Mean temperature (C)'],
      [2, 'Month | Rainfall (mm) | Mean temperature (C)'],
    ],
  );
  assert.deepEqual(texts(ofKind(doc.items, 'listItem')), ['• Rain gauge replaced on 4 March.', '• Solar panel repaired on 18 March.']);
  const sentences = texts(ofKind(doc.items, 'sentence'));
  assert.ok(sentences.includes('Rainfall fell to 41 millimetres, well below the ten-year average of 67 millimetres.'), 'a sentence across a line break');
  const maintenance = ofKind(doc.items, 'sentence').find((s) => s.text.startsWith('The second crew'))!;
  assert.equal(maintenance.anchor.page, 1);
  assert.equal(maintenance.context, 'Quarterly Field Report › Maintenance');
  assert.equal(maintenance.anchor.rects?.length, 2, 'a sentence over two lines has a box per line');
  // The page node is the page box and holds the page's text.
  const pages = ofKind(doc.items, 'page');
  assert.deepEqual(
    pages.map((p) => p.anchor.bbox),
    doc.pages!.map((p) => p.box),
  );
  assert.ok(pages[1]!.text.includes('Funding for the next quarter is confirmed.'));
});

test('pdf (two columns): reading order follows the columns; bold headings; a full-width table below', async () => {
  const bytes = twoColumnPdf();
  const doc = await parseFile('two-column.pdf', bytes);
  assert.ok((await assertPdfAnchors(doc, bytes)) >= 20);
  assert.deepEqual(
    ofKind(doc.items, 'heading').map((h) => [h.anchor.page, h.level, h.text]),
    [
      [0, 1, 'Ridge Station Annual Review'],
      [0, 2, 'Rainfall'],
      [0, 2, 'Wind'],
      [1, 2, 'Maintenance'],
    ],
  );
  const order = texts(ofKind(doc.items, 'sentence')).filter((t) => doc.items[0] && t.length > 0);
  const at = (prefix: string): number => order.findIndex((t) => t.startsWith(prefix));
  assert.ok(at('The ridge station') < at('Rainfall was below'));
  assert.ok(at('Rainfall was below') < at('Monthly totals'), 'left column continues down');
  assert.ok(at('Monthly totals') < at('Wind speeds'), 'then the right column');
  assert.ok(at('Wind speeds') < at('The vane was'));
  assert.ok(order.includes('Rainfall was below average for the third year in a row.'));
  assert.ok(order.includes('The wettest month was March, when a storm crossed the valley.'));
  const rows = ofKind(doc.items, 'row');
  assert.deepEqual(
    rows.map((r) => r.cells),
    [
      ['Month', 'Rain (mm)', 'Gust (kn)'],
      ['January', '12', '35'],
      ['February', '9', '41'],
      ['March', '30', '38'],
    ],
  );
  // Bullets set apart by a tab stay with their text as list items.
  assert.deepEqual(texts(ofKind(doc.items, 'listItem')), ['• The gauge was cleaned in April.', '• The panel was replaced in October.']);
  assert.equal(ofKind(doc.items, 'list').length, 1);
  // The right column's paragraph box stays in the right column.
  const wind = ofKind(doc.items, 'paragraph').find((p) => p.text.startsWith('Wind speeds'))!;
  assert.ok(wind.anchor.bbox![0] >= 319);
});

test('pdf: B-ary grouping and page-group items keep every page whole', async () => {
  const bytes = fixture('report.pdf');
  for (const b of [2, 3, 4]) {
    const doc = await parseFile('report.pdf', bytes, { branchingFactor: b, itemMaxWords: 60 });
    assert.equal(doc.items.length, 2, 'two page groups');
    assertTreeShape(doc.items, b);
    assert.deepEqual(
      doc.items.map((i) => [i.root.kind, i.root.anchor.page, i.title]),
      [
        ['page', 0, 'Quarterly Field Report (p. 1)'],
        ['page', 1, 'Quarterly Field Report (p. 2)'],
      ],
    );
  }
  const one = await parseFile('report.pdf', bytes);
  assert.equal(one.items.length, 1);
  assert.equal(one.items[0]!.root.kind, 'document');
  assert.deepEqual([one.items[0]!.root.anchor.page, one.items[0]!.root.anchor.pageEnd], [0, 1]);
});

test('pdf: encrypted and corrupt files are CanopyErrors naming the file', async () => {
  await assert.rejects(parseFile('secret/encrypted.pdf', fixture('encrypted.pdf')), (e: unknown) => {
    assert.ok(e instanceof CanopyError);
    assert.equal(e.code, ErrorCodes.encrypted);
    assert.match(e.message, /^secret\/encrypted\.pdf: the PDF is password-protected/);
    return true;
  });
  const good = fixture('report.pdf');
  for (const bytes of [good.slice(0, 600), new Uint8Array(Buffer.from('%PDF-1.7\nthis is not really a pdf\n%%EOF')), new Uint8Array(Buffer.from('hello'))]) {
    await assert.rejects(parseFile('broken.pdf', bytes), (e: unknown) => {
      assert.ok(e instanceof CanopyError, String(e));
      assert.equal(e.code, ErrorCodes.parseFailed);
      assert.match(e.message, /^broken\.pdf: /);
      return true;
    });
  }
});

test('pdf: a page without text and a spent time budget produce warnings, not errors', async () => {
  const empty = writePdf([[], [{ x: 72, y: 700, size: 12, text: 'Only the second page has text.' }]]);
  const doc = await parseFile('scan.pdf', empty);
  assert.deepEqual(
    doc.pages!.map((p) => p.textRuns),
    [0, 1],
  );
  assert.deepEqual(texts(leaves(doc.items)), ['Only the second page has text.']);
  assert.equal(doc.graph!.nodes.filter((n) => n.type === 'page').length, 2, 'the empty page is still a graph page');

  const imageOnly = await parseFile('scan.pdf', writePdf([[]]));
  assert.equal(imageOnly.items.length, 0);
  assert.deepEqual(
    imageOnly.warnings.map((w) => w.code),
    ['noTextLayer'],
  );

  const late = await parseFile('slow.pdf', fixture('report.pdf'), { timeLimitMs: 0 });
  assert.ok(late.warnings.some((w) => w.code === 'timeLimit' && w.message.startsWith('slow.pdf: stopped after 0 of 2 pages')));
});
