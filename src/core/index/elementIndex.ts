/**
 * The element BM25 of a parsed PDF: BM25 over the texts of its document graph's elements (every
 * graph node but pages and sections, those with text, in graph order). The MAGE controller ranks
 * pages and searches elements with it, and reads each element's distinct content terms from its
 * postings (controller/documentView.ts). It depends on the document alone, so the indexer writes
 * it beside the parsed document (`docs/<key>.elements.bm25`, the binary form of bm25.ts, with its
 * own version and checksum) and a reader attaches it to the document it reads, instead of every
 * `canopy ask` process tokenising a 150-page filing again. A document read without one (an index
 * written before, a database store) gets it built on first use, as before.
 */
import type { DocumentGraph } from '../../contracts/graph';
import type { ParsedDocument } from '../ingest/parsedDocument';
import { Bm25Index, type LexicalDoc } from './bm25';

/** The documents of the element BM25: the graph's elements with text, in graph order. */
export function elementLexicalDocs(graph: DocumentGraph): LexicalDoc[] {
  const out: LexicalDoc[] = [];
  for (const n of graph.nodes) {
    if (n.type === 'page' || n.type === 'section' || !n.text.trim()) continue;
    out.push({ id: n.id, title: '', text: n.text, modality: 'text' });
  }
  return out;
}

/** Whether the indexer writes an element index for this document: PDFs with a graph (what the controller reads). */
export function wantsElementIndex(doc: Pick<ParsedDocument, 'format' | 'graph'>): boolean {
  return doc.format === 'pdf' && doc.graph !== undefined;
}

export function buildElementIndex(graph: DocumentGraph): Bm25Index {
  return Bm25Index.build(elementLexicalDocs(graph));
}

/**
 * Reads a stored element index and checks it against its document: an Error saying what is wrong
 * when the bytes are damaged or it indexes other elements than the document's.
 */
export function readElementIndex(bytes: Uint8Array, graph: DocumentGraph): Bm25Index {
  const index = Bm25Index.fromBuffer(bytes);
  const expected = elementLexicalDocs(graph);
  if (index.size !== expected.length) throw new Error(`it indexes ${index.size} elements, the document has ${expected.length}`);
  for (let i = 0; i < expected.length; i++) {
    if (index.id(i) !== expected[i]!.id) throw new Error(`element ${i} is ${index.id(i)}, the document's is ${expected[i]!.id}`);
  }
  return index;
}

const attached = new WeakMap<object, Bm25Index>();

/** Attaches a stored element index to the document object it was read with. */
export function attachElementIndex(doc: object, index: Bm25Index): void {
  attached.set(doc, index);
}

/** The element index read with this document object, if any. */
export function attachedElementIndex(doc: object): Bm25Index | undefined {
  return attached.get(doc);
}
