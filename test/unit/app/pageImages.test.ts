// Page images through the real services: an indexed folder with a ten-page PDF, a question the
// MAGE controller answers, and a multimodal reader (an in-memory model) that receives the page
// images and crops rendered from the file on disk — and text only, with a note, once the file
// changed since it was indexed (its boxes would no longer match).
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ChatMessage, ChatModel, ChatResult } from '../../../src/core/llm/llm';
import { LlmReader } from '../../../src/core/read/llmReader';
import { openServices, type TestServices } from '../../helpers/services';
import { longReportPdf, longReportQuestion } from '../../helpers/longReportPdf';

describe('page images in the workspace', () => {
  let root: string;
  let indexDir: string;
  let ws: TestServices;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'canopy-img-docs-'));
    indexDir = mkdtempSync(join(tmpdir(), 'canopy-img-index-'));
    cpSync(new URL('../../fixtures/demo', import.meta.url), root, { recursive: true });
    mkdirSync(join(root, 'reports'));
    writeFileSync(join(root, 'reports', 'annual-2023.pdf'), longReportPdf());
    ws = openServices({ root, indexDir });
    await ws.index.index(ws.settings);
  });
  after(async () => {
    await ws.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(indexDir, { recursive: true, force: true });
  });

  const vision = () => {
    const seen: ChatMessage[][] = [];
    const model: ChatModel = {
      id: 'memory:vision',
      remote: false,
      async chat(messages): Promise<ChatResult> {
        seen.push(messages);
        return { text: 'See [1].', model: 'vision', attempts: 1, ms: 1 };
      },
    };
    return { seen, reader: new LlmReader(model) };
  };

  it('renders the images the subgraph names from the indexed PDF, when asked', async () => {
    const { seen, reader } = vision();
    const t = (await ws.ask.ask(longReportQuestion, ws.settings, { topK: 4, critic: 'none', reader, pageImages: true })).trace;
    assert.ok(t.rounds[0]!.retrieved.some((i) => i.controller), 'the controller ran');
    const images = seen[0]!.at(-1)!.images ?? [];
    assert.ok(images.length >= 2, `images sent: ${images.length}`);
    assert.deepEqual(images.map((i) => i.label), t.readerInput.images!.map((i) => i.ref));
    assert.ok(t.readerInput.images!.every((i) => i.file === 'reports/annual-2023.pdf' && i.bytes > 0));
    assert.equal(t.settings.pageImages, true);

    // Off by default (the setting), and then no refs and no images.
    const off = vision();
    const plain = (await ws.ask.ask(longReportQuestion, ws.settings, { topK: 4, critic: 'none', reader: off.reader })).trace;
    assert.equal(off.seen[0]!.at(-1)!.images, undefined);
    assert.ok(!plain.readerInput.text.includes('ref="img'));
    assert.equal(plain.settings.pageImages, undefined);
  });

  it('sends text only, with a note naming the file, when the PDF changed since it was indexed', async () => {
    appendFileSync(join(root, 'reports', 'annual-2023.pdf'), '\n% appended after indexing\n');
    const { seen, reader } = vision();
    const t = (await ws.ask.ask(longReportQuestion, ws.settings, { topK: 4, critic: 'none', reader, pageImages: true })).trace;
    assert.equal(seen[0]!.at(-1)!.images, undefined);
    assert.match(t.readerInput.notes![0]!, /reports\/annual-2023\.pdf changed since it was indexed/);
    assert.ok(!t.readerInput.text.includes('ref="img'));
  });
});
