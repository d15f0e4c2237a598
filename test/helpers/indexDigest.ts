/**
 * A digest of what indexing the repository's fixtures produces — every parsed document (regions,
 * anchors, table context, traits, graph), the manifest's file entries, the BM25 files, and the
 * vectors — so a change to how indexing runs (workers, pipelining, batching, writes) can be
 * checked to leave the index's content as it was (test/unit/index/indexDigest.test.ts against
 * test/fixtures/index-digest/expected.json, written by `node --import tsx tools/index-digest.ts
 * --write` from the code whose output is the reference).
 *
 * Structure is compared exactly (a SHA-256 per document of its canonical JSON). Vectors are
 * compared to within a tolerance, as projections on a few fixed directions: the encoder's output
 * for a text varies in its last bits with the batch it is encoded in (ONNX Runtime's kernels;
 * max |Δ| 6e-8 measured), and which texts share a batch already depended on the embedding
 * cache's contents before any of this; so do the semantic edges' weights (rounded to 3 places).
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegionNode } from '../../src/contracts/region';
import { nodeVectors } from '../../src/core/encode/nodeVectors';
import { paths, readCurrent, readManifest } from '../../src/core/index/layout';
import type { ParsedDocument } from '../../src/core/ingest/parsedDocument';
import { seededRandom } from '../../src/core/random';
import { writePdf, type TextRun } from '../unit/ingest/pdfWriter';
import { longReportPdf } from './longReportPdf';
import { fixturesDir } from './fixtureWorkspace';
import { openServices } from './services';

/** Directions the vectors are projected on (seeded; 512-d, the built-in encoder's width). */
const DIRECTIONS = 4;
const DIM = 512;

export interface DocumentDigest {
  /** SHA-256 of the document's canonical JSON (timings removed, semantic weights rounded). */
  structure: string;
  regions: number;
  semanticEdges: number;
  /** sha256 of docs/<key>.elements.bm25 when written. */
  elements?: string;
  /** Per item: its vector's projections. */
  items: Record<string, number[]>;
  /** Sum over every node of the document of its vector's projections (leaves encoded, the rest derived). */
  nodes: number[];
}

export interface IndexDigest {
  files: Record<string, { entry: string; doc?: DocumentDigest }>;
  errors: Array<{ file: string; code: string }>;
  /** sha256 of lexical-<generation>.bm25. */
  lexical: string;
}

const sha = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

function directions(): Float32Array[] {
  const rand = seededRandom(34);
  return Array.from({ length: DIRECTIONS }, () => Float32Array.from({ length: DIM }, () => rand() * 2 - 1));
}

function project(v: Float32Array, dirs: Float32Array[]): number[] {
  return dirs.map((d) => {
    let s = 0;
    for (let i = 0; i < d.length; i++) s += d[i]! * (v[i] ?? 0);
    return s;
  });
}

function canonical(doc: ParsedDocument): string {
  const copy = JSON.parse(JSON.stringify(doc)) as Omit<ParsedDocument, 'stats'> & { stats: Record<string, unknown> };
  // Timings, not content.
  delete copy.stats.parseMs;
  delete copy.stats.stages;
  if (copy.graph) {
    for (const e of copy.graph.edges) if (e.type === 'semantic' && e.weight !== undefined) e.weight = Math.round(e.weight * 1000) / 1000;
  }
  return JSON.stringify(copy);
}

function countRegions(n: RegionNode): number {
  return 1 + n.children.reduce((a, c) => a + countRegions(c), 0);
}

const WORDS = ('oak ash alder birch soil water plot survey growth canopy crown root drought spring summer autumn winter '
  + 'station reading sensor moisture rainfall transect seedling sapling fungus beetle dieback replant measure record').split(' ');

/** Seeded prose: `n` sentences of 6–17 words. */
function prose(rand: () => number, n: number): string {
  return Array.from({ length: n }, () => {
    const words = Array.from({ length: 6 + Math.floor(rand() * 12) }, () => WORDS[Math.floor(rand() * WORDS.length)]!);
    return `${words[0]!.charAt(0).toUpperCase()}${words.join(' ').slice(1)}.`;
  }).join(' ');
}

