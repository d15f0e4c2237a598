// buildEvidenceSubgraph end to end with the deterministic rule evaluator: page grounding, the
// rule's choices and stop, CANOPY projection inside opened nodes (real RegionNodes with their
// anchors for the reader), the XML for the reader, the trace, and budget exhaustion.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { DocumentView } from '../../../src/core/controller/documentView';
import { fusePageSignals, GROUNDING_WEIGHTS, groundPages, pageHead, pageSignals, searchElements } from '../../../src/core/controller/grounding';
import { RelevanceModel } from '../../../src/core/controller/relevance';
import { buildEvidenceSubgraph, retrievedEntryPages } from '../../../src/core/controller/subgraph';
import { CONTROLLER_TRACE_KIND, CONTROLLER_TRACE_VERSION } from '../../../src/core/controller/trace';
import { renderEvidenceXml } from '../../../src/core/controller/xml';
import type { TraceController } from '../../../src/contracts/trace';
import { MemoryTracer } from '../../../src/core/trace/tracer';
import type { RegionNode } from '../../../src/contracts/region';
import { buildFixtureDoc, elementId, FILE, hashDeps, pageId } from './fixtureDoc';
import { QUESTION } from './scripted';

const tokens = bpeTokenCounter();
const deps = () => ({ ...hashDeps(), tokens });

