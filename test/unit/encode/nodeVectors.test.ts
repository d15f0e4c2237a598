// Node vectors (src/core/encode/nodeVectors.ts): only leaves and tables reach the encoder; every
// other region with children is the normalised sum of its children's vectors with groups looked
// through, so its vector is the same under any branching factor; groups are the normalised sum of
// their children.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { RegionNode } from '../../../src/contracts/region';
import { encodedText, nodeVectors, nodeVectorsOf } from '../../../src/core/encode/nodeVectors';
import { parseFile } from '../../../src/core/ingest/parseFile';

const DIM = 16;

/** A deterministic unit vector per text, recording every text it was asked for. */
function fakeEmbed() {
  const asked: string[] = [];
  const embed = async (texts: string[]) => {
    asked.push(...texts);
    return texts.map((t) => {
      const h = createHash('sha256').update(t).digest();
      const v = Float32Array.from({ length: DIM }, (_, i) => h[i]! / 255 - 0.5);
      const n = Math.hypot(...v);
      return v.map((x) => x / n);
    });
  };
  return { embed, asked };
}

function normSum(vs: Float32Array[]): Float32Array {
  const s = new Float32Array(DIM);
  for (const v of vs) for (let i = 0; i < DIM; i++) s[i] = s[i]! + v[i]!;
  const n = Math.hypot(...s);
  return s.map((x) => x / n);
}

function close(a: Float32Array, b: Float32Array, what: string): void {
  for (let i = 0; i < DIM; i++) assert.ok(Math.abs(a[i]! - b[i]!) < 1e-5, `${what}: component ${i} ${a[i]} vs ${b[i]}`);
}

function walk(n: RegionNode, out: RegionNode[] = []): RegionNode[] {
  out.push(n);
  n.children.forEach((c) => walk(c, out));
  return out;
}

const members = (n: RegionNode): RegionNode[] => n.children.flatMap((c) => (c.kind === 'group' ? members(c) : [c]));

const markdown = [
  '# Survey',
  '',
  'The north plot lost its ash trees. Dieback was recorded in spring. Crowns thinned by half. Oak was planted in autumn. The south plot was spared. Birch seedlings grew there.',
  '',
  '| plot | species | height |',
  '|---|---|---|',
  '| P1 | ash | 12 |',
  '| P2 | oak | 9 |',
  '| P3 | birch | 4 |',
  '| P4 | beech | 15 |',
  '| P5 | alder | 7 |',
  '',
].join('\n');

async function items(b: number) {
  const doc = await parseFile('survey.md', Buffer.from(markdown), { branchingFactor: b, graph: false });
  return doc.items;
}

describe('node vectors', () => {
  it('encodes only the leaves (a row with its header) and the tables, each once', async () => {
    const [item] = await items(2);
    const { embed, asked } = fakeEmbed();
    const vectors = await nodeVectors(item!.root, embed);
    const encoded = walk(item!.root).filter((n) => n.children.length === 0 || n.kind === 'table');
    assert.deepEqual(asked, encoded.map(encodedText));
    assert.ok(asked.some((t) => t.startsWith('plot | species | height\n')), 'rows carry their header');
    const table = walk(item!.root).find((n) => n.kind === 'table')!;
    assert.ok(asked.includes(encodedText(table)), 'the table is encoded from its own text');
    assert.ok(!walk(item!.root).some((n) => n.kind === 'paragraph' && asked.includes(n.text)), 'a paragraph of several sentences is not');
    assert.equal(vectors.size, walk(item!.root).length, 'every node has a vector');
  });

  it('derives other regions from their real children and groups from their direct children', async () => {
    const [item] = await items(2);
    const { embed } = fakeEmbed();
    const v = await nodeVectors(item!.root, embed);
    let groups = 0;
    let regions = 0;
    for (const n of walk(item!.root)) {
      if (n.children.length === 0) continue;
      if (n.kind === 'group') {
        groups++;
        close(v.get(n.id)!, normSum(n.children.map((c) => v.get(c.id)!)), n.id);
      } else if (n.kind === 'table') {
        close(v.get(n.id)!, (await fakeEmbed().embed([encodedText(n)]))[0]!, n.id);
      } else {
        regions++;
        close(v.get(n.id)!, normSum(members(n).map((c) => v.get(c.id)!)), n.id);
      }
      let norm = 0;
      for (const x of v.get(n.id)!) norm += x * x;
      assert.ok(Math.abs(norm - 1) < 1e-5, `${n.id} is unit length`);
    }
    assert.ok(groups > 0 && regions >= 3, `groups ${groups}, regions ${regions}`);
  });

  it('gives a real region the same vector under every branching factor (replay re-groups on this)', async () => {
    const byText = new Map<string, Float32Array>();
    for (const b of [2, 3, 4]) {
      const [item] = await items(b);
      const v = await nodeVectors(item!.root, fakeEmbed().embed);
      for (const n of walk(item!.root)) {
        if (n.kind === 'group') continue;
        const key = `${n.kind}:${n.text}`;
        const seen = byText.get(key);
        if (seen) close(v.get(n.id)!, seen, `B=${b} ${n.kind}`);
        else byText.set(key, v.get(n.id)!);
      }
    }
    assert.ok([...byText.keys()].some((k) => k.startsWith('paragraph:')) && [...byText.keys()].some((k) => k.startsWith('table:')));
  });

  it('gives a sub-region the vector it has inside its item (the controller scores elements alone)', async () => {
    const [item] = await items(2);
    const whole = await nodeVectors(item!.root, fakeEmbed().embed);
    const table = walk(item!.root).find((n) => n.kind === 'table')!;
    const alone = await nodeVectors(table, fakeEmbed().embed);
    for (const n of walk(table)) close(alone.get(n.id)!, whole.get(n.id)!, n.id);
  });

  it('encodes several trees in calls of a few hundred leaves, reporting progress', async () => {
    const many = `# Many\n\n${Array.from({ length: 700 }, (_, i) => `Sentence number ${i} is here.`).join(' ')}\n`;
    const doc = await parseFile('many.md', Buffer.from(many), { graph: false, itemMaxWords: 400 });
    assert.ok(doc.items.length > 1);
    const { embed, asked } = fakeEmbed();
    const calls: number[] = [];
    const progress: Array<[number, number]> = [];
    const counting = async (texts: string[]) => {
      calls.push(texts.length);
      return embed(texts);
    };
    const v = await nodeVectorsOf(doc.items.map((it) => it.root), counting, undefined, (done, total) => progress.push([done, total]));
    const leaves = doc.items.flatMap((it) => walk(it.root).filter((n) => n.children.length === 0 || n.kind === 'table'));
    assert.equal(asked.length, leaves.length);
    assert.ok(calls.length > 1 && calls.every((c) => c <= 256), `calls ${calls.join(',')}`);
    assert.deepEqual(progress[progress.length - 1], [leaves.length, leaves.length]);
    assert.ok(progress.every(([d], i) => i === 0 || d > progress[i - 1]![0]));
    for (const it of doc.items) close(v.get(it.root.id)!, (await nodeVectors(it.root, fakeEmbed().embed)).get(it.root.id)!, it.id);
  });
});
