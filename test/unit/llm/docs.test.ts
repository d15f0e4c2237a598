// docs/llm.md quotes the prompts; this keeps the quotes true to the code.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CRITIC_SYSTEM_PROMPT } from '../../../src/core/critic/llmCritic';
import { ROUTER_SYSTEM_PROMPT } from '../../../src/core/compress/llmRouter';
import { READER_SYSTEM_PROMPT } from '../../../src/core/read/llmReader';

const doc = readFileSync(new URL('../../../docs/llm.md', import.meta.url), 'utf8');

describe('docs/llm.md', () => {
  for (const [name, prompt] of Object.entries({ CRITIC_SYSTEM_PROMPT, READER_SYSTEM_PROMPT, ROUTER_SYSTEM_PROMPT })) {
    it(`quotes ${name} exactly`, () => {
      assert.ok(doc.includes('```text\n' + prompt + '\n```'), `${name} in docs/llm.md differs from the code`);
    });
  }
});
