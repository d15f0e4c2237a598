/**
 * The Reader port and the reader input: the kept evidence, numbered region by region, in the
 * order the rounds found it, capped at the reader's token budget (design §5). The exact text
 * and its token count go into the trace.
 */
import type { TokenCounter } from '../compress/tokens';
import type { KeptRegion } from '../critic/critic';
import type { RegionNode } from '../../contracts/region';
import type { TraceCitation } from '../../contracts/trace';
import { quoteContext } from './quoteContext';
import { renderSubgraphXml, type SubgraphElement } from './evidenceXml';
import type { ImageRequest, ReaderImage } from './pageImages';

/** A kept region for the reader (critic/critic.ts `KeptRegion`), and the controller's element it lies in. */
export interface EvidenceRegion extends KeptRegion {
  /** Set for a region the MAGE controller kept: the opened element it lies in (rendered as XML for the reader). */
  element?: SubgraphElement;
}

export interface ReaderInput {
  text: string;
  /** Tokens of the text (images are not counted: their cost depends on the model). */
  tokens: number;
  truncated: boolean;
  regions: EvidenceRegion[];
  /** The page images and crops the text refers to (`<image ref>`, `<crop ref>`), when asked for. */
  imageRequests?: ImageRequest[];
  /** The rendered images, in request order, once the pipeline has rendered them. */
  images?: ReaderImage[];
  /** Why images asked for were not sent. */
  notes?: string[];
}

export interface ReaderInputOptions {
  /** Refer to page images and element crops in the subgraph XML (a multimodal reader). */
  images?: boolean;
}

export interface Answer {
  mode: 'extractive' | 'llm';
  text: string;
  citations: TraceCitation[];
  /** The LLM that wrote the answer. */
  model?: string;
  /** Remarks for the user (e.g. a fallback to the extractive reader). */
  notes?: string[];
  /** Why the LLM reader failed, when another reader answered in its place (its message names the endpoint and the cause). */
  llmFailure?: string;
  /** Citation numbers in the text that name no evidence block. */
  unresolvedMarkers?: number[];
}

export interface Reader {
  readonly mode: 'extractive' | 'llm';
  /** The learned model that chooses the quotes, when one does (its id goes into the trace's settings). */
  readonly modelId?: string;
  /** True when the reader can look at page images and crops (`ReaderInput.images`). */
  readonly acceptsImages?: boolean;
  answer(question: string, input: ReaderInput, signal?: AbortSignal): Promise<Answer>;
}

/** A block's text: its context line (a table's caption or section, units, column headers; a sentence's heading) over the region's own text. */
function regionText(node: RegionNode): string {
  const context = quoteContext(node);
  return context ? `${context}\n${node.text}` : node.text;
}

/**
 * The leading regions of `node` whose blocks fit in `budget` tokens, in reading order: whole
 * children while they fit, then the leading parts of the first child that does not; a leaf too
 * large for the budget alone is cut at the characters that fit (its text ends with "…").
 */
function leadingParts(node: RegionNode, budget: number, cost: (node: RegionNode) => number): Array<{ node: RegionNode; tokens: number }> {
  const out: Array<{ node: RegionNode; tokens: number }> = [];
  let left = budget;
  const take = (n: RegionNode): boolean => {
    const c = cost(n);
    if (c <= left) {
      out.push({ node: n, tokens: c });
      left -= c;
      return true;
    }
    if (n.children.length > 0) {
      for (const child of n.children) if (!take(child)) return false;
      return true;
    }
    // A leaf alone larger than what is left: as much of its text as fits, by halving.
    let lo = 0;
    let hi = n.text.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (cost({ ...n, text: `${n.text.slice(0, mid)}…` }) <= left) lo = mid;
      else hi = mid - 1;
    }
    if (lo > 0) {
      const cut = { ...n, text: `${n.text.slice(0, lo)}…` };
      const c2 = cost(cut);
      out.push({ node: cut, tokens: c2 });
      left -= c2;
    }
    return false;
  };
  take(node);
  return out;
}

/** A reader-input unit: a flat block of one region, or the subgraph of one controlled document. */
type Unit = { kind: 'block'; region: EvidenceRegion } | { kind: 'subgraph'; file: string; regions: EvidenceRegion[] };

/**
 * The reader input: numbered evidence blocks `[n] file — title` + text, and for each document the
 * MAGE controller walked, one `<evidence_subgraph>` (read/evidenceXml.ts) at the place of its
 * first region, its kept regions numbered `n="…"` in the same sequence — `regions[n − 1]` is the
 * region citation `n` names, whichever form it was shown in. Stops before the region that would
 * pass the cap — except the first, which is cut to its leading regions that fit (`leadingParts`),
 * so kept evidence never reaches the reader as nothing.
 */
