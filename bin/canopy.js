#!/usr/bin/env node
// The `canopy` command: runs the bundled CLI (build it with `npm run build`).
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const bundle = path.join(__dirname, '..', 'dist', 'cli.js');
if (!fs.existsSync(bundle)) {
  console.error(`canopy: ${bundle} is missing; run "npm run build" in ${path.dirname(__dirname)} first.`);
  process.exit(2);
}
// Exits once stdout and stderr have taken everything written to them: output to a pipe is
// written asynchronously, and exiting at once cut `canopy ask --json | …` at the pipe's 64 KiB.
const exit = (code) => process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
require(bundle).main(process.argv.slice(2)).then(exit, (err) => {
  console.error(`canopy: ${err && err.stack ? err.stack : err}`);
  exit(1);
});
