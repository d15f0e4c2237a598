// docs/controller.md quotes the LLM evaluator's prompt, its XML and the defaults; this keeps the
// quotes true to the code.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONTROLLER_SYSTEM_PROMPT } from '../../../src/core/controller/llmEvaluator';
import { defaultControllerOptions } from '../../../src/core/controller/options';

const doc = readFileSync(new URL('../../../docs/controller.md', import.meta.url), 'utf8');

describe('docs/controller.md', () => {
  it('quotes CONTROLLER_SYSTEM_PROMPT exactly', () => {
    assert.ok(doc.includes('```text\n' + CONTROLLER_SYSTEM_PROMPT + '\n```'), 'the prompt in docs/controller.md differs from the code');
  });

  it('states the default of every option in its table', () => {
    for (const [key, value] of Object.entries(defaultControllerOptions)) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${key}\``) || l.startsWith(`| \`${key}\`,`) || new RegExp(`^\\| [^|]*\`${key}\``).test(l));
      assert.ok(row, `no row for ${key}`);
      assert.ok(row.includes(String(value)) || row.includes(`\`${String(value)}\``), `the row for ${key} does not say ${String(value)}: ${row}`);
    }
  });
});