/** A long Markdown handbook: 40 sections of paragraphs and lists, a table every fifth (several items, grouping, table context). */
function handbook(): string {
  const rand = seededRandom(7);
  const out = ['# Field Handbook', ''];
  for (let s = 1; s <= 40; s++) {
    out.push(`## Section ${s}: ${WORDS[s % WORDS.length]} and ${WORDS[(s * 7) % WORDS.length]}`, '', prose(rand, 4), '', `- ${prose(rand, 1)}`, `- ${prose(rand, 1)}`, '');
    if (s % 5 === 0) {
      out.push('Plot readings (in millimetres):', '', '| plot | 2022 | 2023 |', '|---|---|---|');
      for (let r = 0; r < 6; r++) out.push(`| P${s}-${r} | ${Math.floor(rand() * 900)} | ${Math.floor(rand() * 900)} |`);
      out.push(`| Total | ${Math.floor(rand() * 5000)} | ${Math.floor(rand() * 5000)} |`, '');
    }
  }
  return out.join('\n');
}

/** A 24-page PDF: per page a heading, a paragraph and a table of figures with units and a total (page groups, PDF tables, near and semantic edges). */
function statementsPdf(): Uint8Array {
  const rand = seededRandom(11);
  const pages: TextRun[][] = [];
  for (let p = 1; p <= 24; p++) {
    const runs: TextRun[] = [{ x: 72, y: 730, size: 15, text: `Note ${p}. ${WORDS[p % WORDS.length]} statement`, bold: true }];
    const text = prose(rand, 3);
    const lines = text.match(/.{1,80}(\s|$)/g) ?? [text];
    lines.forEach((l, i) => runs.push({ x: 72, y: 700 - 14 * i, size: 10, text: l.trim() }));
    const top = 690 - 14 * lines.length;
    runs.push({ x: 72, y: top, size: 10, text: '(In thousands)' });
    runs.push({ x: 72, y: top - 16, size: 10, text: 'Line item', bold: true }, { x: 330, y: top - 16, size: 10, text: '2023', bold: true }, { x: 430, y: top - 16, size: 10, text: '2022', bold: true });
    for (let r = 0; r < 10; r++) {
      const y = top - 32 - 14 * r;
      runs.push({ x: 72, y, size: 10, text: r === 9 ? 'Total' : `${WORDS[(p + r) % WORDS.length]} ${WORDS[(p * r + 3) % WORDS.length]}` });
      runs.push({ x: 330, y, size: 10, text: String(Math.floor(rand() * 90000)) }, { x: 430, y, size: 10, text: String(Math.floor(rand() * 90000)) });
    }
    pages.push(runs);
  }
  return writePdf(pages, [612, 792], { title: 'Statements of the Plots' });
}

/**
 * The fixtures' workspace: test/fixtures/ingest and test/fixtures/demo, a generated ten-page
 * report PDF, a generated 24-page PDF of tables and a generated long Markdown handbook.
 */
export function writeDigestWorkspace(root: string): void {
  cpSync(join(fixturesDir, 'ingest'), join(root, 'ingest'), { recursive: true });
  cpSync(join(fixturesDir, 'demo'), join(root, 'demo'), { recursive: true });
  writeFileSync(join(root, 'long-report.pdf'), longReportPdf());
  writeFileSync(join(root, 'statements.pdf'), statementsPdf());
  writeFileSync(join(root, 'handbook.md'), handbook());
}

