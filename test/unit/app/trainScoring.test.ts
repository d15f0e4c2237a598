// `canopy train` and the Train command also fit the retrieval fusion and the CANOPY rule's
// node-score weights on the run's own split of the gold annotations (issue 17): on a fixture
// workspace whose questions name rare words of one sentence, the fit changes both and the
// held-back figures with them; what is better on the held-back questions is written into the
// index's retrieval profile and the next question uses it (the trace records it); a second run,
// whose fit is no better than what is now in use, adopts nothing and leaves the profile as it is.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { annotationsPath, AnnotationStore, makeAnnotation } from '../../../src/core/annotate/store';
import { BUILTIN_PROFILE, PROFILE_FILE, readProfile, retrievalRecord, writeProfile } from '../../../src/core/retrieve/profile';
import { openServices, type TestServices } from '../../helpers/services';

/** The trace's retrieval record without the topic compass's reason, which must say the compass is off for this paragraph-sized demo index. */
function fusionOf(r: { topicsReason?: string }): object {
  const { topicsReason, ...rest } = r;
  assert.match(topicsReason ?? '', /^off by default: this index's items are paragraph-sized/);
  return rest;
}


const stations = ['Harlow', 'Quenby', 'Tarrant', 'Ossory', 'Bexwell', 'Marchmont', 'Kellbrook', 'Dunmere', 'Ashgrove', 'Penhallow', 'Ravensby', 'Wexcombe'];
const engineers = ['Ilse Varga', 'Tomas Reyle', 'Nadia Okoro', 'Piet Brand', 'Ruth Calder', 'Omar Saleh', 'Greta Lund', 'Hugo Marr', 'Ada Finch', 'Leon Voss', 'Mira Stone', 'Cyril Dane'];
const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** One station report: seven sentences, the sixth the gold one. */
function report(i: number): { text: string; gold: string; question: string } {
  const name = stations[i]!;
  const code = `QX-${100 + 17 * i}`;
  const gold = `The ${code} sluice valve at ${name} was replaced by engineer ${engineers[i]} after the ${months[i]} flood.`;
  const sentences = [
    `${name} pumping station sits on the lower river and was opened many decades ago.`,
    'The staff keep daily logs of the weather, the rainfall and the water level.',
    'Visitors often come in summer to walk along the banks and watch the birds.',
    'The committee meets every second month to review the budget and the rota.',
    'Old photographs of the station and its first crew hang in the entrance hall.',
    gold,
    'Parking is free for members on weekends and on public holidays.',
  ];
  return { text: `# ${name} station report\n\n${sentences.join(' ')}\n`, gold, question: `Who replaced the ${code} sluice valve at ${name} after the ${months[i]} flood?` };
}

function capture(cwd: string): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), isTTY: false, env: {}, cwd };
}

