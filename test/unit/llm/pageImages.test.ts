// Page images and element crops for a multimodal reader: pdf.js renders them (real PDF, real
// canvas), the subgraph XML names them, the OpenAI-compatible provider sends them as labelled
// image parts, and the ask pipeline attaches them — or says why it did not, and answers anyway.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ask, type AskDeps, type AskOptions } from '../../../src/core/engine/ask';
import { bpeTokenCounter } from '../../../src/core/compress/tokens';
import type { ParsedDocument } from '../../../src/core/ingest/parsedDocument';
import { parseFile } from '../../../src/core/ingest/parseFile';
import type { ChatMessage, ChatModel, ChatResult } from '../../../src/core/llm/llm';
import { LlmReader } from '../../../src/core/read/llmReader';
import { renderPageImages, type ImageRequest, type ReaderImage } from '../../../src/core/read/pageImages';
import { validateHostToWebview } from '../../../src/protocol/validate';
import { CanopyError } from '../../../src/core/errors';
import { hashEmbed } from '../../helpers/hashEmbeddings';
import { ListRetriever } from '../../helpers/listRetriever';
import { longReportEvidencePage, longReportPdf, longReportQuestion } from '../../helpers/longReportPdf';
import { startOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { modelOn } from './fixtures';

const FILE = 'reports/annual-2023.pdf';

/** Width and height from a PNG's IHDR chunk (and that it is a PNG at all). */
function pngSize(data: Uint8Array): { width: number; height: number } {
  const b = Buffer.from(data);
  assert.deepEqual([...b.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG signature');
  assert.equal(b.toString('ascii', 12, 16), 'IHDR');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe('page images for a multimodal reader', () => {
  let doc: ParsedDocument;
  before(async () => {
    doc = await parseFile(FILE, longReportPdf(), { itemMaxWords: 60, embed: async (texts) => texts.map((t) => hashEmbed(t)) });
  });

  it('renders a whole page and an element crop of a real PDF as PNG, sized as asked', async () => {
    // The first text line of the evidence page, as the parser located it.
    const graph = doc.graph!;
    const element = graph.nodes.find((n) => n.type !== 'page' && n.type !== 'section' && n.page === longReportEvidencePage && n.bbox)!;
    const [x0, y0, x1, y1] = element.bbox!;
    const blank: [number, number, number, number] = [x0, 20, x1, 40]; // the bottom margin: nothing drawn
    const requests: ImageRequest[] = [
      { ref: 'img1', file: FILE, page: longReportEvidencePage },
      { ref: 'img2', file: FILE, page: longReportEvidencePage, bbox: element.bbox! },
      { ref: 'img3', file: FILE, page: longReportEvidencePage, bbox: blank },
    ];
    const [page, crop, empty] = await renderPageImages(FILE, longReportPdf(), requests);
    assert.deepEqual([page!.ref, crop!.ref, empty!.ref], ['img1', 'img2', 'img3']);
    // US Letter (612 × 792 pt): the longer side scaled to 1024 px.
    assert.deepEqual(pngSize(page!.data), { width: page!.width, height: page!.height });
    assert.equal(page!.height, 1024);
    assert.equal(page!.width, Math.round((612 / 792) * 1024));
    // The crop: the box plus 6 pt each side, at 2 px per point.
    assert.deepEqual(pngSize(crop!.data), { width: crop!.width, height: crop!.height });
    assert.ok(Math.abs(crop!.width - 2 * (x1 - x0 + 12)) <= 2, `crop width ${crop!.width}`);
    assert.ok(Math.abs(crop!.height - 2 * (y1 - y0 + 12)) <= 2, `crop height ${crop!.height}`);
    // Drawn text does not compress like an empty strip of the same width.
    assert.ok(crop!.data.length > 3 * empty!.data.length, `text crop ${crop!.data.length} bytes, blank ${empty!.data.length}`);
  });

  it('names a missing page, and a box outside the page', async () => {
    await assert.rejects(renderPageImages(FILE, longReportPdf(), [{ ref: 'img1', file: FILE, page: 99 }]), /annual-2023\.pdf: no page 100/);
    await assert.rejects(renderPageImages(FILE, longReportPdf(), [{ ref: 'img1', file: FILE, page: 0, bbox: [2000, 2000, 2100, 2100] }]), /outside page 1/);
  });

  it('starts no page after its time limit: E_TIME_LIMIT naming the file and the page, and renders again afterwards', async () => {
    // One page takes a few milliseconds at least, so a 1 ms limit is spent before the second starts.
    const requests: ImageRequest[] = [0, 1].map((page) => ({ ref: `img${page + 1}`, file: FILE, page }));
    await assert.rejects(renderPageImages(FILE, longReportPdf(), requests, { timeLimitMs: 1 }), (err: unknown) => {
      assert.ok(err instanceof CanopyError && err.code === 'E_TIME_LIMIT' && err.file === FILE, String(err));
      assert.match(err.message, /^reports\/annual-2023\.pdf: rendering page [12] for the reader ran past the time limit of 0\.0 s/);
      return true;
    });
    const [page] = await renderPageImages(FILE, longReportPdf(), [requests[0]!]);
    assert.equal(page!.height, 1024);
  });

  describe('the OpenAI-compatible provider', () => {
    let server: OpenAiTestServer;
    before(async () => {
      server = await startOpenAiServer();
    });
    after(async () => {
      await server.close();
    });

    it('sends images as labelled image_url parts after the text, and plain messages unchanged', async () => {
      server.script({ kind: 'reply', content: 'ok' });
      const data = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
      await modelOn(server).chat([
        { role: 'system', content: 'system text' },
        { role: 'user', content: 'look', images: [{ label: 'img1', mime: 'image/png', data }] },
      ]);
      const body = server.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
      assert.deepEqual(body.messages[0], { role: 'system', content: 'system text' });
      assert.deepEqual(body.messages[1], {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'text', text: 'img1:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from(data).toString('base64')}` } },
        ],
      });
    });
  });

  describe('in the ask pipeline', () => {
    const options: AskOptions = {
      topK: 2,
      maxRounds: 1,
      branchingFactor: 2,
      compressor: { name: 'canopy' },
      readerTokenCap: 16000,
      encoderId: 'hash-256',
      retrieval: { dense: false, bm25: true, topics: false, fusion: 'rrf', rrfK: 60 },
      controller: { minPages: 8 },
      pageImages: true,
    };
    const recording = (acceptsImages?: boolean) => {
      const seen: ChatMessage[][] = [];
      const model: ChatModel = {
        id: 'memory:vision',
        remote: false,
        ...(acceptsImages === undefined ? {} : { acceptsImages }),
        async chat(messages): Promise<ChatResult> {
          seen.push(messages);
          return { text: 'Capital expenditure was 1,577 [1].', model: 'vision', attempts: 1, ms: 1 };
        },
      };
      return { seen, model };
    };
    const deps = (reader: AskDeps['reader'], renderImages?: AskDeps['renderImages']): AskDeps => ({
      retriever: new ListRetriever(doc.items),
      embedQuery: async (t) => hashEmbed(t),
      embedTexts: async (texts) => texts.map((t) => hashEmbed(t)),
      reader,
      tokens: bpeTokenCounter(),
      index: { root: '/corpus', generation: 1, items: doc.items.length },
      newId: () => 'trace-img',
      loadDocument: async () => doc,
      ...(renderImages ? { renderImages } : {}),
    });
    const realRenderer = (calls: string[]) => async (file: string, requests: ImageRequest[]): Promise<ReaderImage[]> => {
      calls.push(file);
      return renderPageImages(file, longReportPdf(), requests);
    };

    it('sends every page image and crop the XML names, each under its ref, and records them in the trace', async () => {
      const { seen, model } = recording();
      const calls: string[] = [];
      const t = await ask(longReportQuestion, options, deps(new LlmReader(model), realRenderer(calls)));
      assert.deepEqual(calls, [FILE], 'one rendering pass for the file');
      const user = seen[0]!.at(-1)!;
      const refs = [...t.readerInput.text.matchAll(/<(image|crop) ref="(img\d+)"\/>/g)].map((m) => m[2]);
      assert.ok(refs.some((r) => r) && t.readerInput.text.includes('<crop ref='), t.readerInput.text);
      assert.deepEqual(refs, refs.map((_, i) => `img${i + 1}`), 'refs are numbered in order');
      assert.deepEqual(user.images!.map((i) => i.label), refs, 'one image per ref, in the same order');
      assert.match(user.content, /follow, each after its ref/);
      assert.deepEqual(t.readerInput.images!.map((i) => i.ref), refs);
      for (const [i, image] of t.readerInput.images!.entries()) {
        assert.equal(image.bytes, user.images![i]!.data.length);
        assert.deepEqual(pngSize(user.images![i]!.data), { width: image.width, height: image.height });
      }
      assert.ok(t.readerInput.images!.some((i) => i.bbox) && t.readerInput.images!.some((i) => !i.bbox), 'pages and crops');
      assert.equal(t.settings.pageImages, true);
      assert.equal(t.readerInput.notes, undefined);
      const checked = validateHostToWebview({ kind: 'notify', method: 'inspector/showTrace', params: { trace: JSON.parse(JSON.stringify(t)) } });
      assert.ok(checked.ok, checked.ok ? '' : checked.error.message);
      // Citations still name regions, not images.
      assert.equal(t.answer.citations[0]!.nodeId, t.readerInput.regions[0]!.nodeId);
    });

    it('sends the text only, and says why, to a model that takes no images, without a renderer, or when rendering fails', async () => {
      const noImages = recording(false);
      const a = await ask(longReportQuestion, options, deps(new LlmReader(noImages.model), realRenderer([])));
      assert.equal(noImages.seen[0]!.at(-1)!.images, undefined);
      assert.ok(!a.readerInput.text.includes('ref="img'));
      assert.match(a.readerInput.notes![0]!, /takes no images/);

      const unrendered = recording();
      const b = await ask(longReportQuestion, options, deps(new LlmReader(unrendered.model)));
      assert.match(b.readerInput.notes![0]!, /nothing here can render PDF pages/);

      const failing = recording();
      const c = await ask(
        longReportQuestion,
        options,
        deps(new LlmReader(failing.model), async () => {
          throw new Error(`${FILE}: page images need a canvas`);
        }),
      );
      assert.equal(failing.seen.length, 1, 'the reader still answered');
      assert.equal(failing.seen[0]!.at(-1)!.images, undefined);
      assert.ok(!c.readerInput.text.includes('ref="img'), 'no dangling image refs');
      assert.match(c.readerInput.notes![0]!, /could not be rendered.*annual-2023\.pdf: page images need a canvas/);
      assert.equal(c.readerInput.text, a.readerInput.text, 'the same text-only input');
    });
  });
});
