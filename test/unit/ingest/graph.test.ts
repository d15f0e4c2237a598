import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DocumentGraph, GraphNode } from '../../../src/contracts/graph';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { nodeVectorsOf } from '../../../src/core/encode/nodeVectors';
import { pairwiseCosine } from '../../../src/core/ingest/graph';
import { seededRandom } from '../../../src/core/random';
import { fakeEmbed, fixture } from './helpers';

function edges(g: DocumentGraph, type: string): Array<[string, string]> {
  return g.edges.filter((e) => e.type === type).map((e) => [e.from, e.to]);
}
function node(g: DocumentGraph, pred: (n: GraphNode) => boolean): GraphNode {
  const n = g.nodes.find(pred);
  assert.ok(n, 'node exists');
  return n!;
}
const elementTypes = new Set(['heading', 'paragraph', 'table', 'figure', 'list', 'code']);

test('graph (PDF): pages contain their elements; reading order; sections; layout proximity', async () => {
  const doc = await parseFile('report.pdf', fixture('report.pdf'));
  const g = doc.graph!;
  const pages = g.nodes.filter((n) => n.type === 'page');
  assert.deepEqual(
    pages.map((p) => [p.id, p.page, p.virtual]),
    [
      ['report.pdf#p0', 0, undefined],
      ['report.pdf#p1', 1, undefined],
    ],
  );
  assert.ok(pages[1]!.text.includes('Funding for the next quarter is confirmed.'));
  assert.equal(pages[0]!.summary, 'Page 1: Quarterly Field Report');

  const elements = g.nodes.filter((n) => elementTypes.has(n.type));
  assert.deepEqual(
    [...new Set(elements.map((e) => e.type))].sort(),
    ['heading', 'list', 'paragraph', 'table'],
  );
  // Every element: one page contains it, it has a box, its id is its region id.
  const contains = edges(g, 'contains');
  for (const e of elements) {
    assert.deepEqual(
      contains.filter(([from, to]) => to === e.id && from.includes('#p')),
      [[`report.pdf#p${e.page}`, e.id]],
    );
    assert.ok(e.bbox && e.regionId === e.id && e.itemId === 'report.pdf#0');
  }
  // Reading order: one chain through all elements, in order, with prev mirroring next.
  const next = edges(g, 'next');
  assert.equal(next.length, elements.length - 1);
  next.forEach(([a, b], i) => assert.deepEqual([a, b], [elements[i]!.id, elements[i + 1]!.id]));
  assert.deepEqual(
    edges(g, 'prev'),
    next.map(([a, b]) => [b, a]),
  );
  // Sections: the title section holds three subsections; each section contains its heading and elements.
  const sections = g.nodes.filter((n) => n.type === 'section');
  assert.deepEqual(
    sections.map((s) => [s.level, s.summary]),
    [
      [1, 'Quarterly Field Report'],
      [2, 'Quarterly Field Report › Measurements'],
      [2, 'Quarterly Field Report › Maintenance'],
      [2, 'Quarterly Field Report › Outlook'],
    ],
  );
  assert.deepEqual(
    edges(g, 'subsection'),
    sections.slice(1).map((s) => [sections[0]!.id, s.id]),
  );
  const table = node(g, (n) => n.type === 'table');
  assert.ok(contains.some(([from, to]) => from === sections[1]!.id && to === table.id), 'Measurements contains the table');
  assert.match(table.summary, /^Table: Month \| Rainfall \(mm\) \| Mean temperature \(C\)/);
  const maintenance = sections[2]!;
  assert.deepEqual([maintenance.anchor.page, maintenance.anchor.pageEnd], [1, undefined]);
  // Layout proximity: the heading "Measurements" and the paragraph under it are near; nothing is near across pages.
  const measurements = node(g, (n) => n.type === 'heading' && n.text === 'Measurements');
  const below = elements[elements.indexOf(measurements) + 1]!;
  assert.ok(edges(g, 'near').some(([a, b]) => a === measurements.id && b === below.id));
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  for (const [a, b] of edges(g, 'near')) assert.equal(byId.get(a)!.page, byId.get(b)!.page);
  assert.equal(edges(g, 'semantic').length, 0, 'no encoder, no semantic edges');
});