describe('buildEvidenceSubgraph (rule evaluator)', () => {
  it('opens the cash-flow table, keeps its capex row by CANOPY projection, and stops by the rule', async () => {
    const doc = await buildFixtureDoc();
    const tracer = new MemoryTracer(() => 0);
    const result = await buildEvidenceSubgraph(QUESTION, doc, { ...deps(), tracer }, { initialPages: 2 });
    const table = elementId(doc, 'Purchases of property');
    assert.deepEqual(result.openedNodeIds, [table]);
    assert.equal(result.regions.length, 1);
    const region = result.regions[0]!;
    // The kept region is the original row node (same object as in the parsed document), with its anchor.
    const row = doc.items[0]!.root.children[2]!.children[2]!.children[0]!;
    assert.equal(region.node, row);
    assert.deepEqual(region.anchor, { file: FILE, page: 2, bbox: [72, 668, 540, 682], row: 0 });
    assert.equal(region.graphNodeId, table);
    assert.equal(region.itemId, `${FILE}#0`);
    assert.equal(region.itemTitle, 'Annual Report 2023');
    assert.equal(result.tokens, tokens.count(`${row.header}\n${row.text}`));

    const trace = result.trace;
    assert.equal(trace.kind, CONTROLLER_TRACE_KIND);
    assert.equal(trace.version, CONTROLLER_TRACE_VERSION);
    // No head holds a question term; page 3 (index 2), whose table row holds them, first, then
    // page 4, whose table row holds "capital expenditure".
    assert.deepEqual(trace.grounding.entryPages, [2, 3]);
    assert.equal(trace.stop.reason, 'evaluator-stop');
    assert.match(trace.stop.note, /no candidate clears its threshold/);
    assert.deepEqual(trace.steps.at(-1)!.action.type, 'STOP');
    assert.equal(trace.steps.at(-1)!.decidedBy, 'rule');
    const tableRegion = doc.items[0]!.root.children[2]!.children[2]!;
    assert.deepEqual(trace.opened, [
      { nodeId: table, type: 'table', page: 2, tokens: tokens.count(`${tableRegion.header}\n${tableRegion.text}`), keptRegionIds: [row.id], keptTokens: result.tokens, projected: true },
    ]);
    assert.ok(trace.opened[0]!.tokens > trace.opened[0]!.keptTokens, 'projection kept less than the whole table');
    // Every rule step carries its utility, the rule's own estimate and a reason.
    for (const s of trace.steps.filter((st) => st.decidedBy === 'rule' && st.action.type !== 'STOP')) {
      assert.equal(typeof s.utility, 'number');
      assert.ok(s.why && s.why.length > 0);
    }
    assert.equal(trace.totals.opened, 1);
    assert.equal(trace.totals.evidenceTokens, result.tokens);
    assert.equal(trace.totals.xmlTokens, tokens.count(result.xml));
    assert.equal(trace.totals.actions, trace.steps.length);
    assert.ok(trace.subgraph.nodes.some((n) => n.id === table && n.state === 'opened' && n.regionId === table));
    assert.ok(trace.subgraph.edges.some((e) => e.from === pageId(2) && e.to === table && e.type === 'contains'));
    assert.deepEqual(JSON.parse(JSON.stringify(trace)), trace, 'the trace is plain JSON');
    // The ask trace's optional `controller` field (the inspector's shape) takes this trace as is.
    const inspected: TraceController = trace;
    assert.equal(inspected.subgraph.nodes.length, trace.subgraph.nodes.length);
    assert.ok(tracer.events.some((e) => e.type === 'controller/step') && tracer.events.at(-1)!.type === 'controller/done');

    // The reader's XML: page, node type, summary, bbox and the kept row.
    assert.equal(
      result.xml,
      [
        '<evidence_subgraph document="Annual Report 2023" file="report.pdf">',
        '  <page number="3" summary="Consolidated Statement of Cash Flows">',
        '    <node type="table" bbox="72 654 540 696" summary="Table: Item | 2023 | 2022">',
        '      <row n="1">Purchases of property, plant and equipment (capital expenditure) | 1577 | 1373</row>',
        '    </node>',
        '  </page>',
        '</evidence_subgraph>',
      ].join('\n'),
    );
  });

  it('is deterministic: the same input gives the same trace', async () => {
    const doc = await buildFixtureDoc();
    const strip = (t: unknown) => JSON.parse(JSON.stringify(t, (k, v: unknown) => (k === 'ms' ? 0 : v))) as unknown;
    const a = await buildEvidenceSubgraph(QUESTION, doc, deps());
    const b = await buildEvidenceSubgraph(QUESTION, doc, deps());
    assert.deepEqual(strip(a.trace), strip(b.trace));
    assert.equal(a.xml, b.xml);
  });

  it('keeps opened tables whole without projection, or for aggregate questions', async () => {
    const doc = await buildFixtureDoc();
    const table = elementId(doc, 'Purchases of property');
    const whole = await buildEvidenceSubgraph(QUESTION, doc, deps(), { initialPages: 2, project: false });
    assert.deepEqual(
      whole.regions.map((r) => r.node.id),
      [table],
    );
    assert.match(whole.xml, /summary="Table: Item \| 2023 \| 2022">\n {6}<text n="1">Purchases of property.*\nProceeds from sale of businesses \| 846 \| 1065<\/text>/);
    assert.equal(whole.trace.opened[0]!.projected, false);
    const aggregate = await buildEvidenceSubgraph(QUESTION, doc, deps(), { initialPages: 2, keepTablesWhole: true });
    assert.deepEqual(
      aggregate.regions.map((r) => r.node.id),
      [table],
    );
  });

  it('stops on budget exhaustion: opened nodes, iterations', async () => {
    const doc = await buildFixtureDoc();
    const opened = await buildEvidenceSubgraph(QUESTION, doc, deps(), { maxOpenedNodes: 1 });
    assert.equal(opened.trace.stop.reason, 'opened-budget');
    assert.equal(opened.openedNodeIds.length, 1);
    const iterations = await buildEvidenceSubgraph(QUESTION, doc, deps(), { maxIterations: 1 });
    assert.equal(iterations.trace.stop.reason, 'iteration-budget');
    assert.equal(iterations.trace.totals.iterations, 1);
    assert.deepEqual(iterations.openedNodeIds, [], 'one iteration only activates: nothing is open yet');
    const none = await buildEvidenceSubgraph(QUESTION, doc, deps(), { maxOpenedNodes: 0 });
    assert.equal(none.trace.stop.reason, 'opened-budget');
    assert.equal(none.trace.stop.iteration, 1);
  });
});

