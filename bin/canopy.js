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
require(bundle).main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`canopy: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  },
);