describe('canopy train fits the fusion and the node-score weights', () => {
  let dir: string;
  let folder: string;
  let indexDir: string;
  let ws: TestServices;
  const questions: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'canopy-train-scoring-'));
    folder = join(dir, 'ws');
    indexDir = join(dir, 'index');
    mkdirSync(join(folder, 'reports'), { recursive: true });
    const annotations = [];
    for (let i = 0; i < stations.length; i++) {
      const r = report(i);
      const file = `reports/${stations[i]!.toLowerCase()}.md`;
      writeFileSync(join(folder, file), r.text);
      const start = r.text.indexOf(r.gold);
      annotations.push(makeAnnotation({ question: r.question, anchor: { file, charStart: start, charEnd: start + r.gold.length }, text: r.gold, source: 'editor' }));
      questions.push(r.question);
    }
    await new AnnotationStore(annotationsPath(folder)).add(annotations);
    ws = openServices({ root: folder, indexDir });
    await ws.index.index(ws.settings);
  });
  after(async () => {
    await ws?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const train = () =>
    ws.training.train(ws.settings, {
      annotationsFile: annotationsPath(folder),
      outDir: join(dir, 'adapters'),
      holdout: 0.25,
      selection: 'loss',
      train: { seed: 1, rank: 4, epochs: 2, learningRate: 0.02, batchSize: 4 },
    });

  it('fits both on the training questions, adopts what is better on the held-back ones, and the next question uses it', async () => {
    const { encoder } = await ws.embeddings.load();
    // A profile tuned for the fusion alone (canopy tune) keeps the built-in encoder's node score.
    const tuned = { format: 'canopy.retrieval-profile', version: 1, encoder: encoder.id, fusion: { kind: 'rrf', rrfK: 60 }, fittedOn: 'an earlier tune' } as const;
    await writeProfile(join(indexDir, PROFILE_FILE), tuned);
    const inherited = await ws.ask.ask(questions[0]!, ws.settings);
    assert.deepEqual(inherited.trace.settings.nodeScore, BUILTIN_PROFILE.nodeScore);
    assert.equal(inherited.trace.settings.retrieval.fusion, 'rrf');
    // In use before: the design's equal-weight RRF (a profile tuned earlier), and the dense cosine alone.
    await writeProfile(join(indexDir, PROFILE_FILE), { ...tuned, nodeScore: { dense: 1, lexical: 0 } });
    const before = await ws.ask.ask(questions[0]!, ws.settings);
    assert.equal(before.trace.settings.nodeScore, undefined);
    assert.equal(before.trace.settings.retrieval.fusion, 'rrf');

    const { scoring, report, ask, checkpoint } = await train();
    assert.ok(scoring && ask);
    assert.equal(scoring.nodeScore.heldBack!.after.questions, report.before.questions, 'the same held-back questions as the adapter report');
    // Fusion: fitted on 9 questions, measured on the 3 held back, better there than RRF.
    const f = scoring.fusion;
    assert.deepEqual(f.questions, { train: 9, heldBack: 3, unjudged: 0 });
    assert.deepEqual(f.before, { kind: 'rrf', rrfK: 60 });
    assert.equal(f.after!.kind, 'linear');
    assert.ok(f.heldBack!.after > f.heldBack!.before, JSON.stringify(f.heldBack));
    assert.equal(f.adopted, true, f.reason);
    // The ask's configuration (issue 36): measured as an ask compresses — the rank gate keeping
    // each station's one-paragraph report whole — the refinement's decisions are all wrong; the
    // fit refines every item (no whole size) with the adapter, and is better on the held-back questions.
    assert.match(ask.describe.before, /rank gate 0\.3 \(at least 4 items; items ≤ 800 characters whole\), glimpse 1; node score dense cosine alone/);
    const h = ask.heldBack!;
    assert.ok(h.after.decisionAccuracy > h.before.decisionAccuracy, `${h.before.decisionAccuracy} → ${h.after.decisionAccuracy}`);
    assert.ok(h.after.evidenceTokens < h.before.evidenceTokens, `${h.before.evidenceTokens} → ${h.after.evidenceTokens}`);
    assert.ok(h.after.goldRecall >= h.before.goldRecall);
    assert.equal(ask.adopted, true, ask.reason);
    assert.ok(h.plain.before.questions === 3 && h.plain.after.questions === 3, "the plain rule's figures beside, on the same questions");
    assert.equal(checkpoint !== undefined, ask.blend > 0, 'a checkpoint exactly when the adapter takes part');
    const g = scoring.gate!;
    assert.deepEqual(g.before, { items: 0.3, minItems: 4, wholeBelow: 800 });
    assert.equal(g.after.wholeBelow, 0);
    assert.equal(g.adopted, true);
    // The node score is the one the ask's fit chose (here: the one in use), measured the ask's way.
    const n = scoring.nodeScore;
    assert.deepEqual(n.before, { dense: 1, lexical: 0 });
    assert.deepEqual(n.heldBack, { before: h.before, after: h.after });

    // One place: the index's retrieval profile holds both, for this encoder.
    const profile = (await readProfile(join(indexDir, PROFILE_FILE)))!;
    assert.equal(scoring.profile!.file, join(indexDir, PROFILE_FILE));
    assert.equal(profile.encoder, encoder.id);
    assert.deepEqual(profile.fusion, f.after);
    assert.deepEqual(profile.nodeScore ?? { dense: 1, lexical: 0 }, n.after);
    assert.deepEqual(profile.gate, g.after);
    assert.match(profile.gateFittedOn!, /canopy train .*held back 3, the ask's configuration: gold recall/);

    // The next question retrieves and compresses with them, and its trace says so.
    const { trace, warnings } = await ws.ask.ask(questions[0]!, ws.settings);
    assert.deepEqual(warnings, []);
    assert.deepEqual(fusionOf(trace.settings.retrieval), retrievalRecord({ dense: true, bm25: true, fusion: f.after! }, false));
    assert.deepEqual(trace.settings.compressor, { name: 'canopy', items: 0.3, minItems: 4, glimpse: 1 }, 'the fitted gate: no item kept whole for its size');
    // A user's own gate settings win over the fitted gate.
    const own = (await ws.ask.ask(questions[0]!, { ...ws.settings, compressorMinItems: 3 })).trace;
    assert.deepEqual(own.settings.compressor, { name: 'canopy', items: 0.3, minItems: 3, wholeBelow: 800, glimpse: 1 });
    // A request's own weights still win over the profile's.
    const dense = (await ws.ask.ask(questions[0]!, ws.settings, { nodeScore: { dense: 1, lexical: 0 } })).trace;
    assert.equal(dense.settings.nodeScore, undefined);
  });

  it('a fit that is not better on the held-back questions is not adopted; the profile stays as it was (canopy train)', async () => {
    const file = join(indexDir, PROFILE_FILE);
    const bytes = readFileSync(file, 'utf8');
    const io = capture(folder);
    const code = await main(['train', '--annotations', annotationsPath(folder), '--index', indexDir, '--out', join(dir, 'adapters'), '--holdout', '0.25', '--select', 'loss', '--epochs', '2', '--rank', '4'], io);
    assert.equal(code, 0, io.stderr.join('\n'));
    const out = io.stdout.join('\n');
    assert.match(out, /retrieval fusion \(9 training, 3 held-back questions judged over the index\):/);
    assert.match(out, /kept the fusion in use — /);
    assert.match(out, /node scores \(CANOPY rule, \d+ weightings tried on the training questions\):/);
    assert.match(out, /kept the weights in use — /);
    assert.doesNotMatch(out, /retrieval profile: /);
    assert.equal(readFileSync(file, 'utf8'), bytes);
    // --no-fit-scoring trains the adapter only.
    const io2 = capture(folder);
    assert.equal(await main(['train', '--annotations', annotationsPath(folder), '--index', indexDir, '--out', join(dir, 'adapters'), '--select', 'loss', '--epochs', '1', '--rank', '4', '--no-fit-scoring', '--json'], io2), 0, io2.stderr.join('\n'));
    assert.equal((JSON.parse(io2.stdout.join('')) as { scoring?: unknown }).scoring, undefined);
  });

  it('canopy tune refits the fusion and keeps the node-score weights canopy train fitted', async () => {
    const before = (await readProfile(join(indexDir, PROFILE_FILE)))!;
    const io = capture(folder);
    assert.equal(await main(['tune', '--dir', folder, '--index', indexDir], io), 0, io.stderr.join('\n'));
    const after = (await readProfile(join(indexDir, PROFILE_FILE)))!;
    assert.match(after.fittedOn, /question\(s\) from/);
    assert.deepEqual(after.nodeScore, before.nodeScore);
    assert.equal(after.nodeScoreFittedOn, before.nodeScoreFittedOn);
  });

  it("the gate's item order canopy train fits goes into the profile's gate, and the next ask ranks by it (issue 36)", async () => {
    const file = join(indexDir, PROFILE_FILE);
    const profile = (await readProfile(file))!;
    const order = { bm25: 0.5, root: 1, leaf: 0.25, length: -0.1 };
    await writeProfile(file, { ...profile, gate: { items: 0.1, minItems: 2, wholeBelow: 0, order }, gateFittedOn: 'a fit with an order' });
    assert.deepEqual((await readProfile(file))!.gate?.order, order, 'the profile keeps the order');
    const { trace } = await ws.ask.ask(questions[1]!, ws.settings);
    assert.deepEqual(trace.settings.compressor, { name: 'canopy', items: 0.1, minItems: 2, glimpse: 1, itemOrder: order });
    const verdicts = trace.rounds.flatMap((r) => r.retrieved.flatMap((it) => (it.gate ? [it.gate] : [])));
    assert.ok(verdicts.length > 2, JSON.stringify(verdicts));
    assert.ok(verdicts.some((g) => /^rank 1 of \d+ by the trained order \(0\.5 × BM25 \+ 1 × root score \+ 0\.25 × best leaf score − 0\.1 × log length, each standardised within the round: -?\d+\.\d\d\)/.test(g.why)), JSON.stringify(verdicts));
    // A user's own gate settings win, and rank by BM25.
    const own = (await ws.ask.ask(questions[1]!, { ...ws.settings, compressorMinItems: 3 })).trace;
    assert.equal((own.settings.compressor as { itemOrder?: unknown }).itemOrder, undefined);
    assert.ok(own.rounds.flatMap((r) => r.retrieved).every((it) => !it.gate || !it.gate.why.includes('trained order')));
  });
});
