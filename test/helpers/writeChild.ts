/**
 * Child process for the kill -9 tests of annotation and checkpoint writes (writeKill.test.ts).
 *
 *   writeChild.ts annotations <annotations.jsonl> <first>   adds annotation first, first+1, … forever
 *       (every third one also rewrites an earlier one's text), printing "added <id>" after each add
 *       has returned — from then on it must survive any kill;
 *   writeChild.ts checkpoints <dir> <seed>                   trains a low-rank adapter with the real
 *       trainer, then saves checkpoints of it (nudged each time) forever, printing "saved <file>".
 */
import { AnnotationStore, makeAnnotation } from '../../src/core/annotate/store';
import { makeCheckpoint, saveCheckpoint } from '../../src/core/train/checkpoint';
import { seededRandom } from '../../src/core/random';
import type { TrainPair } from '../../src/core/train/lowRank';
import { trainLowRank } from '../../src/core/train/trainer';

async function annotations(file: string, first: number): Promise<never> {
  const store = new AnnotationStore(file, { lockTimeoutMs: 5_000 });
  for (let i = first; ; i++) {
    const a = makeAnnotation({
      question: `Which plot is question ${i} about?`,
      anchor: { file: `notes/plot-${i % 7}.md`, charStart: i * 3, charEnd: i * 3 + 40, startLine: i + 1 },
      text: `Plot ${i} lost ash trees to dieback in the wet summer; alder was replanted. `.repeat(3),
      context: { before: 'Survey notes. ', after: ' End of entry.' },
      source: 'editor',
      author: 'kill-test',
    });
    await store.add([a]);
    process.stdout.write(`added ${a.id}\n`);
    if (i % 3 === 0 && i > first) {
      const all = (await store.read()).annotations;
      const target = all[Math.floor(all.length / 2)];
      if (target) await store.update(target.id, { text: `${target.text.slice(0, 60)} (revised ${i})` });
    }
  }
}

function vec(rand: () => number, dim: number): Float32Array {
  const v = Float32Array.from({ length: dim }, () => rand() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

async function checkpoints(dir: string, seed: number): Promise<never> {
  const dim = 256;
  const rand = seededRandom(seed);
  const pairs: TrainPair[] = Array.from({ length: 48 }, () => {
    const q = vec(rand, dim);
    const preferred = q.map((x, i) => 0.6 * x + 0.4 * (rand() - 0.5) / Math.sqrt(dim) + (i === 0 ? 0.1 : 0));
    return { q, preferred, other: vec(rand, dim) };
  });
  const result = trainLowRank(dim, pairs.slice(0, 36), pairs.slice(36), { rank: 8, epochs: 3, seed });
  for (let round = 0; ; round++) {
    const w = result.weights;
    const nudged = { ...w, A: w.A.map((x) => x * (1 + round * 1e-3)), B: Float64Array.from(w.B) };
    const c = makeCheckpoint(nudged, {
      baseEncoderId: 'use-lite/kill-test',
      trainedOn: { questions: 12, annotations: 48, pairs: 36, validationPairs: 12 },
      metrics: { round, finalTrainLoss: result.finalTrainLoss, epochs: result.epochs },
    });
    const file = await saveCheckpoint(dir, c);
    process.stdout.write(`saved ${file}\n`);
  }
}

const [mode, target, arg] = process.argv.slice(2) as [string, string, string];
(mode === 'annotations' ? annotations(target, Number(arg)) : checkpoints(target, Number(arg))).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
