// Lexical node scores: the leaves' terms are kept with their regions between questions; a later
// question over the same regions scores exactly as over fresh copies of them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Item, RegionNode } from '../../../src/contracts/region';
import { lexicalScores } from '../../../src/core/compress/hybridScore';

function item(id: string, sentences: string[]): Item {
  const leaf = (text: string, i: number): RegionNode => ({ id: `${id}/${i}`, kind: 'sentence', modality: 'text', text, anchor: { file: `${id}.md` }, children: [] });
  const root: RegionNode = { id, kind: 'paragraph', modality: 'text', text: sentences.join(' '), anchor: { file: `${id}.md` }, children: sentences.map(leaf) };
  return { id, file: `${id}.md`, title: id, modality: 'text', root };
}

const items = [
  item('tesla', ['Tesla died in New York in 1943.', 'His eulogy was given by the mayor, Fiorello La Guardia.']),
  item('edison', ['Edison founded a laboratory in Menlo Park.', 'He died in 1931.']),
];

describe('lexical node scores', () => {
  it('score a later question over the same regions exactly as over fresh copies', () => {
    for (const model of ['coverage', 'bm25'] as const) {
      for (const q of ['Who gave the eulogy for Tesla?', 'Where did Edison found his laboratory?']) {
        const fresh = structuredClone(items);
        const again = lexicalScores(q, items, model);
        assert.deepEqual(again, lexicalScores(q, fresh, model), `${model}: ${q}`);
        assert.ok([...again.values()].some((x) => x > 0), `${model}: ${q} matches something`);
      }
    }
    // A leaf with one of the question's terms scores above one with none; the item holding both, above either.
    const s = lexicalScores('Who gave the eulogy for Tesla?', items, 'coverage');
    assert.ok(s.get('tesla/1')! > s.get('edison/0')!);
    assert.ok(s.get('tesla')! > s.get('tesla/1')!);
  });
});
