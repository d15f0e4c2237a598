// Test files that scripts/test.mjs may run together in one shared process (a few batches instead
// of a process each: start-up, tsx and the imports cost ~0.4 s of CPU per file here, and these
// files run in a second or two). A file is listed by hand, never found by a heuristic, and only
// when it is independent by construction: no top-level before/after/beforeEach/afterEach, no
// writes to process.env, no process.chdir, no process.on/once or exit codes, no node:test `mock`
// outside a test's own `t.mock`, no fault injection or other module-level switch (e.g.
// injectWriteFault), no globals it assigns, and nothing it needs fresh from a module's state.
// scripts/test.mjs refuses to start when a listed file is missing or shows one of these in its
// source (sharedProcessProblems below): rename or move a file here too, and when a file gains a
// hook or an environment variable, take it off the list instead of working around the check.
export const sharedProcessFiles = [
  'test/unit/annotate/importGold.test.ts',
  'test/unit/annotate/preferences.test.ts',
  'test/unit/annotate/prunePairs.test.ts',
  'test/unit/annotate/relocate.test.ts',
  'test/unit/app/latestOnly.test.ts',
  'test/unit/app/traceStore.test.ts',
  'test/unit/cli/lookAhead.test.ts',
  'test/unit/compress/itemGate.test.ts',
  'test/unit/compress/projection.test.ts',
  'test/unit/compress/tokens.test.ts',
  'test/unit/controller/controller.test.ts',
  'test/unit/controller/docs.test.ts',
  'test/unit/controller/llmEvaluator.test.ts',
  'test/unit/controller/ruleEvaluator.test.ts',
  'test/unit/controller/state.test.ts',
  'test/unit/controller/stats.test.ts',
  'test/unit/controller/subgraph.test.ts',
  'test/unit/critic/ruleCritic.test.ts',
  'test/unit/encode/benchEncode.test.ts',
  'test/unit/encode/cache.test.ts',
  'test/unit/encode/download.test.ts',
  'test/unit/encode/encoder.test.ts',
  'test/unit/encode/metrics.test.ts',
  'test/unit/encode/nodeVectors.test.ts',
  'test/unit/encode/onnxFolderEncoder.test.ts',
  'test/unit/encode/unigram.test.ts',
  'test/unit/engine/controllerPipeline.test.ts',
  'test/unit/engine/pipeline.test.ts',
  'test/unit/engine/probe.test.ts',
  'test/unit/eval/annotations.test.ts',
  'test/unit/eval/datasets.test.ts',
  'test/unit/eval/errors.test.ts',
  'test/unit/eval/plots.test.ts',
  'test/unit/extension/agentManifest.test.ts',
  'test/unit/extension/goldModel.test.ts',
  'test/unit/extension/inspectorController.test.ts',
  'test/unit/extension/trainingReport.test.ts',
  'test/unit/index/bm25.test.ts',
  'test/unit/ingest/badInput.test.ts',
  'test/unit/ingest/delimited.test.ts',
  'test/unit/ingest/graph.test.ts',
  'test/unit/ingest/html.test.ts',
  'test/unit/ingest/json.test.ts',
  'test/unit/ingest/notebook.test.ts',
  'test/unit/ingest/plainText.test.ts',
  'test/unit/ingest/sentences.test.ts',
  'test/unit/ingest/subtitles.test.ts',
  'test/unit/llm/docs.test.ts',
  'test/unit/llm/jsonReply.test.ts',
  'test/unit/llm/readerInput.test.ts',
  'test/unit/protocol.test.ts',
  'test/unit/read/extractiveReader.test.ts',
  'test/unit/retrieve/fitFusion.test.ts',
  'test/unit/retrieve/fusion.test.ts',
  'test/unit/retrieve/profile.test.ts',
  'test/unit/settings.test.ts',
  'test/unit/text/question.test.ts',
  'test/unit/topics/topics.test.ts',
  'test/unit/train/crossValidate.test.ts',
  'test/unit/train/report.test.ts',
  'test/unit/train/run.test.ts',
  'test/unit/train/scoringFit.test.ts',
  'test/unit/train/trainer.test.ts',
  'test/unit/webview/decision.test.ts',
  'test/unit/webview/model.test.ts',
  'test/unit/webview/text.test.ts',
  // Heavier, still self-contained: the CLI run in-process through main(args, io) with its own
  // io, env and cwd; servers on port 0 that the file closes; the built-in model checked once.
  'test/unit/annotate/goldCli.test.ts',
  'test/unit/cli/traceExport.test.ts',
  'test/unit/cliDefects.test.ts',
  'test/unit/encode/conversion.test.ts',
  'test/unit/encode/useLiteEncoder.test.ts',
  'test/unit/eval/adapter.test.ts',
  'test/unit/eval/configs.test.ts',
  'test/unit/eval/financebench.test.ts',
  'test/unit/eval/metrics.test.ts',
  'test/unit/eval/topicsAblation.test.ts',
  'test/unit/index/corpusIndexLoads.test.ts',
  'test/unit/index/elementIndex.test.ts',
  'test/unit/ingest/hierarchy.test.ts',
  'test/unit/llm/llmReader.test.ts',
  'test/unit/security/protocolFuzz.test.ts',
  // Parsers and help text: pure functions of their input (parserFuzz reads CANOPY_FUZZ_RUNS only).
  'test/unit/cli/help.test.ts',
  'test/unit/ingest/markdown.test.ts',
  'test/unit/ingest/pdf.test.ts',
  'test/unit/security/parserFuzz.test.ts',
  // The services over a real index (openServices, the built-in encoder), the CLI in-process, the
  // eval harness and its vectra peer, the trace exporter against its loopback receivers (port 0,
  // closed by the file): each file ran alone for ~1.7 s of CPU in imports (the app
  // stack, zod, onnxruntime) before its first test; none waits on timers or a child process.
  'test/unit/agent/operations.test.ts',
  'test/unit/app/adapterWiring.test.ts',
  'test/unit/app/indexStores.test.ts',
  'test/unit/app/pageImages.test.ts',
  'test/unit/app/settingsPerRequest.test.ts',
  'test/unit/app/trainingService.test.ts',
  'test/unit/app/trainScoring.test.ts',
  'test/unit/app/tune.test.ts',
  'test/unit/cli.test.ts',
  'test/unit/controller/statementPages.test.ts',
  'test/unit/engine/replay.test.ts',
  'test/unit/eval/harness.test.ts',
  // Not test/unit/eval/peer.test.ts: its many-BM25-queries case reloads wink's language model
  // (which re-stringifies the model each time) and ran 7.8 s alone but 52–95 s inside a batch,
  // whose heap the other files had grown — the whole suite's last straggler.
  'test/unit/export/openInference.test.ts',
  'test/unit/extension/chatHandler.test.ts',
  'test/unit/extension/questions.test.ts',
  'test/unit/index/localStore.test.ts',
  'test/unit/ingest/largeInputs.test.ts',
  'test/unit/ingest/progressAndCap.test.ts',
  'test/unit/llm/llmCritic.test.ts',
  'test/unit/llm/llmRouter.test.ts',
  'test/unit/llm/pageImages.test.ts',
  'test/unit/profiles/filingRows.test.ts',
  'test/unit/profiles/filingCues.test.ts',
  'test/unit/judge/linearModel.test.ts',
  'test/unit/judge/readerFeatures.test.ts',
  'test/unit/security/workspaceTrust.test.ts',
  'test/unit/topics/cli.test.ts',
  'test/unit/topics/wiring.test.ts',
];

