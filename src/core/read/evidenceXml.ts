/**
 * The structured rendering of a long document's evidence subgraph (design §7) — one renderer for
 * both places that show it: the reader input (`buildReaderInput`, citation numbers continuing
 * the flat blocks' numbering) and the controller's trace (`renderEvidenceXml`, numbered from 1,
 * whose token count the trace records).
 *
 *   <evidence_subgraph document="…" file="…">
 *     <page number="4" summary="…">
 *       <node type="table" bbox="72 410 540 560" summary="…">
 *         <row n="3" context="…">…</row>  kept table rows (context: read/quoteContext.ts, where it changes)
 *       </node>
 *       <node type="paragraph">
 *         <text n="4">…</text>          other kept regions
 *       </node>
 *     </page>
 *   </evidence_subgraph>
 *
 * Every kept region carries its own citation number `n`, so a citation maps back to exactly one
 * region (its node id and parse-time anchor), as the flat blocks' `[n]` do. Pages are in page
 * order and nodes in reading order. Reader context is what the controller saves, so the markup
 * stays lean: a kept region's context (caption or section, units, headers, grouping labels) is
 * written on the first region of a node and again only where it changes; a summary
 * that only repeats the start of the kept text is left out; a node's page is the <page> it sits
 * in; kept regions carry no boxes of their own (the node's bbox locates them on the page).
 *
 * For a multimodal reader (`images`), each <page> gets `<image ref="imgK"/>` and each <node>
 * with a bbox `<crop ref="imgK"/>`; the renderer returns the matching requests, which
 * pageImages.ts renders and the reader sends, each after its label.
 *
 * Document text is untrusted: everything is escaped, and characters XML cannot carry are dropped.
 */
import type { RegionNode } from '../../contracts/region';
import type { ImageRequest } from './pageImages';
import { contextParts, formatContext } from './quoteContext';

// Control characters other than tab, LF and CR are not allowed in XML 1.0.
// eslint-disable-next-line no-control-regex
const invalidXmlChars = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

export function escapeXml(text: string): string {
  return text.replace(invalidXmlChars, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** ` key="value"` for every defined, non-empty value, escaped. */
export function xmlAttrs(values: Record<string, string | number | boolean | undefined>): string {
  return Object.entries(values)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join('');
}

/** Where a kept region sits in its document's evidence graph: the opened element and its page. */
export interface SubgraphElement {
  /** The document's title (or file). */
  document: string;
  /** The opened graph element (its id is the element's region id). */
  graphNodeId: string;
  type: string;
  summary: string;
  /** 0-based page. */
  page: number;
  pageSummary?: string;
  /** The one page of a format without pages. */
  virtualPage?: boolean;
  /** PDF user-space box of the element on its page. */
  bbox?: [number, number, number, number];
  /** The element's place in the document's reading order. */
  order: number;
  /** A table's lead-in: the paragraph just before it (what the table is about; the extractive reader reads it, the XML does not show it). */
  leadIn?: string;
}

/** One kept region of an opened element and its citation number. */
export interface SubgraphEntry {
  element: SubgraphElement;
  node: RegionNode;
  n: number;
}

const summaryChars = 80;

function clip(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, Math.max(0, max - 1))}…`;
}

/** Whole PDF points: enough to locate a node on its page (the anchors keep the exact box). */
function bboxText(b: [number, number, number, number] | undefined): string | undefined {
  return b ? b.map((x) => Math.round(x)).join(' ') : undefined;
}

/** Image references to write: refs are `img<first>`, `img<first + 1>`, …; the requests are appended to `requests`. */
export interface SubgraphImages {
  first: number;
  requests: ImageRequest[];
}

/** The entries of one document as an <evidence_subgraph>, pages in order, elements in reading order. */
export function renderSubgraphXml(file: string, entries: SubgraphEntry[], images?: SubgraphImages): string {
  const image = (page: number, bbox?: [number, number, number, number]) => {
    const ref = `img${images!.first + images!.requests.length}`;
    images!.requests.push({ ref, file, page, ...(bbox ? { bbox } : {}) });
    return ref;
  };
  const pages = new Map<number, Map<string, SubgraphEntry[]>>();
  for (const e of entries) {
    const byNode = pages.get(e.element.page) ?? new Map<string, SubgraphEntry[]>();
    const list = byNode.get(e.element.graphNodeId) ?? [];
    list.push(e);
    byNode.set(e.element.graphNodeId, list);
    pages.set(e.element.page, byNode);
  }
  const document = entries[0]?.element.document;
  const lines: string[] = [`<evidence_subgraph${xmlAttrs({ document: document !== file ? document : undefined, file })}>`];
  for (const page of [...pages.keys()].sort((a, b) => a - b)) {
    const nodes = [...pages.get(page)!.values()].sort((a, b) => a[0]!.element.order - b[0]!.element.order);
    const first = nodes[0]![0]!.element;
    lines.push(`  <page${xmlAttrs({ number: page + 1, summary: first.pageSummary ? clip(first.pageSummary, summaryChars) : undefined, virtual: first.virtualPage ? true : undefined })}>`);
    if (images && !first.virtualPage) lines.push(`    <image ref="${image(page)}"/>`);
    for (const kept of nodes) {
      const el = kept[0]!.element;
      const rows = kept.every((k) => k.node.kind === 'row');
      const texts = kept.map((k) => k.node.text.replace(/[ \t]+/g, ' ').trim());
      const summary = el.summary.replace(/\s+/g, ' ');
      const redundant = (texts[0] ?? '').replace(/\s+/g, ' ').startsWith(summary.replace(/…$/, ''));
      lines.push(`    <node${xmlAttrs({ type: el.type, bbox: bboxText(el.bbox), summary: redundant ? undefined : clip(summary, summaryChars) })}>`);
      if (images && el.bbox && !first.virtualPage) lines.push(`      <crop ref="${image(page, el.bbox)}"/>`);
      const tag = rows ? 'row' : 'text';
      // Each kept region's context (read/quoteContext.ts: a row's table caption or section, units,
      // headers and grouping label rows; a sentence's heading), written where it changes within the node.
      let shown: string | undefined;
      kept.forEach((k, i) => {
        // The node's summary already gives a table's header ("Table: …"): the context does not repeat it.
        const parts = contextParts(k.node);
        const context = formatContext(parts.header !== undefined && summary.includes(parts.header) ? { ...parts, header: undefined } : parts);
        const attr = context !== undefined && context !== shown ? xmlAttrs({ context }) : '';
        shown = context;
        lines.push(`      <${tag} n="${k.n}"${attr}>${escapeXml(texts[i]!)}</${tag}>`);
      });
      lines.push('    </node>');
    }
    lines.push('  </page>');
  }
  lines.push('</evidence_subgraph>');
  return lines.join('\n');
}
