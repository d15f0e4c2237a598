/**
 * Real traces for the webview tests, made by the real code: the core services index a folder
 * with the built-in encoder and answers questions (ask pipeline, rule critic, extractive
 * reader); replays go through the real replay. A PDF workspace is written with the test PDF
 * writer, and the MAGE controller's real entry point (buildEvidenceSubgraph) runs over the
 * parsed PDF from the index; its ControllerTrace is attached to the PDF item of the trace, as
 * the pipeline will once it runs the controller (the trace schema's optional `controller`).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bpeTokenCounter } from '../../src/core/compress/tokens';
import { buildEvidenceSubgraph } from '../../src/core/controller/subgraph';
import type { AskTrace } from '../../src/contracts/trace';
import { addGoldMark } from '../../src/extension/goldMarks';
import { inspectorRequestHandlers } from '../../src/extension/views/inspectorRequests';
import type { Page } from 'playwright-core';
import { hashEmbed } from '../helpers/hashEmbeddings';
import { openServices, type TestServices } from '../helpers/services';
import { type TextRun, writePdf } from '../unit/ingest/pdfWriter';
import { repoRoot, serveHost } from './harness';

export const demoQuestion = 'Which plot lost ash trees to dieback, and what should be replanted there?';
/** A question the demo corpus answers only in part, so the rule critic asks follow-up queries. */
export const gapQuestion = 'Which plot lost ash trees to dieback, and who paid for the replanting?';
export const pdfQuestion = 'When did the river gauge peak, and how high was the flood?';

/** The services of a folder with its index in a temp folder, indexed; `close()` removes the index folder. */
export async function openWorkspace(root: string): Promise<{ ws: TestServices; close: () => Promise<void> }> {
  const indexDir = mkdtempSync(join(tmpdir(), 'canopy-wv-index-'));
  const ws = openServices({ root, indexDir });
  await ws.index.index(ws.settings);
  return {
    ws,
    close: async () => {
      await ws.close();
      rmSync(indexDir, { recursive: true, force: true });
    },
  };
}

/** A copy of the demo corpus in a temp folder, optionally with more files. */
export function demoFolder(extra: Record<string, string | Uint8Array> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'canopy-wv-docs-'));
  cpSync(join(repoRoot, 'test', 'fixtures', 'demo'), dir, { recursive: true });
  for (const [rel, content] of Object.entries(extra)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}

const line = (y: number, text: string, size = 11, bold = false): TextRun => ({ x: 72, y, size, text, ...(bold ? { bold } : {}) });

/** A three-page flood report: the answer sits in the gauge paragraph on page 2. */
export function floodReportPdf(): Uint8Array {
  return writePdf([
    [
      line(720, 'Riverside Flood Report 2024', 18, true),
      line(690, 'This report summarises the June flood on the Riverside plots.'),
      line(674, 'It was written by the survey team after the water receded.'),
      line(640, 'Background', 14, true),
      line(616, 'The river rises every spring when the snow melts upstream.'),
      line(600, 'Most years the water stays inside the banks of the floodplain.'),
    ],
    [
      line(720, 'Gauge readings', 14, true),
      line(696, 'The river gauge peaked at 4.2 metres on 12 June at noon.'),
      line(680, 'The flood covered plots P1 and P2 for three days.'),
      line(646, 'Damage', 14, true),
      line(622, 'Two young alders were uprooted near the gauge.'),
      line(606, 'The sensors on plot P2 were flooded and replaced in July.'),
    ],
    [
      line(720, 'Recommendations', 14, true),
      line(696, 'Move the sensors on plot P2 above the 4.5 metre mark.'),
      line(680, 'Replant the alders with willow cuttings in autumn.'),
    ],
  ]);
}

export interface RealTraces {
  /** The demo question with the default settings (one answer round, then no new items). */
  demo: AskTrace;
  /** A question the corpus answers in part, k = 3: several rounds, items added by follow-up queries. */
  rounds: AskTrace;
  /** The demo question with hybrid node scores (dense + lexical components on every node). */
  hybrid: AskTrace;
  /** The gap question with the critic's look-ahead: one round, stopped because the follow-up would bring nothing better. */
  stop: AskTrace;
  /** `demo` replayed with B = 3 and the flat compressor. */
  replay: AskTrace;
  /** A question answered from the flood-report PDF, with the controller's run attached. */
  pdf: AskTrace;
  ws: TestServices;
  pdfBytes: Uint8Array;
  /** The saved traces of `ws` (what traces/list answers). */
  saved: Awaited<ReturnType<TestServices['traces']['list']>>;
  close(): Promise<void>;
}