export function buildReaderInput(regions: EvidenceRegion[], tokens: TokenCounter, cap: number, options: ReaderInputOptions = {}): ReaderInput {
  const units: Unit[] = [];
  const subgraphs = new Map<string, Extract<Unit, { kind: 'subgraph' }>>();
  for (const region of regions) {
    if (!region.element) {
      units.push({ kind: 'block', region });
      continue;
    }
    let unit = subgraphs.get(region.file);
    if (!unit) {
      unit = { kind: 'subgraph', file: region.file, regions: [] };
      subgraphs.set(region.file, unit);
      units.push(unit);
    }
    unit.regions.push(region);
  }

  const parts: string[] = [];
  const used: EvidenceRegion[] = [];
  const imageRequests: ImageRequest[] = [];
  let total = 0;
  let truncated = false;
  const separator = () => (parts.length > 0 ? 1 : 0);
  for (const unit of units) {
    if (unit.kind === 'block') {
      const r = unit.region;
      const head = `[${used.length + 1}] ${r.file} — ${r.itemTitle}\n`;
      const body = regionText(r.node);
      const block = `${head}${body}`;
      // Head and body counted apart, so a region's count is memoised across rounds and questions
      // (the cap check may differ from the joined count by a token at the line break; the input's
      // total below is counted whole).
      const n = tokens.count(head) + tokens.count(body) + separator();
      if (total + n > cap) {
        truncated = true;
        // A first region larger than the whole cap: its leading parts that fit, each numbered as
        // a region of its own, so the reader never gets nothing while regions are kept.
        if (used.length === 0) {
          for (const part of leadingParts(r.node, cap, (node) => tokens.count(`[9999] ${r.file} — ${r.itemTitle}\n`) + tokens.count(regionText(node)) + 1)) {
            const block = `[${used.length + 1}] ${r.file} — ${r.itemTitle}\n${regionText(part.node)}`;
            parts.push(block);
            used.push({ ...r, node: part.node });
            total += part.tokens;
          }
        }
        break;
      }
      parts.push(block);
      used.push(r);
      total += n;
      continue;
    }
    // Regions in page and reading order, numbered on from the blocks before. The most regions whose
    // rendering fits are kept (all of them, nearly always; else found by bisection, as the
    // rendering only grows with each region).
    const ordered = [...unit.regions].sort((a, b) => a.element!.page - b.element!.page || a.element!.order - b.element!.order);
    const render = (m: number) => {
      const images = options.images ? { first: imageRequests.length + 1, requests: [] as ImageRequest[] } : undefined;
      const xml = renderSubgraphXml(
        unit.file,
        ordered.slice(0, m).map((r, i) => ({ element: r.element!, node: r.node, n: used.length + i + 1 })),
        images,
      );
      return { xml, n: tokens.count(xml) + separator(), requests: images?.requests ?? [] };
    };
    let fit = ordered.length;
    let best = render(fit);
    if (total + best.n > cap) {
      truncated = true;
      let lo = 0;
      let hi = ordered.length - 1;
      best = { xml: '', n: 0, requests: [] };
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        const r = render(mid);
        if (total + r.n <= cap) {
          lo = mid;
          best = r;
        } else hi = mid - 1;
      }
      fit = lo;
    }
    if (fit > 0) {
      parts.push(best.xml);
      used.push(...ordered.slice(0, fit));
      imageRequests.push(...best.requests);
      total += best.n;
    }
    if (truncated) break;
  }
  const text = parts.join('\n\n');
  return { text, tokens: tokens.count(text), truncated, regions: used, ...(options.images ? { imageRequests } : {}) };
}

/**
 * Every citation with what it needs to be read alone (`context`, read/quoteContext.ts) and, when
 * its file's last good version is served because the file no longer parses, `stale` — whichever
 * reader wrote it. A citation's node is found among the input's regions and their descendants.
 */
export function annotateCitations(answer: Answer, input: Pick<ReaderInput, 'regions'>, staleFiles?: ReadonlySet<string>): Answer {
  if (answer.citations.length === 0) return answer;
  const nodes = new Map<string, RegionNode>();
  const add = (n: RegionNode) => {
    nodes.set(n.id, n);
    for (const c of n.children) add(c);
  };
  for (const r of input.regions) add(r.node);
  const citations = answer.citations.map((c) => {
    const node = nodes.get(c.nodeId);
    const context = c.context ?? (node ? quoteContext(node) : undefined);
    const stale = staleFiles?.has(c.file) ? true : undefined;
    return { ...c, ...(context !== undefined ? { context } : {}), ...(stale ? { stale } : {}) };
  });
  return { ...answer, citations };
}