describe('grounding and search inside the document', () => {
  it('ranks pages by their head and best element; pages without text come last and are never entry pages', async () => {
    const doc = await buildFixtureDoc([
      [{ kind: 'paragraph', sentences: ['Revenue grew to 120 million.'] }],
      [],
      [{ kind: 'table', header: 'Item | 2023', rows: ['Purchases of property, plant and equipment | 1577'] }],
    ]);
    const view = await DocumentView.of(doc);
    const relevance = await RelevanceModel.create(QUESTION, view, hashDeps());
    const ranking = groundPages(view, relevance);
    assert.deepEqual(
      ranking.map((g) => g.page),
      [2, 0, 1],
    );
    assert.equal(ranking[2]!.fused, 0);
    assert.equal(ranking[2]!.dense, undefined);
    // The table is no head (a table ends the head), but its row matches: the best element's BM25.
    assert.ok(ranking[0]!.element! > 0 && ranking[0]!.elementRank === 0 && ranking[0]!.head === undefined);
    // Page 0 matches no question term and has the lowest cosine: fused 0, so it is no entry page.
    assert.ok(ranking[0]!.fused > 0 && ranking[1]!.fused === 0);
    const result = await buildEvidenceSubgraph(QUESTION, doc, deps(), { maxIterations: 1 });
    assert.deepEqual(result.trace.grounding.entryPages, [2]);
    assert.equal(result.trace.grounding.method, 'head+element-bm25');
    assert.deepEqual(result.trace.grounding.weights, GROUNDING_WEIGHTS);
  });

  it("ranks the page whose head names what the question asks for above pages that only mention its words", async () => {
    const question = 'What were the cash flows from investing activities in the cash flow statement?';
    const doc = await buildFixtureDoc([
      [
        { kind: 'heading', text: 'Liquidity', level: 2 },
        { kind: 'paragraph', sentences: ['Our cash flows from operating activities and investing activities are discussed in the statement below, and cash flow risks in the notes.'] },
      ],
      [
        { kind: 'paragraph', sentences: ['Consolidated Statement of Cash Flows'] },
        { kind: 'paragraph', sentences: ['Years ended December 31'] },
        { kind: 'table', header: 'Item | 2023', rows: ['Net cash used in investing activities | (222)', 'Purchases of property | 1577'] },
      ],
      [{ kind: 'paragraph', sentences: ['Employees and offices.'] }],
    ]);
    const view = await DocumentView.of(doc);
    assert.equal(pageHead(view, pageId(1)), 'Consolidated Statement of Cash Flows\nYears ended December 31');
    // A long first paragraph is body text: only the heading above it is the head.
    assert.equal(pageHead(view, pageId(0)), 'Liquidity');
    const relevance = await RelevanceModel.create(question, view, hashDeps());
    const ranking = groundPages(view, relevance);
    assert.equal(ranking[0]!.page, 1);
    assert.equal(ranking[0]!.headRank, 0);
    // Page 0 matches more question words in its body, so its best element ranks first there.
    assert.equal(ranking.find((g) => g.page === 0)!.elementRank, 0);
    // Without the head the body-text page would win: the head is what moves the statement up.
    const s = pageSignals(view, relevance);
    assert.equal(view.node(fusePageSignals(view, { ...s, head: [] })[0]!.id)!.page, 0);
  });

  it("adds the best-grounded page of each retrieved span as an entry page after grounding's own", async () => {
    const doc = await buildFixtureDoc();
    const view = await DocumentView.of(doc);
    const relevance = await RelevanceModel.create(QUESTION, view, hashDeps());
    const grounding = groundPages(view, relevance);
    const rankOf = (page: number) => grounding.find((g) => g.page === page)!.rank;
    // Span 1 covers pages 4–5: the better-grounded of the two; span 2 is grounding's own entry page (no duplicate).
    const better = rankOf(4) < rankOf(5) ? 4 : 5;
    assert.deepEqual(retrievedEntryPages(grounding, [{ page: 4, pageEnd: 5 }, { page: 2, pageEnd: 2 }], 1, 5), [{ page: better, span: 0 }]);
    assert.deepEqual(retrievedEntryPages(grounding, [{ page: 0, pageEnd: 5 }], 1, 0), [], 'at most max');

    const result = await buildEvidenceSubgraph(QUESTION, doc, { ...deps(), retrievedSpans: [{ page: 4, pageEnd: 5 }] }, { initialPages: 1, maxIterations: 1 });
    assert.deepEqual(result.trace.grounding.entryPages, [2, better]);
    const step = result.trace.steps.find((st) => st.iteration === 0 && st.action.type === 'ACTIVATE_PAGE' && (st.action as { page: number }).page === better)!;
    assert.match(step.why!, /^best-grounded page of retrieved span 1 \(grounding rank \d+\)$/);
  });

  it('searches eligible elements only', async () => {
    const doc = await buildFixtureDoc();
    const view = await DocumentView.of(doc);
    const relevance = await RelevanceModel.create(QUESTION, view, hashDeps());
    const table = elementId(doc, 'Purchases of property');
    const all = await searchElements('purchases of property plant equipment', view, relevance, hashDeps(), { k: 3, rrfK: 60, eligible: () => true });
    assert.equal(all[0]!.nodeId, table);
    const rest = await searchElements('purchases of property plant equipment', view, relevance, hashDeps(), { k: 3, rrfK: 60, eligible: (id) => id !== table });
    assert.ok(rest.length === 3 && rest.every((h) => h.nodeId !== table));
  });

  it('builds the graph itself when the document was parsed without one', async () => {
    const doc = await buildFixtureDoc();
    const { graph: _graph, ...rest } = doc;
    const view = await DocumentView.of(rest);
    assert.equal(view.pages.length, 6);
    assert.equal(view.elements.length, doc.graph!.nodes.filter((n) => n.type !== 'page' && n.type !== 'section').length);
  });
});

