// `canopy index --topics`, `canopy topics fit|train` and `canopy ask --topics` end to end with the
// built-in encoder: the bank is fitted with the index, the scorer trains from qrels (seeded,
// held-back split reported), from synthetic queries, and from an LLM teacher (a loopback
// OpenAI-compatible server speaking the real wire protocol), and the answer's trace carries the
// compass record.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { formatAnnotation } from '../../../src/eval/annotations';
import { paths } from '../../../src/core/index/layout';
import type { TopicScorerCheckpoint } from '../../../src/core/topics/indexTopics';
import { startOpenAiServer, type OpenAiTestServer } from '../../helpers/openaiServer';
import { builtinModelDir } from '../encode/support/builtinModel';

const subjects: Record<string, string[]> = {
  trees: ['oak', 'ash', 'beech', 'birch', 'alder', 'willow'],
  rivers: ['flood', 'gauge', 'bank', 'current', 'sediment', 'weir'],
  birds: ['owl', 'heron', 'wren', 'kestrel', 'swift', 'finch'],
};

function capture(env: Record<string, string> = {}): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env, cwd: process.cwd() };
}

describe('canopy topics', () => {
  let root: string;
  let data: string;
  let llm: OpenAiTestServer;
  const checkpoint = () => JSON.parse(readFileSync(paths(join(root, '.canopy', 'index')).topicScorer, 'utf8')) as TopicScorerCheckpoint;

  before(async () => {
    builtinModelDir(); // the CLI loads models/use-lite
    root = mkdtempSync(join(tmpdir(), 'canopy-topics-cli-'));
    data = mkdtempSync(join(tmpdir(), 'canopy-topics-cli-data-'));
    const queries: string[] = [];
    const qrels = ['query-id\tcorpus-id\tscore'];
    for (const [s, w] of Object.entries(subjects)) {
      mkdirSync(join(root, s), { recursive: true });
      for (let n = 0; n < 6; n++) {
        writeFileSync(join(root, s, `${s}-${n}.md`), `# The ${w[n]} ${s} note\n\nThe ${w[n]} was seen near the ${w[(n + 1) % 6]} on day ${n}. Later the ${w[(n + 2) % 6]} and the ${w[n]} met again.\n`);
        queries.push(JSON.stringify({ _id: `${s}${n}`, text: `Where was the ${w[n]} seen near the ${w[(n + 1) % 6]}?` }));
        qrels.push(`${s}${n}\t${s}-${n}\t1`);
      }
    }
    writeFileSync(join(data, 'queries.jsonl'), `${queries.join('\n')}\n`);
    writeFileSync(join(data, 'qrels.tsv'), `${qrels.join('\n')}\n`);
    llm = await startOpenAiServer();
  });
  after(async () => {
    await llm?.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it('index --topics fits the bank and trains a first scorer from the documents; topics fit --refit --k refits', async () => {
    const io = capture();
    assert.equal(await main(['index', root, '--topics', '--json'], io), 0, io.stderr.join('\n'));
    const summary = JSON.parse(io.stdout.join('\n')) as { generation: number; topics?: { action: string; k: number; entries: number } };
    assert.equal(summary.topics?.action, 'fit');
    assert.equal(summary.topics?.entries, 18);
    assert.equal(checkpoint().training.source, 'synthetic');
    const fit = capture();
    assert.equal(await main(['topics', 'fit', '--dir', root, '--refit', '--k', '3'], fit), 0, fit.stderr.join('\n'));
    assert.match(fit.stdout[0]!, /^topics: K = 3 over 18 items, generation \d+/);
    assert.equal(fit.stdout.length, 4, 'one label line per topic');
  });

  it('topics train --qrels: maps corpus ids to items, holds back a seeded share, reports it, and is deterministic', async () => {
    const args = ['topics', 'train', '--dir', root, '--qrels', join(data, 'qrels.tsv'), '--queries', join(data, 'queries.jsonl'), '--holdout', '0.25', '--seed', '2', '--epochs', '8', '--json'];
    const a = capture();
    assert.equal(await main(args, a), 0, a.stderr.join('\n'));
    const first = checkpoint();
    assert.equal(first.training.source, 'qrels');
    assert.equal(first.training.heldOutQueries, 5, '18 × 0.25 rounded');
    assert.ok(first.training.trainQueries >= 1 && first.training.trainQueries <= 13);
    for (const k of ['IE@1', 'IE@3', 'IE@5']) {
      const m = first.training.heldOut![k]!;
      assert.ok(m.hybrid >= 0 && m.hybrid <= 1 && m.compass >= 0 && m.compass <= 1, k);
    }
    const b = capture();
    assert.equal(await main(args, b), 0);
    assert.deepEqual(checkpoint().weights, first.weights, 'same seed, same weights');
    const bad = capture();
    assert.equal(await main(['topics', 'train', '--dir', root, '--qrels', join(data, 'qrels.tsv')], bad), 2);
    assert.match(bad.stderr.join('\n'), /--qrels needs --queries/);
    const two = capture();
    assert.equal(await main(['topics', 'train', '--dir', root, '--synthetic', '--qrels', 'x'], two), 2);
    assert.match(two.stderr.join('\n'), /exactly one of/);
  });

  it('topics train --annotations: the items whose anchors an annotation overlaps are its gold', async () => {
    const lines = Object.entries(subjects).flatMap(([s, w]) =>
      [0, 1, 2, 3].map((n) => {
        const text = readFileSync(join(root, s, `${s}-${n}.md`), 'utf8');
        const at = text.indexOf(`The ${w[n]} was seen`);
        return formatAnnotation({ question: `Where was the ${w[n]} seen?`, file: `${s}/${s}-${n}.md`, anchors: [{ file: `${s}/${s}-${n}.md`, charStart: at, charEnd: at + 20 }], text: text.slice(at, at + 20) });
      }),
    );
    writeFileSync(join(data, 'annotations.jsonl'), `${lines.join('\n')}\n`);
    const io = capture();
    assert.equal(await main(['topics', 'train', '--dir', root, '--annotations', join(data, 'annotations.jsonl'), '--holdout', '0.25', '--epochs', '4'], io), 0, io.stderr.join('\n'));
    const c = checkpoint();
    assert.equal(c.training.source, 'annotations');
    assert.equal(c.training.heldOutQueries, 3, '12 questions × 0.25');
    assert.match(io.stdout.join('\n'), /topic scorer \(annotations\): \d+ training queries, 3 held back, seed 1/);
  });

  it('topics train --synthetic n and --teacher n (the LLM writes base and expanded questions and judges candidates)', async () => {
    const s = capture();
    assert.equal(await main(['topics', 'train', '--dir', root, '--synthetic', '12', '--holdout', '0'], s), 0, s.stderr.join('\n'));
    assert.equal(checkpoint().training.source, 'synthetic');
    assert.equal(checkpoint().training.heldOutQueries, 0);
    // One reply shape answers both prompts: the generation reads base/expanded, the judge reads relevant.
    const reply = { kind: 'reply' as const, content: JSON.stringify({ base: 'Which bird was seen near the heron?', expanded: 'Which bird was seen near the heron at the river?', relevant: false }) };
    llm.script(...Array.from({ length: 8 }, () => reply));
    const t = capture({ CANOPY_LLM_BASE_URL: llm.baseUrl, CANOPY_LLM_MODEL: 'teacher-model' });
    assert.equal(await main(['topics', 'train', '--dir', root, '--teacher', '2', '--holdout', '0', '--epochs', '3'], t), 0, t.stderr.join('\n'));
    const c = checkpoint();
    assert.equal(c.training.source, 'teacher');
    assert.equal(c.training.trainQueries, 2);
    assert.match(c.training.notes!.join(' '), /teacher .*teacher-model.*2 queries, 0 failed/);
    const prompts = llm.requests.map((r) => JSON.stringify(r.body));
    assert.equal(prompts.filter((p) => p.includes('Target chunk')).length, 2, 'one generation per sampled chunk');
    assert.ok(prompts.some((p) => p.includes('Is the chunk relevant')), 'the teacher judged candidates of the expanded question');
    const noLlm = capture();
    assert.equal(await main(['topics', 'train', '--dir', root, '--teacher', '2'], noLlm), 2);
    assert.match(noLlm.stderr.join('\n'), /--teacher needs CANOPY_LLM_BASE_URL/);
  });

  it('ask --topics answers through the compass and the trace holds its record; without --topics it does not', async () => {
    const on = capture();
    assert.equal(await main(['ask', '--dir', root, '--topics', '--critic', 'none', '--json', 'Where was the heron seen?'], on), 0, on.stderr.join('\n'));
    const trace = JSON.parse(on.stdout.join('\n'));
    assert.equal(trace.settings.retrieval.topics, true);
    assert.ok(trace.rounds[0].topics.selected.length > 0);
    const off = capture();
    assert.equal(await main(['ask', '--dir', root, '--critic', 'none', '--json', 'Where was the heron seen?'], off), 0);
    assert.equal(JSON.parse(off.stdout.join('\n')).rounds[0].topics, undefined);
  });
});
