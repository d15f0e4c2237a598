// `canopy tune` and the retrieval profile in the AskService (issue 17): the fusion is fitted on
// the workspace's own gold annotations or qrels and written into the index folder; the next
// question retrieves with it (the trace says so); `canopy.retrieval.fusion = rrf` brings back the
// design's equal-weight RRF; a profile file that cannot be read is a warning, never a failure.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RegionNode } from '../../../src/contracts/region';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { AnnotationStore, makeAnnotation } from '../../../src/core/annotate/store';
import { questionsFromAnnotations, tuneRetrieval } from '../../../src/core/app/tuneRetrieval';
import { resolveSettings } from '../../../src/core/config/settings';
import { BUILTIN_PROFILE, PROFILE_FILE, readProfile, retrievalRecord, writeProfile } from '../../../src/core/retrieve/profile';
import { openServices, type TestServices } from '../../helpers/services';

/** The trace's retrieval record without the topic compass's reason, which must say the compass is off for this paragraph-sized demo index. */
function fusionOf(r: { topicsReason?: string }): object {
  const { topicsReason, ...rest } = r;
  assert.match(topicsReason ?? '', /^off by default: this index's items are paragraph-sized/);
  return rest;
}


const demo = fileURLToPath(new URL('../../fixtures/demo', import.meta.url));
const question = 'Which plot lost ash trees to dieback, and what should be replanted there?';

function capture(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd: process.cwd() };
}

function leaves(n: RegionNode, out: RegionNode[] = []): RegionNode[] {
  if (n.children.length === 0) out.push(n);
  else for (const c of n.children) leaves(c, out);
  return out;
}