export async function buildRealTraces(): Promise<RealTraces> {
  const pdfBytes = floodReportPdf();
  const folder = demoFolder({ 'reports/flood-report.pdf': pdfBytes });
  const { ws, close } = await openWorkspace(folder);
  const demo = (await ws.ask.ask(demoQuestion, ws.settings)).trace;
  // Without the critic's look-ahead or the critic model's stop, so the gap question runs its follow-up round for the timeline.
  const rounds = (await ws.ask.ask(gapQuestion, { ...ws.settings, criticLookAhead: false, criticModel: false }, { topK: 3, maxRounds: 2 })).trace;
  const hybrid = (await ws.ask.ask(demoQuestion, ws.settings, { nodeScore: { dense: 1, lexical: 0.5 } })).trace;
  const stop = (await ws.ask.ask(gapQuestion, ws.settings)).trace;
  const replay = await ws.ask.replay(demo, { branchingFactor: 3, compressor: { name: 'flat', m: 6 } }, ws.settings);
  const pdf = (await ws.ask.ask(pdfQuestion, ws.settings, { topK: 4 })).trace;
  const pdfItem = pdf.rounds[0]!.retrieved.find((i) => i.file.endsWith('.pdf') && i.tree);
  if (!pdfItem) throw new Error(`the PDF question did not retrieve the PDF: ${pdf.rounds[0]!.retrieved.map((i) => i.file).join(', ')}`);
  const doc = await (await ws.index.corpus(ws.settings)).document(pdfItem.file);
  const subgraph = await buildEvidenceSubgraph(
    pdfQuestion,
    doc,
    {
      embedQuery: async (t) => hashEmbed(t),
      embedTexts: async (texts) => texts.map((t) => hashEmbed(t)),
      tokens: bpeTokenCounter(),
    },
    { initialPages: 2 },
  );
  pdfItem.controller = subgraph.trace;
  for (const t of [demo, rounds, replay, pdf]) await ws.traces.save(t);
  const saved = await ws.traces.list();
  return {
    demo,
    rounds,
    hybrid,
    stop,
    replay,
    pdf,
    ws,
    pdfBytes,
    saved,
    close: async () => {
      await close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Makes a page's stub host answer with the extension's real request handlers over the real
 * workspace (views/inspectorRequests.ts): sources "open" into `opened` as `file:line:col-line:col`,
 * PDFs are read from the folder, the trace history and replays are the workspace's. Returns the
 * log of requests handled.
 */
export async function serveRealHost(page: Page, real: RealTraces, opened: string[] = []): Promise<string[]> {
  const indexed = new Set(Object.keys((await real.ws.index.corpus(real.ws.settings)).manifest.files));
  const known = new Map([real.demo, real.rounds, real.stop, real.replay, real.pdf].map((t) => [t.id, t]));
  return serveHost(
    page,
    inspectorRequestHandlers({
      currentView: () => ({ title: 'Canopy', message: '' }),
      isIndexedFile: (rel) => indexed.has(rel),
      openSource: async (rel, range, preserveFocus) => {
        opened.push(`${rel}:${range.startLine}:${range.startColumn}-${range.endLine}:${range.endColumn}${preserveFocus ? ' (focus kept)' : ''}`);
      },
      readFile: async (rel) => new Uint8Array(readFileSync(join(real.ws.root, rel))),
      listTraces: () => real.ws.traces.list(),
      readTrace: (name) => real.ws.traces.read(name),
      findTrace: async (id) => known.get(id),
      replay: (t, settings) => real.ws.ask.replay(t, settings, real.ws.settings),
      // The extension's own store of inspector marks (goldCommands.markFromInspector), into the workspace.
      markGold: async (mark) => {
        const { annotation, added } = await addGoldMark(real.ws.root, mark, 'webview-test');
        return { annotationId: annotation.id, added };
      },
    }),
  );
}
