/**
 * `canopy ask "<question>"`: answers from an index with the full pipeline (hybrid retrieval,
 * CANOPY projection, critic rounds, reader) and prints the answer, its citations and what was
 * kept or dropped per item; `--json` prints the whole trace. The trace is saved either way.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { AskRequest } from '../../core/app/askService';
import { traceRetention } from '../../core/app/traceStore';
import { resolveSettings } from '../../core/config/settings';
import { checkQuestion, QUESTION_MAX } from '../../contracts/agent';
import type { Anchor } from '../../contracts/region';
import type { AskTrace, CompressorSetting, TraceNode, TraceRetrievedItem } from '../../contracts/trace';
import { type CliIO, UsageError } from '../io';
import { llmFromEnv } from '../llm';
import { cliServices, criticModelSetting, lookAheadSetting, profilesSetting, requireFolder, storeSetting } from '../runtime';
import { compressorFlagOptions, compressorFlags, compressorFlagsHelp } from '../compressorFlags';
import { exportFlagOptions, exportFlagsHelp, exporterFromFlags } from '../traceExportFlags';

export const askHelp = `Usage: canopy ask "<question>" [options]

Answer a question from the index of a folder (run "canopy index <dir>" first).

Options:
  --dir <dir>            the indexed folder (default: the current folder)
  --index <dir>          the index (default <dir>/.canopy/index); with a database store, where traces go
  --store <store>        where the index lives: local (default) or postgres://… (see canopy index --help;
                         also CANOPY_STORE)
  -k, --top-k <n>        items retrieved per round (default 10)
  --rounds <n>           most critic rounds (default 3)
  --critic <rule|none>   the no-LLM critic, or one round without a critic (default: rule,
                         or the LLM critic with --llm)
  --look-ahead           the rule critic looks at what a follow-up query would retrieve and runs
                         the round only when a new item could fill the gap (canopy.critic.lookAhead,
                         the default); --no-look-ahead: every follow-up the critic writes runs
  --no-critic-model      the rule critic's verdict alone: without it (canopy.critic.model, the default)
                         the critic model ends the rounds where the rule would ask again but the kept
                         evidence very likely holds the answer
  --no-profiles          read every document as fitting no document profile (canopy.profiles.enabled;
                         the filings profile's statement rows, line items and periods apply to
                         filings only by default)
  --llm                  use the OpenAI-compatible endpoint in CANOPY_LLM_BASE_URL / CANOPY_LLM_MODEL
                         (key: CANOPY_LLM_API_KEY or OPENAI_API_KEY) for the critic and the reader;
                         each falls back to its no-LLM twin when a call fails
  --llm-routing          also route the question (aggregate vs lookup, modalities) with the LLM
  --page-images          with --llm: send the page images and element crops of a long PDF's
                         evidence subgraph to the reader (a multimodal model)
  --compressor <c>       canopy (default; shaped by the flags below) | none | flat:<m> | threshold:<t>
${compressorFlagsHelp}
  --topics               re-rank with the topic compass (needs an index fitted with topics)
  --fusion <profile|rrf> how retrieval fuses dense and BM25: the encoder's fitted profile
                         (default; a profile from canopy tune in the index folder wins) or the
                         design's equal-weight RRF
  --controller <on|off>  the MAGE controller for PDFs of at least 8 pages (default on)
  --controller-min-pages <n>  the page threshold of the controller (default 8)
  --adapter <file>       a node-encoder adapter checkpoint (canopy train); one that cannot be
                         loaded is reported and the untrained encoder is used
  --json                 print the whole trace as JSON
${exportFlagsHelp}`;

/** The compressor flag; undefined for CANOPY, which the settings shape (rank gate, glimpse). */
export function parseCompressor(value: string | undefined): CompressorSetting | undefined {
  if (value === undefined || value === 'canopy') return undefined;
  if (value === 'none') return { name: 'none' };
  const flat = /^flat:(\d+)$/.exec(value);
  if (flat) return { name: 'flat', m: Number(flat[1]) };
  const thr = /^threshold:(-?\d*\.?\d+)$/.exec(value);
  if (thr) return { name: 'threshold', threshold: Number(thr[1]) };
  throw new UsageError(`--compressor must be canopy, none, flat:<m> or threshold:<t>, not "${value}"`);
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`);
  return n;
}

export async function runAsk(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      index: { type: 'string' },
      store: { type: 'string' },
      'top-k': { type: 'string', short: 'k' },
      rounds: { type: 'string' },
      critic: { type: 'string' },
      'look-ahead': { type: 'boolean' },
      'no-look-ahead': { type: 'boolean' },
      'no-critic-model': { type: 'boolean' },
      'no-profiles': { type: 'boolean' },
      compressor: { type: 'string' },
      controller: { type: 'string' },
      'controller-min-pages': { type: 'string' },
      json: { type: 'boolean' },
      llm: { type: 'boolean' },
      'llm-routing': { type: 'boolean' },
      'page-images': { type: 'boolean' },
      adapter: { type: 'string' },
      topics: { type: 'boolean' },
      fusion: { type: 'string' },
      ...compressorFlagOptions,
      ...exportFlagOptions,
    },
  });
  const question = positionals.join(' ').trim();
  if (!question) throw new UsageError('ask needs a question');
  // The limit every host keeps (contracts/agent.ts), said before the index is opened.
  const checked = checkQuestion(question);
  if (!checked.ok) throw new UsageError(`${checked.problem} (at most ${QUESTION_MAX.toLocaleString('en-US')}, as for the MCP server and the VS Code tools)`);
  if (values.critic !== undefined && values.critic !== 'rule' && values.critic !== 'none') throw new UsageError('--critic must be rule or none');
  if (values.controller !== undefined && values.controller !== 'on' && values.controller !== 'off') throw new UsageError('--controller must be on or off');
  const minPages = positiveInt(values['controller-min-pages'], '--controller-min-pages');
  if (minPages !== undefined && minPages < 2) throw new UsageError('--controller-min-pages must be at least 2');
  if (values.fusion !== undefined && values.fusion !== 'profile' && values.fusion !== 'rrf') throw new UsageError('--fusion must be profile or rrf');
  const topK = positiveInt(values['top-k'], '--top-k');
  const rounds = positiveInt(values.rounds, '--rounds');
  if (values['llm-routing'] && !values.llm) throw new UsageError('--llm-routing needs --llm');
  if (values['page-images'] && !values.llm) throw new UsageError('--page-images needs --llm (a multimodal model reads the images)');
  const llm = values.llm ? llmFromEnv(io.env, '--llm') : undefined;
  const exporter = exporterFromFlags(values, io);
  const compressor = parseCompressor(values.compressor);
  const canopyFlags = compressorFlags(values);
  if (compressor && (['gate-items', 'whole-below', 'min-items', 'glimpse'] as const).some((f) => values[f] !== undefined)) {
    throw new UsageError(`--gate-items, --whole-below, --min-items and --glimpse shape CANOPY; --compressor ${values.compressor} does not use them`);
  }
  const request: AskRequest = {
    ...(compressor ? { compressor } : {}),
    ...(canopyFlags.nodeScore ? { nodeScore: canopyFlags.nodeScore } : {}),
    ...(values.critic !== undefined ? { critic: values.critic as 'rule' | 'none' } : llm ? {} : { critic: 'rule' as const }),
    ...(llm ? { llm, routing: values['llm-routing'] ? ('llm' as const) : ('rule' as const) } : {}),
    ...(topK ? { topK } : {}),
    ...(rounds ? { maxRounds: rounds } : {}),
    ...(values.adapter !== undefined ? { adapter: values.adapter && path.resolve(io.cwd, values.adapter) } : {}),
    ...(values['page-images'] ? { pageImages: true } : {}),
  };
  const settings = resolveSettings({
    ...(values.controller !== undefined ? { controllerEnabled: values.controller === 'on' } : {}),
    ...(minPages !== undefined ? { controllerMinPages: minPages } : {}),
    ...(values.topics ? { topicsEnabled: true } : {}),
    ...lookAheadSetting(values['look-ahead'], values['no-look-ahead']),
    ...criticModelSetting(values['no-critic-model']),
    ...profilesSetting(values['no-profiles']),
    ...(values.fusion !== undefined ? { retrievalFusion: values.fusion } : {}),
    ...canopyFlags.settings,
    ...storeSetting(values.store, io),
  });
  const services = cliServices(requireFolder(values.dir ?? '.', io), values.index, io, false, settings.store);
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  try {
    const { trace, warnings } = await services.ask.ask(question, settings, { ...request, signal: abort.signal });
    for (const w of warnings) io.err(`warn: ${w.source}: ${w.message}`);
    const file = await services.traces.save(trace, traceRetention(settings));
    if (exporter) {
      // The answer stands whether or not the export went through; a failure is reported on stderr.
      await exporter.export(trace).then(
        ({ spans }) => io.err(`Trace exported: ${spans} spans to ${exporter.describe()}`),
        (err: Error) => io.err(`warn: ${err.message}`),
      );
    }
    if (values.json) io.out(JSON.stringify(trace));
    else printAnswer(trace, file, io);
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
    await services.close();
  }
}

/** Where a region lies, as a person reads it: pages and rows 1-based (anchors store them 0-based), lines and columns 1-based. */
export function formatAnchor(a: Anchor): string {
  if (a.page !== undefined) {
    const pages = a.pageEnd !== undefined && a.pageEnd !== a.page ? `pp.${a.page + 1}–${a.pageEnd + 1}` : `p.${a.page + 1}`;
    return `${a.file} ${pages}${a.bbox ? ` [${a.bbox.map((x) => Math.round(x)).join(',')}]` : ''}`;
  }
  if (a.timeStart !== undefined) return `${a.file} @${a.timeStart.toFixed(0)}s–${(a.timeEnd ?? a.timeStart).toFixed(0)}s`;
  if (a.startLine !== undefined) {
    const row = a.row !== undefined ? ` row ${a.row + 1}` : '';
    return `${a.file}:${a.startLine}:${(a.startColumn ?? 0) + 1}${row}`;
  }
  return a.file;
}

/**
 * "kept 3 region(s), 120/400 tokens". An item that carries the MAGE controller's evidence holds
 * regions from the whole PDF, not only from itself, so its tokens are not shown as a share of the
 * item's. Otherwise the kept regions are the item's own; tokenising them one by one can count a
 * few more than the joined item text, and the line never shows more than the item has.
 */
export function keptLine(it: Pick<TraceRetrievedItem, 'keptNodeIds' | 'tokens' | 'controller'>): string {
  const regions = `kept ${it.keptNodeIds.length} region(s)`;
  if (it.controller) return `${regions} chosen by the controller from the whole PDF, ${it.tokens.kept} tokens`;
  return `${regions}, ${Math.min(it.tokens.kept, it.tokens.whole)}/${it.tokens.whole} tokens`;
}

/**
 * What the compressor dropped of an item: "dropped N" regions below their parent, or, for an item
 * the rank gate dropped, that its kept regions are only a glimpse.
 */
export function droppedNote(it: Pick<TraceRetrievedItem, 'tree' | 'gate'>): string {
  if (it.gate && !it.gate.kept) return 'outside the rank gate (a glimpse of it)';
  return `dropped ${count(it.tree, (n) => n.decision === 'dropped-sibling' || n.decision === 'dropped-by-baseline' || n.decision === 'dropped-by-controller')}`;
}

function count(tree: TraceNode | undefined, pred: (n: TraceNode) => boolean): number {
  if (!tree) return 0;
  return (pred(tree) ? 1 : 0) + tree.children.reduce((a, c) => a + count(c, pred), 0);
}

/** Which reader answered, and why when it was not the one asked for: "LLM failed: <reason>; answered extractively". */
export function readerLabel(t: Pick<AskTrace, 'answer' | 'settings'>): string {
  if (t.answer.mode === 'llm') return 'LLM reader';
  if (t.answer.llmFailure !== undefined) return `LLM failed: ${t.answer.llmFailure.replace(/\.$/, '')}; answered extractively, quoting the best-supported evidence`;
  return t.settings.reader === 'llm' ? 'extractive, quoting the best-supported evidence' : 'extractive — no LLM configured, quoting the best-supported evidence';
}

function printAnswer(t: AskTrace, file: string, io: CliIO): void {
  const modeNote = readerLabel(t);
  io.out(`Q: ${t.question}`);
  io.out(`A (${modeNote}):`);
  io.out(`  ${t.answer.text}`);
  if (t.answer.citations.length > 0) {
    io.out('Citations:');
    for (const c of t.answer.citations) io.out(`  [${c.marker}] ${formatAnchor(c.anchor)}${c.stale ? ' (stale: from the last good version of a file that no longer parses)' : ''}`);
  }
  const staleFiles = [...new Set(t.answer.citations.filter((c) => c.stale).map((c) => c.file))];
  if (staleFiles.length > 0) io.out(`Note: ${staleFiles.join(', ')} changed and no longer ${staleFiles.length === 1 ? 'parses' : 'parse'}; the evidence quoted from ${staleFiles.length === 1 ? 'it' : 'them'} is the last good version, which may be out of date (run canopy index to see the error).`);
  const saved = t.totals.uncompressedTokens > 0 ? Math.round(100 * (1 - t.totals.evidenceTokens / t.totals.uncompressedTokens)) : 0;
  io.out(
    `Evidence: ${t.totals.items} items over ${t.rounds.length} round(s), stop: ${t.stop.reason}; ` +
      `${t.totals.evidenceTokens} of ${t.totals.uncompressedTokens} tokens kept (${saved}% fewer), ${t.totals.keptRegions} regions`,
  );
  if (t.settings.adapterId) io.out(`Node adapter: ${t.settings.adapterId}`);
  const images = t.readerInput.images ?? [];
  if (images.length) {
    const crops = images.filter((i) => i.bbox).length;
    io.out(`Page images: ${images.length - crops} page(s) and ${crops} crop(s) sent to the reader (${Math.round(images.reduce((a, i) => a + i.bytes, 0) / 1024)} KiB)`);
  }
  for (const note of t.readerInput.notes ?? []) io.out(`Note: ${note}`);
  for (const r of t.rounds) {
    io.out(`  round ${r.round}: ${r.query}`);
    const repeated = r.retrieved.filter((it) => it.repeated).length;
    for (const it of r.retrieved) {
      if (it.repeated) continue;
      io.out(`    #${it.rank + 1} ${it.file} — ${it.title}: ${keptLine(it)}; ${droppedNote(it)}${it.stale ? ' (stale: last good version)' : ''}`);
      const c = it.controller;
      if (c) {
        const opened = c.subgraph.nodes.filter((n) => n.state === 'opened').length;
        const pruned = c.subgraph.nodes.filter((n) => n.state === 'pruned').length;
        io.out(`      MAGE controller (${c.evaluator.kind}) over the whole PDF: ${c.steps.filter((s) => s.valid).length} actions, ${opened} opened, ${pruned} pruned; stop: ${c.stop.reason}`);
      }
    }
    if (repeated > 0) io.out(`    (${repeated} item(s) already in the evidence, not compressed again)`);
    if (r.critic) {
      const bridges = (r.critic.details as { bridges?: string[] } | undefined)?.bridges ?? [];
      const gaps = [...r.critic.missing, ...bridges.map((b) => `→ ${b}`)];
      io.out(`    critic (${r.critic.source}): ${r.critic.sufficient ? 'sufficient' : `not sufficient: ${gaps.slice(0, 8).join(', ') || '—'}`}`);
    }
  }
  io.out(`Trace: ${file}`);
}