describe('canopy tune and the retrieval profile', () => {
  let dir: string;
  let indexDir: string;
  let ws: TestServices;
  let annotationsFile: string;
  /** The files whose first long leaf became a gold span, in order. */
  const goldFiles: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-tune-'));
    indexDir = join(dir, 'index');
    ws = openServices({ root: demo, indexDir });
    await ws.index.index(ws.settings);
    // Gold spans: up to two leaves of some length per file; each question is its leaf's opening words.
    const corpus = await ws.index.corpus(ws.settings);
    const annotations = [];
    for (const [file, entry] of Object.entries(corpus.manifest.files).sort()) {
      const item = await corpus.item(entry.items[0]!);
      for (const leaf of leaves(item.root).filter((l) => l.text.split(/\s+/).length >= 8).slice(0, 2)) {
        const q = leaf.text.split(/\s+/).slice(0, 8).join(' ');
        annotations.push(makeAnnotation({ question: q, anchor: leaf.anchor, text: leaf.text, source: 'editor' }));
        goldFiles.push(file);
      }
    }
    assert.ok(annotations.length >= 8, `${annotations.length} gold spans`);
    annotationsFile = join(dir, 'annotations.jsonl');
    await new AnnotationStore(annotationsFile).add(annotations);
  });
  after(async () => {
    await ws?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fits on the gold annotations: every question is judged, the fit is never below BM25, nothing is written on a dry run', async () => {
    const { annotations } = await new AnnotationStore(annotationsFile).read();
    const questions = questionsFromAnnotations(annotations);
    assert.equal(questions.length, goldFiles.length);
    const { encoder } = await ws.embeddings.load();
    const result = await tuneRetrieval({ corpus: await ws.index.corpus(ws.settings), indexDir, encoderId: encoder.id, embedQuery: ws.embeddings.embedQuery, questions, source: annotationsFile, dryRun: true });
    assert.equal(result.fit.questions, goldFiles.length);
    assert.deepEqual(result.unjudged, []);
    assert.ok(result.fit.ndcg >= result.fit.figures.bm25!, JSON.stringify(result.fit.figures));
    assert.equal(result.profile.encoder, encoder.id);
    assert.equal(result.file, undefined);
    assert.equal(existsSync(join(indexDir, PROFILE_FILE)), false);
  });

  it('with a holdout, fits on the other questions and reports the fusion in use and the fitted one on the held-back ones', async () => {
    const { annotations } = await new AnnotationStore(annotationsFile).read();
    const questions = questionsFromAnnotations(annotations);
    const { encoder } = await ws.embeddings.load();
    const base = { corpus: await ws.index.corpus(ws.settings), indexDir, encoderId: encoder.id, embedQuery: ws.embeddings.embedQuery, questions, source: annotationsFile, dryRun: true };
    const result = await tuneRetrieval({ ...base, holdout: 0.25, seed: 3, current: { kind: 'rrf', rrfK: 60 } });
    const held = result.heldBack!;
    assert.equal(held.questions, Math.round(0.25 * questions.length));
    assert.equal(result.fit.questions, questions.length - held.questions);
    assert.deepEqual(held.beforeFusion, { kind: 'rrf', rrfK: 60 });
    for (const v of [held.before, held.after]) assert.ok(v >= 0 && v <= 1, String(v));
    // The same seed splits the same way; a holdout that leaves too few to fit on is refused.
    assert.deepEqual((await tuneRetrieval({ ...base, holdout: 0.25, seed: 3 })).heldBack!.after, held.after);
    await assert.rejects(tuneRetrieval({ ...base, holdout: 0.9 }), /leaves \d+ to fit on; at least 5 are needed/);
  });

  it('canopy tune writes the profile, and the next question retrieves with it', async () => {
    const io = capture();
    assert.equal(await main(['tune', '--dir', demo, '--index', indexDir, '--annotations', annotationsFile], io), 0, io.stderr.join('\n'));
    assert.match(io.stdout.join('\n'), /questions: \d+ judged/);
    const profile = await readProfile(join(indexDir, PROFILE_FILE));
    assert.ok(profile);
    const { trace, warnings } = await ws.ask.ask(question, ws.settings);
    assert.deepEqual(warnings, []);
    assert.deepEqual(fusionOf(trace.settings.retrieval), retrievalRecord({ dense: true, bm25: true, fusion: profile.fusion }, false));
    // A profile unlike the built-in one is followed to the letter; one for another encoder is not used.
    await writeProfile(join(indexDir, PROFILE_FILE), { ...profile, fusion: { kind: 'linear', dense: 0.75, depth: 40 } });
    const tuned = (await ws.ask.ask(question, ws.settings)).trace;
    assert.deepEqual(fusionOf(tuned.settings.retrieval), { dense: true, bm25: true, topics: false, fusion: 'linear', denseWeight: 0.75, depth: 40 });
    await writeProfile(join(indexDir, PROFILE_FILE), { ...profile, encoder: 'another-encoder', fusion: { kind: 'linear', dense: 0.75, depth: 40 } });
    const other = (await ws.ask.ask(question, ws.settings)).trace;
    assert.deepEqual(fusionOf(other.settings.retrieval), retrievalRecord({ dense: true, bm25: true, fusion: BUILTIN_PROFILE.fusion }, false));
    rmSync(join(indexDir, PROFILE_FILE));
  });

  it('canopy.retrieval.fusion = rrf retrieves with the equal-weight RRF', async () => {
    const { trace } = await ws.ask.ask(question, resolveSettings({ retrievalFusion: 'rrf' }));
    assert.deepEqual(fusionOf(trace.settings.retrieval), { dense: true, bm25: true, topics: false, fusion: 'rrf', rrfK: 60 });
  });

  it('a profile file that is not a profile is a warning naming it; the built-in profile is used', async () => {
    writeFileSync(join(indexDir, PROFILE_FILE), '{"format": "something else"}');
    const { trace, warnings } = await ws.ask.ask(question, ws.settings);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.source, 'retrieval');
    assert.match(warnings[0]!.message, new RegExp(`${PROFILE_FILE} is not a Canopy retrieval profile`));
    assert.deepEqual(fusionOf(trace.settings.retrieval), retrievalRecord({ dense: true, bm25: true, fusion: BUILTIN_PROFILE.fusion }, false));
    rmSync(join(indexDir, PROFILE_FILE));
  });

  it('qrels: a bad line is refused naming the file and line; too few judged questions say why', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, `{"question": "a", "files": ["${goldFiles[0]}"]}\n{"question": 3}\n`);
    const io = capture();
    assert.notEqual(await main(['tune', '--dir', demo, '--index', indexDir, '--qrels', bad], io), 0);
    assert.match(io.stderr.join('\n'), /bad\.jsonl:2: needs "question"/);
    const few = join(dir, 'few.jsonl');
    writeFileSync(few, `${goldFiles.slice(0, 2).map((f) => JSON.stringify({ question: `about ${f}`, files: [f] })).join('\n')}\n{"question": "nothing", "files": ["no/such/file.md"]}\n`);
    const io2 = capture();
    assert.notEqual(await main(['tune', '--dir', demo, '--index', indexDir, '--qrels', few], io2), 0);
    assert.match(io2.stderr.join('\n'), /2 question\(s\) judge an indexed item relevant; tuning needs at least 5 \(1 judge nothing in the index/);
    assert.equal(existsSync(join(indexDir, PROFILE_FILE)), false);
  });
});
