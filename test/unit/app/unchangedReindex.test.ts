// An unchanged re-index (issue 34: ≤ 0.5 s) neither opens the encoder nor reads its cache, and
// writes no generation; a changed file loads the encoder then, and a question after it still
// gets an answer. With the real services, the built-in encoder and the local store.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { UseLiteEncoder } from '../../../src/core/encode/useLiteEncoder';
import { readCurrent } from '../../../src/core/index/layout';
import { openServices, type TestServices } from '../../helpers/services';
import { builtinModelDir } from '../encode/support/builtinModel';

/** Fresh services (as a new CLI process has) whose encoder loads are counted. */
function counted(root: string, indexDir: string): { services: TestServices; loads: () => number } {
  const services = openServices({ root, indexDir });
  let loads = 0;
  const load = services.embeddings.load.bind(services.embeddings);
  services.embeddings.load = () => {
    loads++;
    return load();
  };
  return { services, loads: () => loads };
}

describe('unchanged re-index', () => {
  let root: string;
  let indexDir: string;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'canopy-unchanged-'));
    indexDir = join(root, '.canopy', 'index');
    writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly. It lives for centuries.\n');
    writeFileSync(join(root, 'ash.md'), '# Ash\n\nAsh dieback is a fungal disease. It kills ash trees.\n');
    const s = openServices({ root, indexDir });
    await s.index.index(s.settings);
    await s.close();
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('knows the built-in encoder id without opening the model', async () => {
    const encoder = await UseLiteEncoder.create({ modelDir: builtinModelDir() });
    try {
      assert.equal(await UseLiteEncoder.idOf(builtinModelDir()), encoder.id);
    } finally {
      await encoder.dispose();
    }
  });

  it('loads no encoder and writes nothing; a changed file loads it, and questions still answer', async () => {
    const live = await readCurrent(indexDir);
    const files = readdirSync(indexDir).sort();
    const { services, loads } = counted(root, indexDir);
    try {
      const summary = await services.index.index(services.settings);
      assert.equal(summary.unchanged, true);
      assert.equal(summary.generation, live);
      assert.equal(loads(), 0, 'the encoder and its cache were not loaded');
      assert.deepEqual(readdirSync(indexDir).sort(), files);

      writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe sessile oak prefers dry soil. It lives for centuries.\n');
      const changed = await services.index.index(services.settings);
      assert.equal(changed.parsed, 1);
      assert.equal(changed.generation, live! + 1);
      assert.ok(loads() > 0, 'the changed file needed the encoder');

      const asked = await services.ask.ask('Which oak prefers dry soil?', services.settings);
      assert.match(asked.trace.answer.text, /sessile oak/);
    } finally {
      await services.close();
    }
  });
});
