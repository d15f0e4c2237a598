// Routing by LLM on the loopback server: a JSON answer becomes a TraceRouting with source 'llm'
// (text never routed away); anything unusable falls back to the rule, saying why.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routeQuestion } from '../../../src/core/compress/router';
import { routeQuestionWithLlm } from '../../../src/core/compress/llmRouter';
import { withOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { modelOn } from './fixtures';

describe('LLM router', () => {
  let server: OpenAiTestServer;
  withOpenAiServer((s) => (server = s));

  it('routes from the model’s JSON, keeping text among the modalities', async () => {
    server.script({ kind: 'reply', content: 'Sure!\n{"aggregate": true, "modalities": ["table", "video"], "reason": "sums a column"}' });
    const routing = await routeQuestionWithLlm('What was the revenue across all regions?', modelOn(server));
    assert.equal(routing.source, 'llm');
    assert.equal(routing.aggregate, true);
    assert.deepEqual(routing.modalities, ['text', 'table']);
    assert.match(routing.reason, /^aggregate .*: sums a column$/);
  });

  it('falls back to the rule when the reply is unusable', async () => {
    const question = 'How many employees are listed in the table?';
    server.script({ kind: 'reply', content: '{"aggregate": "unsure"}' });
    const routing = await routeQuestionWithLlm(question, modelOn(server));
    const rule = routeQuestion(question);
    assert.equal(routing.source, 'rule');
    assert.equal(routing.aggregate, rule.aggregate);
    assert.deepEqual(routing.modalities, rule.modalities);
    assert.match(routing.reason, /^LLM routing failed \("aggregate" is not a boolean\), so the rule routed: /);
  });

  it('falls back to the rule when the call fails or is too slow', async () => {
    server.script({ kind: 'status', status: 500 }, { kind: 'hang' });
    const failed = await routeQuestionWithLlm('Who wrote it?', modelOn(server, { maxRetries: 0 }));
    assert.equal(failed.source, 'rule');
    assert.match(failed.reason, /HTTP 500/);
    const slow = await routeQuestionWithLlm('Who wrote it?', modelOn(server), { timeoutMs: 500 });
    assert.equal(slow.source, 'rule');
    assert.match(slow.reason, /no answer within 500 ms/);
  });
});
