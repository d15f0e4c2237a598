// The LLM evaluator on the loopback OpenAI-compatible server: it picks candidates by index from
// the XML state, its reply is validated (bad indices, a stop together with actions, a search
// without budget are recorded and dropped), an unusable reply is a validation error that falls
// back to the rule or stops, and a failed call stops the run with the reason — never a crash.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateCandidates } from '../../../src/core/controller/candidates';
import { CONTROLLER_SYSTEM_PROMPT, LlmEvaluator, parseControllerReply } from '../../../src/core/controller/llmEvaluator';
import { EvidenceState } from '../../../src/core/controller/state';
import { buildEvidenceSubgraph } from '../../../src/core/controller/subgraph';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import { CancelledError } from '../../../src/core/errors';
import { OpenAiCompatibleChatModel } from '../../../src/core/llm/openaiProvider';
import { withOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { elementId, hashDeps, pageId } from './fixtureDoc';
import { QUESTION, runScripted, setup, type Setup } from './scripted';

function modelOn(server: OpenAiTestServer, maxRetries = 0): OpenAiCompatibleChatModel {
  return new OpenAiCompatibleChatModel({ baseUrl: server.baseUrl, model: 'test-model', apiKey: 'sk-test-controller-key-0001', maxRetries });
}

/** The candidate indices the model will see in iteration 1 with page 3 (index 2) as the only entry page. */
async function firstCandidates(s: Setup) {
  const state = new EvidenceState(s.view);
  state.apply({ type: 'ACTIVATE_PAGE', pageId: pageId(2), page: 2, source: 'initial' });
  const list = generateCandidates(s.view, state);
  const index = (pred: (c: (typeof list)[number]) => boolean) => list.find(pred)!.index;
  return {
    list,
    activateTable: index((c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === elementId(s.doc, 'Purchases of property')),
    activateHeading: index((c) => c.action.type === 'ACTIVATE_NODE' && c.targetId === elementId(s.doc, 'Consolidated Statement')),
  };
}

const reply = (content: string) => ({ kind: 'reply' as const, content });

describe('LLM evaluator', () => {
  let server: OpenAiTestServer;
  withOpenAiServer((s) => (server = s));

  it('executes the candidates the model names by index, with its utility, and stops when it says so', async () => {
    const s = await setup({ initialPages: 1 });
    const { activateTable } = await firstCandidates(s);
    server.script(
      reply(`<think>the table row is what we need</think>\n\`\`\`json\n{"actions": [{"index": ${activateTable}, "utility": 0.92}], "search": "", "stop": false, "reason": "the cash-flow table"}\n\`\`\``),
      reply('{"actions": [], "stop": true, "reason": "the table is active; nothing else helps"}'),
    );
    const run = await runScripted(s, new LlmEvaluator(modelOn(server)));
    const act = run.steps.find((st) => st.iteration === 1)!;
    assert.deepEqual(act.action, { type: 'ACTIVATE_NODE', nodeId: elementId(s.doc, 'Purchases of property'), source: 'page' });
    assert.equal(act.decidedBy, 'llm');
    assert.equal(act.utility, 0.92);
    assert.equal(act.why, 'the cash-flow table');
    assert.equal(act.candidateIndex, activateTable);
    assert.deepEqual(run.stop, { reason: 'evaluator-stop', iteration: 2, note: 'the table is active; nothing else helps' });
    assert.equal(run.steps.at(-1)!.decidedBy, 'llm');
    assert.deepEqual(run.validationErrors, []);
    assert.deepEqual(
      run.evaluatorCalls.map((c) => [c.iteration, c.evaluator, c.outcome, c.model]),
      [
        [1, 'llm', 'ok', `openai-compatible:test-model@${server.host}`],
        [2, 'llm', 'ok', `openai-compatible:test-model@${server.host}`],
      ],
    );
  });

  it('sends the XML state: question, budget, evidence, recent trace and numbered candidates, but no node ids', async () => {
    const s = await setup({ initialPages: 1 });
    const { activateTable, list } = await firstCandidates(s);
    server.script(reply(`{"actions": [${activateTable}]}`), reply('{"stop": true, "reason": "done"}'));
    await runScripted(s, new LlmEvaluator(modelOn(server)));
    const messages = server.requests.map((r) => r.body?.messages as Array<{ role: string; content: string }>);
    assert.equal(messages[0]![0]!.role, 'system');
    assert.equal(messages[0]![0]!.content, CONTROLLER_SYSTEM_PROMPT);
    const first = messages[0]![1]!.content;
    assert.match(first, /<question>What was the capital expenditure \(purchases of property, plant and equipment\) in 2023\?<\/question>/);
    assert.match(first, /<budget iterations_left="8" activations_left_this_iteration="4" opened_nodes_left="12" searches_left="2"\/>/);
    assert.match(first, /<page number="3" state="active" summary="Page 3: Consolidated Statement of Cash Flows">/);
    assert.match(first, new RegExp(`<candidate index="${activateTable}" action="ACTIVATE_NODE" page="3" type="table" source="page">Table: Item \\| 2023 \\| 2022 — Purchases of property, plant and equipment \\(capital expenditure\\) \\| 1577 \\| 1373 Proceeds from sale of businesses \\| 846 \\| 1065</candidate>`));
    assert.match(first, new RegExp(`<candidates count="${list.length}" shown="${list.length}">`));
    assert.match(first, /<step n="1" iteration="0" action="ACTIVATE_PAGE" target="page 3" source="initial" valid="true" utility="1"\/>/);
    assert.ok(!first.includes('report.pdf#'), 'no node ids in what the model sees');
    const second = messages[1]![1]!.content;
    assert.match(second, /<step n="2" iteration="1" action="ACTIVATE_NODE" target="p\. 3 table: Table: Item \| 2023 \| 2022" source="page" valid="true"\/>/);
    assert.match(second, /<node type="table" state="active" summary="Table: Item \| 2023 \| 2022"><preview>Purchases of property, plant and equipment \(capital expenditure\) \| 1577 \| 1373\nProceeds from sale of businesses \| 846 \| 1065<\/preview><\/node>/);
    assert.equal(server.requests[0]!.body?.temperature, 0);
  });

  it('records an unparseable reply as a validation error and decides that iteration by the rule', async () => {
    const s = await setup({ initialPages: 1 });
    server.script(reply('I would open the cash flow table, it looks right.'), reply('{"stop": true}'));
    const run = await runScripted(s, new LlmEvaluator(modelOn(server)));
    assert.deepEqual(
      run.validationErrors.map((e) => [e.iteration, e.kind, e.message]),
      [[1, 'unparseable', 'the reply holds no JSON object']],
    );
    const it1 = run.steps.filter((st) => st.iteration === 1);
    assert.ok(it1.length > 0 && it1.every((st) => st.decidedBy === 'rule-fallback'));
    assert.deepEqual(
      run.evaluatorCalls.map((c) => [c.iteration, c.evaluator, c.outcome]),
      [
        [1, 'llm', 'invalid'],
        [1, 'rule', 'ok'],
        [2, 'llm', 'ok'],
      ],
    );
    assert.equal(run.evaluatorCalls[0]!.reply, 'I would open the cash flow table, it looks right.');
    assert.equal(run.stop.reason, 'evaluator-stop');
  });

  it('stops with evaluator-invalid when configured to, instead of falling back', async () => {
    const s = await setup({ initialPages: 1, onInvalidDecision: 'stop' });
    server.script(reply('{"actions": "open the table"}'));
    const run = await runScripted(s, new LlmEvaluator(modelOn(server)));
    assert.equal(run.stop.reason, 'evaluator-invalid');
    assert.match(run.stop.note, /"actions" is "open the table", not a list/);
    assert.deepEqual(
      run.validationErrors.map((e) => e.kind),
      ['unparseable'],
    );
  });

  it('drops indices that are not listed, and ignores a stop sent with actions, recording both', async () => {
    const s = await setup({ initialPages: 1 });
    const { activateTable, activateHeading } = await firstCandidates(s);
    server.script(reply(`{"actions": [999, "x", ${activateTable}, {"index": ${activateHeading}}], "stop": true, "reason": "all set"}`), reply('{"stop": "yes"}'));
    const run = await runScripted(s, new LlmEvaluator(modelOn(server)));
    assert.deepEqual(
      run.steps.filter((st) => st.iteration === 1).map((st) => [st.action.type, st.valid]),
      [
        ['ACTIVATE_NODE', true],
        ['ACTIVATE_NODE', true],
      ],
    );
    assert.deepEqual(
      run.validationErrors.map((e) => [e.iteration, e.kind]),
      [
        [1, 'bad-index'],
        [1, 'bad-index'],
        [1, 'bad-stop'],
      ],
    );
    assert.equal(run.stop.reason, 'evaluator-stop');
    assert.equal(run.stop.iteration, 2);
  });

  it('runs the search the model asks for, and refuses one beyond the budget', async () => {
    const s = await setup({ initialPages: 1, maxSearches: 1 });
    server.script(reply('{"actions": [], "search": "staff turnover"}'), reply('{"actions": [], "search": "revenue by segment"}'), reply('{"stop": true}'));
    const run = await runScripted(s, new LlmEvaluator(modelOn(server)));
    const searches = run.steps.filter((st) => st.action.type === 'SEARCH_EVIDENCE');
    assert.deepEqual(
      searches.map((st) => st.action),
      [{ type: 'SEARCH_EVIDENCE', query: 'staff turnover' }],
    );
    // The second search is refused while reading the reply (no searches left), so the decision
    // is empty, recorded, and the rule decides that iteration.
    assert.deepEqual(
      run.validationErrors.map((e) => [e.iteration, e.kind]),
      [[2, 'bad-search']],
    );
    assert.equal(run.evaluatorCalls[2]!.evaluator, 'rule');
  });

  it('stops the run with the reason when the call fails, without throwing', async () => {
    const s = await setup({ initialPages: 1 });
    server.script({ kind: 'status', status: 500, message: 'model overloaded' });
    const run = await runScripted(s, new LlmEvaluator(modelOn(server)));
    assert.equal(run.stop.reason, 'evaluator-failed');
    assert.match(run.stop.note, /the evaluator call failed: .*500/);
    assert.equal(run.evaluatorCalls[0]!.outcome, 'failed');
    assert.deepEqual(run.steps.map((st) => st.action.type), ['ACTIVATE_PAGE', 'STOP']);
  });

  it('passes the user’s cancellation through as CancelledError', async () => {
    const s = await setup({ initialPages: 1 });
    server.script({ kind: 'hang' });
    const ac = new AbortController();
    const pending = runScripted(s, new LlmEvaluator(modelOn(server)), QUESTION, ac.signal);
    await server.waitForRequests(1);
    ac.abort();
    await assert.rejects(pending, CancelledError);
  });

  it('is chosen by buildEvidenceSubgraph when a ChatModel is given', async () => {
    server.script(reply('{"stop": true, "reason": "nothing to add"}'));
    const s = await setup();
    const result = await buildEvidenceSubgraph(QUESTION, s.doc, { ...hashDeps(), tokens: bpeTokenCounter(), llm: modelOn(server) }, { initialPages: 1 });
    assert.deepEqual(result.trace.evaluator, { kind: 'llm', model: `openai-compatible:test-model@${server.host}`, onInvalidDecision: 'rule' });
    assert.equal(result.trace.stop.reason, 'evaluator-stop');
    assert.deepEqual(result.regions, []);
  });
});

describe('parseControllerReply', () => {
  const listed = new Set([1, 2, 3, 4]);

  it('accepts numbers, numeric strings and objects; clamps utilities; keeps the first of duplicates', () => {
    const r = parseControllerReply('{"actions": [2, "3", {"index": 4, "utility": 7, "why": "big"}, 2], "reason": "r"}', listed, 1);
    assert.deepEqual(r, {
      ok: true,
      picks: [
        { index: 2, why: 'r' },
        { index: 3, why: 'r' },
        { index: 4, utility: 1, why: 'big' },
      ],
      problems: [],
    });
  });

  it('treats an empty decision, a non-boolean stop and a bad search as problems', () => {
    const empty = parseControllerReply('{"actions": [], "stop": false}', listed, 1);
    assert.deepEqual(empty, { ok: false, error: 'the decision has no action, no search and no stop', problems: [{ kind: 'unparseable', message: 'the decision has no action, no search and no stop' }] });
    const stop = parseControllerReply('{"actions": [1], "stop": "maybe"}', listed, 1);
    assert.ok(stop.ok && stop.problems.some((p) => p.kind === 'unparseable' && /"stop" is "maybe"/.test(p.message)));
    const search = parseControllerReply('{"search": 42, "actions": [1]}', listed, 1);
    assert.ok(search.ok && search.problems[0]!.kind === 'bad-search' && search.search === undefined);
    const noBudget = parseControllerReply('{"search": "capex"}', listed, 0);
    assert.equal(noBudget.ok, false);
    assert.equal(noBudget.problems[0]!.kind, 'bad-search');
  });

  it('finds the decision after reasoning and inside fences, and not inside <think>', () => {
    const r = parseControllerReply('<think>{"actions": [1]}</think>Sure.\n```json\n{"actions": [3],}\n```', listed, 1);
    assert.ok(r.ok);
    assert.deepEqual(
      r.picks.map((p) => p.index),
      [3],
    );
  });
});
