/**
 * A pool of PDF pages (docs/topics.md, "Coarse chunks"): every page of the PDFs a dataset's
 * questions name is one retrieved item, its text the page's leaves (sentences, table rows) in
 * order, as Canopy's own PDF parser reads them (`ParsedDocumentCache`, the parsed documents the
 * FinanceBench evaluation caches). A question's gold documents are its evidence pages.
 */
import { leavesOf } from '../core/compress/baselines';
import type { ParsedDocumentCache } from './financebench';
import type { EvalQuestion, PoolDoc } from './datasets/types';

export const pageDocId = (relPath: string, page: number): string => `${relPath}#p${page}`;

export async function pdfPagePool(questions: readonly EvalQuestion[], cache: Pick<ParsedDocumentCache, 'get'>, signal?: AbortSignal): Promise<{ docs: PoolDoc[]; questions: EvalQuestion[] }> {
  const files = new Map<string, string>();
  for (const q of questions) for (const c of q.context) if (c.kind === 'file') files.set(c.relPath, c.path);
  const docs: PoolDoc[] = [];
  for (const [relPath, path] of [...files].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const parsed = await cache.get(path, relPath, signal);
    const byPage = new Map<number, string[]>();
    for (const item of parsed.items) {
      for (const leaf of leavesOf(item.root)) {
        const page = leaf.anchor.page;
        const text = leaf.text.trim();
        if (page === undefined || text.length === 0) continue;
        let list = byPage.get(page);
        if (!list) byPage.set(page, (list = []));
        list.push(text);
      }
    }
    const name = parsed.title ?? relPath;
    for (const page of [...byPage.keys()].sort((a, b) => a - b)) {
      let text = '';
      const spans: Array<[number, number]> = [];
      for (const leaf of byPage.get(page)!) {
        if (text.length > 0) text += '\n';
        spans.push([text.length, text.length + leaf.length]);
        text += leaf;
      }
      docs.push({ id: pageDocId(relPath, page), title: `${name}, page ${page + 1}`, text, spans });
    }
  }
  const known = new Set(docs.map((d) => d.id));
  const out = questions.map((q) => {
    const file = q.context.find((c) => c.kind === 'file');
    const goldDocs = new Map<string, number>();
    if (file && file.kind === 'file') for (const g of q.gold) if (g.granularity === 'page' && known.has(pageDocId(file.relPath, g.index))) goldDocs.set(pageDocId(file.relPath, g.index), 1);
    return { ...q, goldDocs };
  });
  return { docs, questions: out };
}
