// The ask pipeline's MAGE controller hook: a long PDF (generated, ten pages, parsed by the real
// parser) goes through buildEvidenceSubgraph; its kept regions are the reader's input and its
// trace lands on the file's best-ranked retrieved item. Short PDFs, a missing loadDocument and
// `enabled: false` leave the pipeline as it was; bad options fail before anything runs.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ask, type AskDeps, type AskOptions } from '../../../src/core/engine/ask';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import type { Critic, CriticInput, CriticVerdict } from '../../../src/core/critic/critic';
import { CanopyError } from '../../../src/core/errors';
import type { ParsedDocument } from '../../../src/core/ingest/parsedDocument';
import type { ChatMessage, ChatModel, ChatResult } from '../../../src/core/llm/llm';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { ExtractiveReader } from '../../../src/core/read/extractiveReader';
import { LlmReader } from '../../../src/core/read/llmReader';
import type { EvidenceRegion, ReaderInput } from '../../../src/core/read/reader';
import type { ControllerTrace } from '../../../src/core/controller/trace';
import type { AskTrace, TraceNode } from '../../../src/contracts/trace';
import { validateHostToWebview } from '../../../src/protocol/validate';
import { hashEmbed } from '../../helpers/hashEmbeddings';
import { ListRetriever } from '../../helpers/listRetriever';
import { longReportEvidencePage, longReportPageCount, longReportPdf, longReportQuestion } from '../../helpers/longReportPdf';

const FILE = 'reports/annual-2023.pdf';

const options: AskOptions = {
  topK: 2,
  maxRounds: 2,
  branchingFactor: 2,
  compressor: { name: 'canopy' },
  readerTokenCap: 16000,
  encoderId: 'hash-256',
  retrieval: { dense: false, bm25: true, topics: false, fusion: 'rrf', rrfK: 60 },
  controller: { minPages: 8 },
};

class ScriptedCritic implements Critic {
  readonly kind = 'rule' as const;
  readonly seen: CriticInput[] = [];
  constructor(private readonly verdict: CriticVerdict) {}
  async judge(input: CriticInput): Promise<CriticVerdict> {
    this.seen.push(input);
    return this.verdict;
  }
}

function walk(n: TraceNode, out: TraceNode[] = []): TraceNode[] {
  out.push(n);
  n.children.forEach((c) => walk(c, out));
  return out;
}