test('graph: semantic neighbours are the top cosine neighbours by the elements’ region vectors', async () => {
  const doc = await parseFile('report.pdf', fixture('report.pdf'), { embed: fakeEmbed, semanticNeighbours: 2 });
  const g = doc.graph!;
  const elements = g.nodes.filter((n) => elementTypes.has(n.type));
  // The same vectors as everywhere else: leaves from the embed function, other regions derived.
  const regionVectors = await nodeVectorsOf(
    doc.items.map((it) => it.root),
    (texts) => fakeEmbed(texts),
  );
  const vectors = elements.map((e) => regionVectors.get(e.regionId!)!);
  const cos = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * b[i]!, 0);
  const semantic = g.edges.filter((e) => e.type === 'semantic');
  assert.ok(semantic.length > 0);
  // Each element's two best neighbours (above the 0.3 floor) are linked to it, both ways, with the cosine as weight.
  elements.forEach((e, i) => {
    const ranked = elements
      .map((o, j) => ({ o, s: cos(vectors[i]!, vectors[j]!) }))
      .filter((x) => x.o !== e && x.s >= 0.3)
      .sort((a, b) => b.s - a.s)
      .slice(0, 2);
    for (const { o, s } of ranked) {
      const edge = semantic.find((x) => x.from === e.id && x.to === o.id);
      assert.ok(edge, `${e.id} → ${o.id}`);
      assert.ok(Math.abs(edge!.weight! - s) < 1e-3);
      assert.ok(semantic.some((x) => x.from === o.id && x.to === e.id));
    }
  });
  // An encoder that fails costs the semantic edges, not the file.
  const failing = await parseFile('report.pdf', fixture('report.pdf'), {
    embed: async () => {
      throw new Error('model missing');
    },
  });
  assert.equal(failing.graph!.edges.filter((e) => e.type === 'semantic').length, 0);
  assert.match(failing.warnings.map((w) => w.message).join('\n'), /report\.pdf: semantic graph edges left out — the encoder failed \(model missing\)/);
});

test('graph (Markdown): one virtual page; section hierarchy from headings; summaries', async () => {
  const doc = await parseFile('guide.md', fixture('guide.md'));
  const g = doc.graph!;
  const pages = g.nodes.filter((n) => n.type === 'page');
  assert.equal(pages.length, 1);
  assert.equal(pages[0]!.virtual, true);
  const elements = g.nodes.filter((n) => elementTypes.has(n.type));
  assert.deepEqual(
    edges(g, 'contains').filter(([from]) => from === pages[0]!.id).map(([, to]) => to),
    elements.map((e) => e.id),
  );
  assert.deepEqual(
    [...new Set(elements.map((e) => e.type))].sort(),
    ['code', 'figure', 'heading', 'list', 'paragraph', 'table'],
  );
  assert.equal(edges(g, 'near').length, 0, 'no layout without pages');
  const sections = g.nodes.filter((n) => n.type === 'section');
  const bySummary = new Map(sections.map((s) => [s.summary, s.id]));
  assert.deepEqual(
    edges(g, 'subsection').map(([a, b]) => [sections.find((s) => s.id === a)!.summary, sections.find((s) => s.id === b)!.summary]),
    [
      ['Station Guide', 'Station Guide › Sensors'],
      ['Station Guide', 'Station Guide › Maintenance'],
      ['Station Guide › Maintenance', 'Station Guide › Maintenance › Schedule'],
    ],
  );
  const schedule = bySummary.get('Station Guide › Maintenance › Schedule')!;
  const scheduleSection = sections.find((s) => s.id === schedule)!;
  assert.deepEqual([scheduleSection.anchor.startLine, scheduleSection.anchor.endLine], [38, 42]);
  const para = node(g, (n) => n.type === 'paragraph' && n.text.startsWith('Visits happen'));
  assert.equal(para.summary, 'Visits happen in March and September.');
  assert.equal(node(g, (n) => n.type === 'figure').summary, 'Figure: Map of the ridge station');
  assert.equal(node(g, (n) => n.type === 'heading' && n.text === 'Schedule').summary, 'Station Guide › Maintenance › Schedule');
});

test('semantic neighbours: pairwiseCosine gives exactly the per-pair cosine, in and beyond the window, zero vectors included', () => {
  // The loop pairwiseCosine replaced: dot product and both norms summed per pair.
  const cosine = (a: Float32Array, b: Float32Array) => {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i++) {
      dot += a[i]! * b[i]!;
      na += a[i]! * a[i]!;
      nb += b[i]! * b[i]!;
    }
    return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
  };
  const rand = seededRandom(5);
  const vectors = Array.from({ length: 40 }, (_, i) => (i === 7 ? new Float32Array(64) : Float32Array.from({ length: 64 }, () => rand() * 2 - 1)));
  for (const window of [40, 10]) {
    const sim = pairwiseCosine(vectors, window);
    for (let i = 0; i < vectors.length; i++) {
      for (let j = 0; j < vectors.length; j++) {
        if (i !== j) assert.equal(sim(i, j), cosine(vectors[i]!, vectors[j]!), `window ${window}: ${i}, ${j}`);
      }
    }
  }
});
