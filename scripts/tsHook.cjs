// The TypeScript hook the test processes load (`node --require scripts/tsHook.cjs`): tsx's
// CommonJS hook, for this repository's own files only. tsx's `.js` handler reads every JavaScript
// file a process requires, dependencies included, and runs an ES-module lexer over each one that
// mentions `import` or `export` to decide whether to transform it; at start-up that lexer is its
// asm.js fallback (the WebAssembly one loads asynchronously, after the synchronous requires), and
// over playwright-core, zod, onnxruntime's and pdf.js's JavaScript it cost about 0.5 s of CPU per
// test process here. Files under node_modules go to Node's own loader instead: they are CommonJS,
// or ES modules that Node ≥ 20.19 requires natively (require(esm)), so tsx has nothing to do for
// them. Everything else (the .ts sources and tests, their resolution, source maps) is tsx's.
'use strict';
const Module = require('node:module');
const { sep } = require('node:path');

const nodeJs = Module._extensions['.js'];
require('tsx/cjs');
const tsxJs = Module._extensions['.js'];
const dependency = `${sep}node_modules${sep}`;

if (tsxJs !== nodeJs) {
  Module._extensions['.js'] = function loadJs(module, filename) {
    return (filename.includes(dependency) ? nodeJs : tsxJs).call(this, module, filename);
  };
}
