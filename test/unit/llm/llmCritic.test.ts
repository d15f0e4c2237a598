// The LLM critic on the loopback server: a verdict read from a wrapped JSON reply, the prompt it
// sends, and the fallback to the rule critic — invalid JSON, a verdict without meaning, a failed
// call, a timeout — with the reason in the details; cancellation is not a fallback.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CriticInput } from '../../../src/core/critic/critic';
import { buildCriticMessages, LlmCritic, parseCriticReply } from '../../../src/core/critic/llmCritic';
import { RuleCritic } from '../../../src/core/critic/ruleCritic';
import { CancelledError } from '../../../src/core/errors';
import { withOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { everyRendering, modelOn, SECRET_KEY, settle } from './fixtures';

const input: CriticInput = {
  question: 'In which city was the director of Inception born?',
  round: 1,
  evidence: [
    {
      itemId: 'films.md#inception',
      title: 'Inception',
      rank: 0,
      round: 1,
      keptTexts: ['Inception is a 2010 science fiction film written and directed by Christopher Nolan.'],
    },
  ],
  seenTitles: ['Inception', 'Interstellar'],
  previousQueries: [],
};

describe('LLM critic', () => {
  let server: OpenAiTestServer;
  withOpenAiServer((s) => (server = s));

  it('reads the verdict and the follow-up query from a fenced reply with leading prose', async () => {
    server.script({
      kind: 'reply',
      content: [
        'Let me check the evidence.\n```json\n{"sufficient": false, ',
        '"missing": ["birthplace of Christopher Nolan"], "followUpQuery": "Christopher Nolan birthplace"}\n```',
      ],
    });
    const verdict = await new LlmCritic(modelOn(server)).judge(input);
    assert.equal(verdict.source, 'llm');
    assert.equal(verdict.sufficient, false);
    assert.deepEqual(verdict.missing, ['birthplace of Christopher Nolan']);
    assert.equal(verdict.followUpQuery, 'Christopher Nolan birthplace');
    assert.equal(verdict.details?.model, `openai-compatible:test-model@${server.host}`);
  });

  it('sends the question, the kept evidence, the other titles and the earlier queries', async () => {
    server.script({ kind: 'reply', content: '{"sufficient": true, "missing": [], "followUpQuery": ""}' });
    const verdict = await new LlmCritic(modelOn(server)).judge({ ...input, round: 2, previousQueries: ['Christopher Nolan'] });
    assert.equal(verdict.sufficient, true);
    assert.equal(verdict.followUpQuery, undefined);
    const body = server.requests[0]?.body;
    const sent = JSON.stringify(body?.messages);
    assert.match(sent, /In which city was the director of Inception born\?/);
    assert.match(sent, /\[1\] Inception\\nInception is a 2010 science fiction film/);
    assert.match(sent, /Queries already issued:\\n- Christopher Nolan/);
    assert.match(sent, /Other items already retrieved \(none of their text was kept\):\\n- Interstellar/);
    assert.equal(body?.temperature, 0);
    assert.equal(body?.max_tokens, 400);
  });

  it('falls back to the rule on a reply that is not JSON, saying why', async () => {
    server.script({ kind: 'reply', content: 'I think the evidence is mostly fine, but who knows.' });
    const verdict = await new LlmCritic(modelOn(server)).judge(input);
    const rule = await new RuleCritic().judge(input);
    assert.equal(verdict.source, 'llm-fallback-rule');
    assert.equal(verdict.sufficient, rule.sufficient);
    assert.deepEqual(verdict.missing, rule.missing);
    assert.equal(verdict.followUpQuery, rule.followUpQuery);
    assert.equal(verdict.details?.fallbackReason, 'invalid-json');
    assert.match(String(verdict.details?.fallbackMessage), /no JSON object/);
    assert.equal(verdict.details?.reply, 'I think the evidence is mostly fine, but who knows.');
    // the rule's own details travel along
    assert.ok(Array.isArray(verdict.details?.bridges));
  });

  it('falls back on broken JSON', async () => {
    server.script({ kind: 'reply', content: '{"sufficient": false, "missing": ["x"' });
    const verdict = await new LlmCritic(modelOn(server)).judge(input);
    assert.equal(verdict.source, 'llm-fallback-rule');
    assert.equal(verdict.details?.fallbackReason, 'invalid-json');
  });

  it('falls back on JSON that is not a verdict', async () => {
    server.script({ kind: 'reply', content: '{"sufficient": "probably", "missing": []}' });
    const verdict = await new LlmCritic(modelOn(server)).judge(input);
    assert.equal(verdict.source, 'llm-fallback-rule');
    assert.equal(verdict.details?.fallbackReason, 'invalid-verdict');
    assert.match(String(verdict.details?.fallbackMessage), /"sufficient" is "probably", not a boolean/);
  });

  it('falls back when the call fails, with the error naming the host', async () => {
    server.script({ kind: 'status', status: 503, message: 'overloaded' });
    const verdict = await new LlmCritic(modelOn(server, { maxRetries: 0 })).judge(input);
    assert.equal(verdict.source, 'llm-fallback-rule');
    assert.equal(verdict.details?.fallbackReason, 'llm-failed');
    assert.match(String(verdict.details?.fallbackMessage), new RegExp(`${server.host.replace(/\./g, '\\.')} failed: HTTP 503`));
  });

  it('falls back when the model takes longer than the critic timeout', async () => {
    server.script({ kind: 'hang' });
    const started = Date.now();
    const verdict = await new LlmCritic(modelOn(server), { timeoutMs: 500 }).judge(input);
    assert.equal(verdict.source, 'llm-fallback-rule');
    assert.equal(verdict.details?.fallbackReason, 'timeout');
    assert.match(String(verdict.details?.fallbackMessage), /no verdict within 500 ms/);
    assert.ok(Date.now() - started < 5000, 'guard');
  });

  it('passes the user’s cancellation through instead of falling back', async () => {
    server.script({ kind: 'hang' });
    const controller = new AbortController();
    const call = new LlmCritic(modelOn(server)).judge(input, controller.signal);
    await server.waitForRequests(1);
    controller.abort();
    const result = await settle(call);
    assert.ok(!result.ok && result.error instanceof CancelledError, String(!result.ok && result.error));
  });

  it('derives a follow-up query from what is missing when the model gives none', async () => {
    server.script({ kind: 'reply', content: '{"sufficient": false, "missing": ["Christopher Nolan birthplace"]}' });
    const verdict = await new LlmCritic(modelOn(server)).judge(input);
    assert.equal(verdict.source, 'llm');
    assert.equal(verdict.followUpQuery, `${input.question} Christopher Nolan birthplace`);
    assert.ok(verdict.details?.followUpDerived);
  });

  it('flags a follow-up query that repeats an earlier one', async () => {
    server.script({ kind: 'reply', content: '{"sufficient": false, "missing": [], "followUpQuery": "christopher nolan"}' });
    const verdict = await new LlmCritic(modelOn(server)).judge({ ...input, previousQueries: ['Christopher Nolan'] });
    assert.equal(verdict.details?.repeatsEarlierQuery, true);
  });

  it('puts the key in no verdict, fallback or otherwise', async () => {
    server.script(
      { kind: 'reply', content: '{"sufficient": false, "missing": ["a"], "followUpQuery": "b"}' },
      { kind: 'status', status: 401, message: `bad key ${SECRET_KEY}` },
      { kind: 'reply', content: 'no json here' },
    );
    const critic = new LlmCritic(modelOn(server, { maxRetries: 0 }));
    const verdicts = [await critic.judge(input), await critic.judge(input), await critic.judge(input)];
    assert.deepEqual(
      verdicts.map((v) => v.source),
      ['llm', 'llm-fallback-rule', 'llm-fallback-rule'],
    );
    assert.ok(!verdicts.map(everyRendering).join('\n').includes(SECRET_KEY));
  });

  it('caps the evidence in the prompt and says how much was left out', () => {
    const many: CriticInput = {
      ...input,
      evidence: Array.from({ length: 20 }, (_, i) => ({ itemId: `i${i}`, title: `Item ${i}`, rank: i, round: 1, keptTexts: ['w'.repeat(500)] })),
    };
    const [, user] = buildCriticMessages(many, 2000);
    assert.ok(user && user.content.length < 4000, String(user?.content.length));
    assert.match(user?.content ?? '', /more items not shown: the evidence limit was reached/);
  });

  it('parses replies robustly but strictly', () => {
    assert.deepEqual(parseCriticReply('<think>{"sufficient": true}</think>\n{"sufficient": false, "missing": "the year", "followUpQuery": "year"}'), {
      ok: true,
      sufficient: false,
      missing: ['the year'],
      followUpQuery: 'year',
    });
    assert.deepEqual(parseCriticReply('{"sufficient": "yes", "missing": null}'), { ok: true, sufficient: true, missing: [] });
    assert.equal(parseCriticReply('{"sufficient": true, "followUpQuery": 42}').ok, false);
    assert.equal(parseCriticReply('{"answer": 42}').ok, false);
    assert.equal(parseCriticReply('').ok, false);
  });
});