describe('reader XML', () => {
  it('escapes document text and attributes, drops characters XML cannot carry, and leaves out summaries the text repeats', async () => {
    const doc = await buildFixtureDoc([[{ kind: 'heading', text: 'Results & "Outlook" <2023>' }, { kind: 'paragraph', sentences: ['Profit rose <b>sharply</b> & fast\u0001.', 'Costs fell.'] }]]);
    const view = await DocumentView.of(doc);
    const heading = view.elements[0]!;
    const para = view.elements[1]!;
    const [first, second] = view.region(para.regionId!)!.children;
    const xml = (kept: RegionNode[]) =>
      renderEvidenceXml(view, [
        { nodeId: para.id, kept },
        { nodeId: heading.id, kept: [view.region(heading.regionId!)!] },
      ]);
    assert.equal(
      xml([second!]),
      [
        '<evidence_subgraph document="Annual Report 2023" file="report.pdf">',
        '  <page number="1" summary="Results &amp; &quot;Outlook&quot; &lt;2023&gt;">',
        '    <node type="heading" bbox="72 726 540 740">',
        '      <text n="1">Results &amp; &quot;Outlook&quot; &lt;2023&gt;</text>',
        '    </node>',
        '    <node type="paragraph" bbox="72 690 540 718" summary="Profit rose &lt;b&gt;sharply&lt;/b&gt; &amp; fast.">',
        '      <text n="2">Costs fell.</text>',
        '    </node>',
        '  </page>',
        '</evidence_subgraph>',
      ].join('\n'),
    );
    // Each kept region has its own citation number; a summary the first kept text repeats is left out.
    assert.match(xml([first!, second!]), /<node type="paragraph" bbox="72 690 540 718">\n {6}<text n="2">Profit rose &lt;b&gt;sharply&lt;\/b&gt; &amp; fast\.<\/text>\n {6}<text n="3">Costs fell\.<\/text>/);
    assert.ok(!/<img|image=|crop=/.test(xml([first!])), 'no image references: Canopy has no multimodal reader');
  });
});