describe('ask pipeline with the MAGE controller', () => {
  let doc: ParsedDocument;
  const loads: string[] = [];

  before(async () => {
    // Small items, as a long PDF is cut into many page groups.
    doc = await parseFile(FILE, longReportPdf(), { itemMaxWords: 60, embed: async (texts) => texts.map((t) => hashEmbed(t)) });
    assert.equal(doc.pages?.length, longReportPageCount);
    assert.ok(doc.items.length >= 2, 'the report is cut into several page-group items');
  });

  function deps(extra: Partial<AskDeps> = {}): AskDeps {
    return {
      retriever: new ListRetriever(doc.items),
      embedQuery: async (t) => hashEmbed(t),
      embedTexts: async (texts) => texts.map((t) => hashEmbed(t)),
      reader: new ExtractiveReader(),
      tokens: bpeTokenCounter(),
      index: { root: '/corpus', generation: 1, items: doc.items.length },
      newId: () => 'trace-ctl',
      loadDocument: async (file) => {
        loads.push(file);
        assert.equal(file, FILE);
        return doc;
      },
      ...extra,
    };
  }

  const controlled = (t: AskTrace) => t.rounds.flatMap((r) => r.retrieved).filter((i) => i.controller);

  it('runs the controller over a long PDF item: its regions are the reader input and its trace is on the best-ranked item', async () => {
    loads.length = 0;
    const t = await ask(longReportQuestion, options, deps());
    assert.deepEqual(loads, [FILE], 'the document is loaded once');
    const carriers = controlled(t);
    assert.equal(carriers.length, 1, 'one controller run for the file');
    const carrier = carriers[0]!;
    const fresh = t.rounds[0]!.retrieved.filter((i) => !i.repeated && i.file === FILE);
    assert.equal(carrier.rank, Math.min(...fresh.map((i) => i.rank)), 'the best-ranked item of the file carries the trace');

    const run = carrier.controller!;
    assert.equal(run.kind, 'canopy.controller');
    assert.equal(run.file, FILE);
    assert.equal(run.evaluator.kind, 'rule');
    assert.deepEqual(run.budgets, { initialPages: 5, maxActivationsPerIteration: 4, maxIterations: 8, maxOpenedNodes: 12, maxSearches: 2 });
    const types = new Set(run.steps.map((s) => s.action.type));
    for (const type of ['ACTIVATE_PAGE', 'ACTIVATE_NODE', 'OPEN_NODE', 'STOP']) assert.ok(types.has(type), `the run has a ${type} step`);
    assert.ok(run.steps.every((s) => s.budgetLeft && typeof s.budgetLeft.openedNodes === 'number'));
    assert.ok(run.steps.some((s) => typeof s.utility === 'number'), 'utility estimates are recorded');
    assert.ok(run.subgraph.nodes.some((n) => n.state === 'opened'));
    assert.ok(run.subgraph.edges.some((e) => e.type === 'contains'));

    // The reader gets exactly the controller's kept regions (CANOPY projection inside the opened elements).
    const full = run as unknown as { opened: Array<{ keptRegionIds: string[]; projected: boolean }> };
    const keptByController = full.opened.flatMap((o) => o.keptRegionIds);
    assert.ok(full.opened.every((o) => o.projected), 'CANOPY projection ran inside the opened nodes');
    assert.deepEqual(new Set(t.readerInput.regions.map((r) => r.nodeId)), new Set(keptByController));
    const keptIds = new Set(fresh.flatMap((i) => i.keptNodeIds));
    assert.deepEqual(keptIds, new Set(keptByController), 'the file\'s items keep exactly the controller\'s regions');
    assert.ok(t.readerInput.text.includes('1,577'), 'the capital-expenditure evidence reached the reader');

    // The opened elements' regions lie on the evidence page, and the tree says who kept them.
    const evidencePages = new Set(run.subgraph.nodes.filter((n) => n.state === 'opened').map((n) => n.page));
    assert.ok(evidencePages.has(longReportEvidencePage), `opened pages ${[...evidencePages].join(',')}`);
    const treeNodes = fresh.flatMap((i) => walk(i.tree!));
    assert.ok(treeNodes.some((n) => n.decision === 'kept-by-controller' && n.rule === 'controller'));
    // Every region the controller left out says why: its page never activated, an element never
    // opened, or projected out inside an opened one; regions holding kept ones were descended into.
    const keptSet = new Set(keptByController);
    const insideKept = new Set(fresh.flatMap((i) => walk(i.tree!).filter((n) => keptSet.has(n.id)).flatMap((n) => walk(n).slice(1).map((d) => d.id))));
    // What lies inside a kept region went with it, and says so (no region is left without a reason).
    for (const n of treeNodes.filter((x) => insideKept.has(x.id) && !keptSet.has(x.id))) assert.deepEqual([n.decision, n.rule], ['not-visited', 'ancestor-kept-whole'], n.id);
    assert.deepEqual(treeNodes.filter((n) => n.rule === 'none').map((n) => n.id), []);
    const skipped = treeNodes.filter((n) => !keptSet.has(n.id) && !insideKept.has(n.id));
    assert.ok(skipped.length > 0);
    for (const n of skipped) {
      if (n.decision === 'descend') assert.equal(n.rule, 'controller', n.id);
      else {
        assert.ok(n.decision === 'dropped-by-controller' || n.decision === 'not-visited', `${n.id}: ${n.decision}`);
        assert.ok(/^controller-(page-not-activated|not-activated|not-opened|pruned|projected-out)$/.test(n.rule), `${n.id}: ${n.decision} ${n.rule}`);
      }
    }
    const reasons = new Set(skipped.map((n) => n.rule));
    assert.ok(reasons.has('controller-page-not-activated'), [...reasons].join(', '));
    assert.ok(reasons.has('controller-projected-out'), [...reasons].join(', '));
    // The topmost region left out is the dropped one (as with CANOPY's dropped siblings).
    for (const n of skipped.filter((x) => x.decision === 'dropped-by-controller')) assert.ok(walk(n).slice(1).every((d) => d.decision === 'not-visited'), n.id);
    // What lies inside a page the controller never activated is not visited, for the same reason.
    const unvisitedPage = skipped.find((n) => n.kind === 'page' && n.rule === 'controller-page-not-activated' && n.children.length > 0)!;
    assert.ok(unvisitedPage);
    assert.ok(walk(unvisitedPage).slice(1).every((d) => d.decision === 'not-visited' && d.rule === 'controller-page-not-activated'));

    assert.deepEqual(t.settings.controller, { minPages: 8, evaluator: 'rule', budgets: run.budgets });
    // The inspector accepts the trace as it is.
    const checked = validateHostToWebview({ kind: 'notify', method: 'inspector/showTrace', params: { trace: JSON.parse(JSON.stringify(t)) } });
    assert.ok(checked.ok, checked.ok ? '' : checked.error.message);
  });

  it('makes the pages retrieval found entry pages too, where page grounding ranks them lower', async () => {
    // Retrieval can only return items away from the evidence page; grounding's single entry page is the evidence page.
    const away = doc.items.filter((it) => (it.root.anchor.pageEnd ?? it.root.anchor.page!) < longReportEvidencePage || it.root.anchor.page! > longReportEvidencePage);
    const t = await ask(longReportQuestion, { ...options, maxRounds: 1, controller: { minPages: 8, initialPages: 1 } }, deps({ retriever: new ListRetriever(away) }));
    // The ask trace's schema reads a subset of the controller's trace; the whole one is stored.
    const run = controlled(t)[0]!.controller! as unknown as ControllerTrace;
    const fresh = t.rounds[0]!.retrieved.filter((i) => i.file === FILE);
    assert.ok(fresh.length > 0);
    assert.equal(run.grounding.entryPages[0], run.grounding.pages[0]!.page, "grounding's own entry page first");
    for (const i of fresh) {
      const a = doc.items.find((it) => it.id === i.itemId)!.root.anchor;
      assert.ok(
        run.grounding.entryPages.some((p) => p >= a.page! && p <= (a.pageEnd ?? a.page!)),
        `retrieved span ${a.page}–${a.pageEnd ?? a.page} has no entry page (${run.grounding.entryPages.join(', ')})`,
      );
    }
    assert.ok(run.steps.some((st) => st.iteration === 0 && /^best-grounded page of retrieved span \d+ /.test(st.why ?? '')));
  });

  it('runs the controller once per question even when later rounds retrieve more of the file', async () => {
    loads.length = 0;
    const critic = new ScriptedCritic({ sufficient: false, missing: ['commitments'], followUpQuery: 'capital expenditure commitments 2024 distribution centre', source: 'rule' });
    const t = await ask(longReportQuestion, { ...options, topK: 1 }, deps({ critic }));
    assert.equal(t.rounds.length, 2);
    assert.equal(controlled(t).length, 1);
    assert.equal(controlled(t)[0]!.controller!.file, FILE);
    // A node reaches the reader once.
    const ids = t.readerInput.regions.map((r) => r.nodeId);
    assert.equal(new Set(ids).size, ids.length);
  });

  it("reads the controller's regions without an item rank, round or retrieval score, in the reader's and the critic's input alike", async () => {
    // A region the controller kept lies on a page it chose by its own grounding; it rides on the item of its page or,
    // for a page retrieval did not return, on the file's best-ranked item — whose rank would say nothing of it.
    let given: readonly EvidenceRegion[] = [];
    class RecordingReader extends ExtractiveReader {
      override async answer(asked: string, input: ReaderInput) {
        given = input.regions;
        return super.answer(asked, input);
      }
    }
    const critic = new ScriptedCritic({ sufficient: true, missing: [], source: 'rule' });
    await ask(longReportQuestion, options, deps({ reader: new RecordingReader(), critic }));
    const controllerRegions = given.filter((r) => r.element !== undefined);
    assert.ok(controllerRegions.length > 0, 'the controller kept regions');
    for (const r of controllerRegions) for (const k of ['rank', 'round', 'retrieval'] as const) assert.equal(r[k], undefined, `${r.node.id} ${k}`);
    const viewed = critic.seen[0]!.evidence.flatMap((e) => e.regions ?? []);
    const controllerIds = new Set(controllerRegions.map((r) => r.node.id));
    assert.ok(viewed.some((r) => controllerIds.has(r.node.id)));
    for (const r of viewed.filter((v) => controllerIds.has(v.node.id))) assert.equal(r.rank, undefined, 'the critic reads them as the reader does');
  });

  it('leaves short PDFs, disabled controllers and pipelines without loadDocument unchanged', async () => {
    const plain = await ask(longReportQuestion, { ...options, controller: undefined }, deps());
    for (const variant of [
      await ask(longReportQuestion, { ...options, controller: { minPages: longReportPageCount + 1 } }, deps()),
      await ask(longReportQuestion, { ...options, controller: { minPages: 8, enabled: false } }, deps()),
      await ask(longReportQuestion, options, deps({ loadDocument: undefined })),
    ]) {
      assert.equal(controlled(variant).length, 0);
      assert.deepEqual(variant.readerInput.regions, plain.readerInput.regions);
    }
    assert.equal(plain.settings.controller, undefined);
  });

  it('uses the LLM evaluator when an LLM is configured', async () => {
    // An in-memory model that always takes the first candidate action, reading the XML state it is sent.
    const prompts: ChatMessage[][] = [];
    const llm: ChatModel = {
      id: 'memory:first-candidate',
      remote: false,
      async chat(messages): Promise<ChatResult> {
        prompts.push(messages);
        return { text: JSON.stringify({ actions: [{ index: 1, utility: 0.8 }], search: '', stop: false, reason: 'the first candidate' }), model: 'first-candidate', attempts: 1, ms: 1 };
      },
    };
    const t = await ask(longReportQuestion, { ...options, controller: { minPages: 8, maxIterations: 2 } }, deps({ controllerLlm: llm }));
    const run = controlled(t)[0]!.controller!;
    assert.equal(run.evaluator.kind, 'llm');
    assert.equal(t.settings.controller?.evaluator, 'llm');
    assert.equal(prompts.length, 2, 'one call per iteration');
    assert.match(prompts[0]!.at(-1)!.content, /<controller_state iteration="1"/);
    const decided = run.steps.filter((s) => s.iteration > 0 && s.action.type !== 'STOP');
    assert.ok(decided.length > 0 && decided.every((s) => s.decidedBy === 'llm' && s.utility === 0.8));
    assert.equal(run.stop.reason, 'iteration-budget');
  });

  it('gives the LLM reader the subgraph as XML, and a cited region number maps back to the kept region on its page', async () => {
    // An in-memory reader model that cites the XML region holding the capital-expenditure figure.
    const prompts: ChatMessage[][] = [];
    const model: ChatModel = {
      id: 'memory:cites-capex',
      remote: false,
      async chat(messages): Promise<ChatResult> {
        prompts.push(messages);
        const n = /<(?:row|text) n="(\d+)">[^<]*1,577/.exec(messages.at(-1)!.content)?.[1];
        return { text: n ? `Capital expenditure was 1,577 [${n}].` : 'Not in the evidence.', model: 'cites-capex', attempts: 1, ms: 1 };
      },
    };
    const t = await ask(longReportQuestion, options, deps({ reader: new LlmReader(model) }));
    assert.equal(prompts.length, 1);
    const user = prompts[0]!.at(-1)!.content;
    assert.ok(user.includes(t.readerInput.text), 'the model is sent the reader input verbatim');
    assert.match(t.readerInput.text, new RegExp(`<evidence_subgraph document="[^"]*" file="${FILE}">`));
    // Every region the controller kept is numbered once in the XML, in the reader input's order.
    const numbers = [...t.readerInput.text.matchAll(/<(?:row|text) n="(\d+)">/g)].map((m) => Number(m[1]));
    assert.deepEqual(numbers, t.readerInput.regions.map((_, i) => i + 1));
    assert.ok(!/^\[\d+\] /m.test(t.readerInput.text), 'no flat block: all evidence came through the controller');

    assert.equal(t.answer.mode, 'llm');
    assert.equal(t.answer.citations.length, 1);
    const cited = t.answer.citations[0]!;
    assert.ok(cited.text.includes('1,577'), cited.text);
    assert.equal(cited.file, FILE);
    assert.equal(cited.anchor.page, longReportEvidencePage, 'the citation carries the region\'s page anchor');
    const run = controlled(t)[0]!.controller! as unknown as { opened: Array<{ keptRegionIds: string[] }> };
    assert.ok(run.opened.some((o) => o.keptRegionIds.includes(cited.nodeId)), 'the cited region is one the controller kept');
    assert.equal(t.answer.unresolvedMarkers?.length ?? 0, 0);
  });

  it('refuses bad controller options before retrieving anything', async () => {
    const d = deps();
    await assert.rejects(ask(longReportQuestion, { ...options, controller: { minPages: 0 } }, d), (e: unknown) => e instanceof CanopyError && /minPages/.test(e.message));
    await assert.rejects(ask(longReportQuestion, { ...options, controller: { minPages: 8, maxActivationsPerIteration: 9 } }, d), (e: unknown) => e instanceof CanopyError && /maxActivationsPerIteration/.test(e.message));
    assert.equal((d.retriever as ListRetriever).queries.length, 0);
  });
});
