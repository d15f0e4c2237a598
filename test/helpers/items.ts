/**
 * Builds small region trees by hand for pipeline tests: an item is a document of paragraphs of
 * sentences, with ids in the same `${itemId}/${path}` form ingestion produces.
 */
import type { Item, RegionNode } from '../../src/contracts/region';

export function textItem(file: string, title: string, paragraphs: string[][]): Item {
  const id = `${file}#0`;
  let offset = 0;
  const para = (sentences: string[], pi: number): RegionNode => {
    const start = offset;
    const children = sentences.map((s, si): RegionNode => {
      const node: RegionNode = {
        id: `${id}/0.${pi}.${si}`,
        kind: 'sentence',
        modality: 'text',
        text: s,
        anchor: { file, charStart: offset, charEnd: offset + s.length },
        children: [],
      };
      offset += s.length + 1;
      return node;
    });
    return { id: `${id}/0.${pi}`, kind: 'paragraph', modality: 'text', text: sentences.join(' '), anchor: { file, charStart: start, charEnd: offset - 1 }, children };
  };
  const kids = paragraphs.map(para);
  const root: RegionNode = {
    id: `${id}/0`,
    kind: 'document',
    modality: 'text',
    text: kids.map((k) => k.text).join('\n'),
    anchor: { file, charStart: 0, charEnd: offset },
    children: kids,
  };
  return { id, file, title, modality: 'text', root };
}