/** Indexes the fixtures' workspace with the real services (parse workers, built-in encoder, local store) and digests the result. */
export async function fixtureIndexDigest(): Promise<IndexDigest> {
  const tmp = mkdtempSync(join(tmpdir(), 'canopy-digest-'));
  const root = join(tmp, 'workspace');
  const indexDir = join(tmp, 'index');
  writeDigestWorkspace(root);
  const services = openServices({ root, indexDir });
  try {
    const summary = await services.index.index(services.settings);
    const generation = (await readCurrent(indexDir))!;
    const manifest = await readManifest(indexDir, generation);
    const p = paths(indexDir);
    const dirs = directions();
    const store = services.stores.storeFor(services.settings);
    const reader = await store.open(generation);
    const itemVectors = new Map((await reader.entries()).map((e) => [e.id, e.vector]));
    await reader.close();
    const files: IndexDigest['files'] = {};
    for (const rel of Object.keys(manifest.files).sort()) {
      const e = manifest.files[rel]!;
      const entry = sha(JSON.stringify({ hash: e.hash, format: e.format, doc: e.doc, items: e.items, nodes: e.nodes, warnings: e.warnings, stale: e.staleError ?? null }));
      const docFile = p.doc(e.doc);
      if (!existsSync(docFile)) {
        files[rel] = { entry };
        continue;
      }
      const doc = JSON.parse(readFileSync(docFile, 'utf8')) as ParsedDocument;
      const items: Record<string, number[]> = {};
      const nodes = new Array<number>(DIRECTIONS).fill(0);
      for (const item of doc.items) {
        items[item.id] = project(itemVectors.get(item.id)!, dirs);
        // Every node's vector as the index derives it, from the cached leaf vectors (never encoding: a miss fails the digest).
        const vectors = await nodeVectors(item.root, async (texts) => {
          const got = await services.embeddings.cachedVectors(texts);
          return got.map((v, i) => {
            if (!v) throw new Error(`${rel}: no cached vector for ${JSON.stringify(texts[i]!.slice(0, 60))}`);
            return v;
          });
        });
        for (const v of vectors.values()) project(v, dirs).forEach((x, i) => (nodes[i]! += x));
      }
      const elements = p.docElements(e.doc);
      files[rel] = {
        entry,
        doc: {
          structure: sha(canonical(doc)),
          regions: doc.items.reduce((a, it) => a + countRegions(it.root), 0),
          semanticEdges: doc.graph?.edges.filter((x) => x.type === 'semantic').length ?? 0,
          ...(existsSync(elements) ? { elements: sha(readFileSync(elements)) } : {}),
          items,
          nodes,
        },
      };
    }
    return {
      files,
      errors: summary.errors.map((x) => ({ file: x.file, code: x.code })).sort((a, b) => a.file.localeCompare(b.file)),
      lexical: sha(readFileSync(p.lexical(generation))),
    };
  } finally {
    await services.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Differences between two digests (empty when the same): structure exactly, vectors within `tolerance`. */
export function compareDigests(expected: IndexDigest, actual: IndexDigest, tolerance = 1e-4): string[] {
  const out: string[] = [];
  const close = (a: number[], b: number[] | undefined) => b !== undefined && a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) <= tolerance);
  for (const rel of new Set([...Object.keys(expected.files), ...Object.keys(actual.files)])) {
    const e = expected.files[rel];
    const a = actual.files[rel];
    if (!e || !a) {
      out.push(`${rel}: ${e ? 'missing from the new index' : 'not in the reference index'}`);
      continue;
    }
    if (e.entry !== a.entry) out.push(`${rel}: manifest entry differs`);
    if (!e.doc || !a.doc) {
      if (e.doc !== a.doc) out.push(`${rel}: document ${e.doc ? 'missing' : 'unexpected'}`);
      continue;
    }
    if (e.doc.structure !== a.doc.structure) out.push(`${rel}: document structure differs (${e.doc.regions} → ${a.doc.regions} regions, ${e.doc.semanticEdges} → ${a.doc.semanticEdges} semantic edges)`);
    if (e.doc.elements !== a.doc.elements) out.push(`${rel}: element index differs`);
    for (const [id, v] of Object.entries(e.doc.items)) if (!close(v, a.doc.items[id])) out.push(`${rel}: item vector of ${id} differs (${JSON.stringify(v)} → ${JSON.stringify(a.doc.items[id])})`);
    if (!close(e.doc.nodes, a.doc.nodes)) out.push(`${rel}: node vectors differ (${JSON.stringify(e.doc.nodes)} → ${JSON.stringify(a.doc.nodes)})`);
  }
  if (JSON.stringify(expected.errors) !== JSON.stringify(actual.errors)) out.push(`errors differ: ${JSON.stringify(expected.errors)} → ${JSON.stringify(actual.errors)}`);
  if (expected.lexical !== actual.lexical) out.push('the BM25 file differs');
  return out;
}
