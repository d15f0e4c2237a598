/**
 * A hand-built long document for the controller tests: regions with page anchors and boxes,
 * laid out like a parsed PDF (document → page → heading / paragraph → sentences / table → rows),
 * and its document graph built by the real graph builder (pages, contains, reading order,
 * layout proximity, sections, semantic edges from the test's hash embedder). Everything the
 * controller sees is known, so tests can name pages and elements by their text.
 *
 * The default document: an annual report of six pages. The capital-expenditure evidence sits in
 * the cash-flow table on page 3 (index 2), which continues on page 4; page 5 is about staff;
 * page 6 repeats the capex figure in the risk factors.
 */
import { buildDocumentGraph } from '../../../src/core/ingest/graph';
import type { PageInfo, ParsedDocument } from '../../../src/core/ingest/parsedDocument';
import type { Item, RegionNode } from '../../../src/contracts/region';
import { hashEmbed } from '../../helpers/hashEmbeddings';

export type ElementSpec =
  | { kind: 'heading'; text: string; level?: number }
  | { kind: 'paragraph'; sentences: string[] }
  | { kind: 'table'; header: string; rows: string[] };

export const FILE = 'report.pdf';

export const reportPages: ElementSpec[][] = [
  [
    { kind: 'heading', text: 'Annual Report', level: 1 },
    { kind: 'paragraph', sentences: ['This report covers the fiscal year 2023.', 'It was approved by the board in March.'] },
  ],
  [
    { kind: 'heading', text: 'Revenue', level: 2 },
    { kind: 'paragraph', sentences: ['Revenue grew to 120 million in 2023.', 'Growth came from the services segment.'] },
    { kind: 'table', header: 'Segment | 2023 | 2022', rows: ['Products | 70 | 68', 'Services | 50 | 41'] },
  ],
  [
    { kind: 'heading', text: 'Consolidated Statement of Cash Flows', level: 2 },
    { kind: 'paragraph', sentences: ['Cash flows from investing activities are shown below.'] },
    {
      kind: 'table',
      header: 'Item | 2023 | 2022',
      rows: ['Purchases of property, plant and equipment (capital expenditure) | 1577 | 1373', 'Proceeds from sale of businesses | 846 | 1065'],
    },
  ],
  [
    {
      kind: 'table',
      header: 'Item | 2023 | 2022',
      rows: ['Net cash used in investing activities | (222) | (3086)', 'Capital expenditure commitments for next year | 1700 | 1500'],
    },
    { kind: 'paragraph', sentences: ['Investing cash flows continue from the previous page.'] },
  ],
  [
    { kind: 'heading', text: 'Employees', level: 2 },
    { kind: 'paragraph', sentences: ['The company employed 93,000 people.', 'Staff turnover was low.'] },
  ],
  [
    { kind: 'heading', text: 'Risk Factors', level: 2 },
    { kind: 'paragraph', sentences: ['Capital expenditure of 1577 million may not deliver the expected returns.', 'Supply chains remain uncertain.'] },
  ],
];

const pageBox: [number, number, number, number] = [0, 0, 612, 792];

/** Builds the regions (one item) and the graph of a document from page specs. */
/**
 * `profiles`: the document profiles its items carry (the parser reads them from a document's
 * own cover page; profiles/profiles.ts) — `['filing']` for a fixture that stands for a filing.
 */
export async function buildFixtureDoc(pages: ElementSpec[][] = reportPages, options: { file?: string; semantic?: boolean; profiles?: string[] } = {}): Promise<ParsedDocument> {
  const file = options.file ?? FILE;
  const itemId = `${file}#0`;
  const pageRegions: RegionNode[] = pages.map((elements, p) => {
    const pageId = `${itemId}/0.${p}`;
    let y = 740;
    const children: RegionNode[] = elements.map((spec, e) => {
      const id = `${pageId}.${e}`;
      const lines = spec.kind === 'heading' ? 1 : spec.kind === 'paragraph' ? spec.sentences.length : spec.rows.length + 1;
      const top = y;
      const bottom = y - 14 * lines;
      y = bottom - 8; // 8 pt apart: consecutive elements are layout neighbours
      const box: [number, number, number, number] = [72, bottom, 540, top];
      const anchor = { file, page: p, bbox: box };
      const lineBox = (i: number): [number, number, number, number] => [72, top - 14 * (i + 1), 540, top - 14 * i];
      switch (spec.kind) {
        case 'heading':
          return { id, kind: 'heading', modality: 'text', text: spec.text, anchor, level: spec.level ?? 1, children: [] };
        case 'paragraph':
          return {
            id,
            kind: 'paragraph',
            modality: 'text',
            text: spec.sentences.join(' '),
            anchor,
            children: spec.sentences.map((s, i) => ({ id: `${id}.${i}`, kind: 'sentence', modality: 'text', text: s, anchor: { file, page: p, bbox: lineBox(i) }, children: [] })),
          };
        case 'table':
          return {
            id,
            kind: 'table',
            modality: 'table',
            text: spec.rows.join('\n'),
            anchor,
            header: spec.header,
            children: spec.rows.map((r, i) => ({
              id: `${id}.${i}`,
              kind: 'row',
              modality: 'table',
              text: r,
              header: spec.header,
              cells: r.split(' | '),
              anchor: { file, page: p, bbox: lineBox(i + 1), row: i },
              children: [],
            })),
          };
      }
    });
    return { id: pageId, kind: 'page', modality: 'text', text: children.map((c) => c.text).join('\n\n'), anchor: { file, page: p, bbox: pageBox }, children } as RegionNode;
  });
  const root: RegionNode = {
    id: `${itemId}/0`,
    kind: 'document',
    modality: 'text',
    text: pageRegions.map((p) => p.text).join('\n\n'),
    anchor: { file, page: 0, pageEnd: pages.length - 1, bbox: pageBox },
    children: pageRegions,
  };
  const items: Item[] = [{ id: itemId, file, title: 'Annual Report 2023', modality: 'text', root, ...(options.profiles ? { traits: { language: 'eng', profiles: options.profiles } } : {}) }];
  const pageInfos: PageInfo[] = pages.map((_, index) => ({ index, box: pageBox, rotate: 0, textRuns: 1 }));
  const graph = await buildDocumentGraph(
    { file, title: 'Annual Report 2023', items, pages: pageInfos },
    options.semantic === false ? {} : { embed: async (texts) => texts.map((t) => hashEmbed(t)) },
  );
  return { file, format: 'pdf', title: 'Annual Report 2023', items, pages: pageInfos, graph, warnings: [], stats: { bytes: 0, parseMs: 0, leaves: 0, nodes: 0 } };
}

/** The embedding functions the controller needs, over the deterministic hash embedder. */
export function hashDeps() {
  let texts = 0;
  return {
    embedQuery: async (text: string) => hashEmbed(text),
    embedTexts: async (batch: string[]) => {
      texts += batch.length;
      return batch.map((t) => hashEmbed(t));
    },
    get textsEmbedded() {
      return texts;
    },
  };
}

/** The id of the first element whose text includes `fragment`. */
export function elementId(doc: ParsedDocument, fragment: string): string {
  const n = doc.graph!.nodes.find((x) => x.type !== 'page' && x.type !== 'section' && x.text.includes(fragment));
  if (!n) throw new Error(`no element with "${fragment}"`);
  return n.id;
}

export function pageId(p: number, file = FILE): string {
  return `${file}#p${p}`;
}