// Webview files that may share a process and its one browser (test/webview/harness.ts
// shareBrowser): the same rules as above; each opens its pages in fresh browser contexts and
// closes them after its tests (closeBrowser). scripts/test.mjs runs them in their own batches
// (CANOPY_TEST_SHARED_BROWSER, default 2), apart from the light files, so a light batch never
// waits behind a browser file. chromium.test.ts is not here: it sets the variables that choose
// the browser.
export const sharedBrowserFiles = [
  'test/webview/controllerPipeline.test.ts',
  'test/webview/explain.test.ts',
  'test/webview/inspector.test.ts',
  'test/webview/topics.test.ts',
  'test/webview/traces.test.ts',
  'test/webview/training.test.ts',
  'test/webview/xss.test.ts',
  'test/webview/xssMutations.test.ts',
];

/** What keeps `source` (a listed test file's text) from sharing a process; empty when nothing. */
export function sharedProcessProblems(source) {
  const checks = [
    [/^(before|after|beforeEach|afterEach)\s*\(/m, 'a top-level hook (it would apply to every file of the batch)'],
    [/process\.env\s*(\.\s*\w+|\[[^\]]+\])\s*(=(?!=)|\+\+|--|[-+*/|&?]=)|delete\s+process\.env|Object\.assign\(\s*process\.env/, 'a write to process.env'],
    [/process\.chdir\s*\(/, 'process.chdir'],
    [/process\.(on|once|off|addListener|prependListener|removeListener|removeAllListeners)\s*\(/, 'a process event listener'],
    [/process\.(exit|exitCode|abort)\b/, 'process.exit / exitCode'],
    [/(^|[^.\w])mock\s*\.\s*(fn|method|getter|setter|timers|module|reset|restoreAll)\b/m, "node:test's global mock (use t.mock)"],
    [/globalThis\s*(\.\s*\w+|\[[^\]]+\])\s*=(?!=)/, 'an assignment to a global'],
    [/injectWriteFault\s*\(/, 'fault injection'],
  ];
  return checks.filter(([re]) => re.test(source)).map(([, why]) => why);
}
