/**
 * Test hooks for the parse worker (ParsePool's `preload`): this module is loaded inside each
 * worker before the parser's own message listener, so it sees each parse request first and can
 * misbehave the way a hostile file or a broken parser could, by the file's base name:
 *   loop.*   spin in a synchronous loop that never returns to the event loop
 *   crash.*  let the real parse start, then end the worker thread 200 ms later (exit code 9)
 *   hog.*    allocate until the heap limit stops the worker
 * Plain CommonJS, so that the bundled worker (dist/parseWorker.js, which runs without tsx) can
 * load it as well as the worker from source.
 */
'use strict';
const { parentPort } = require('node:worker_threads');

parentPort?.on('message', (msg) => {
  if (msg?.type !== 'parse' || typeof msg.file !== 'string') return;
  const base = msg.file.slice(msg.file.lastIndexOf('/') + 1);
  if (base.startsWith('loop.')) {
    let spins = 0;
    for (;;) spins = (spins + 1) % 1_000_003;
  }
  if (base.startsWith('crash.')) setTimeout(() => process.exit(9), 200);
  if (base.startsWith('hog.')) {
    const hog = [];
    for (;;) hog.push(new Array(100_000).fill(hog.length));
  }
});
