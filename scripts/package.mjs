// Builds a platform-specific VSIX: the bundles, the built-in model with its NOTICE, and from
// node_modules only what runs outside the bundles (onnxruntime-node for ONE platform, pdf.js and
// the canvas it renders page images on, for ONE platform).
// Those runtime files are staged in dist/node_modules/ (vsce never packages the top-level
// node_modules without its own dependency scan, and Node resolves dist/extension.js's requires
// there first), and removed again afterwards.
//   node scripts/package.mjs [target] [--out file]   target: linux-x64 (default: this machine),
//   linux-arm64, darwin-arm64, win32-x64. The allowlist is .vscodeignore plus the native runtime
//   of the target, written to a temporary ignore file for vsce.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const args = process.argv.slice(2);
const outFlag = args.indexOf('--out');
const out = outFlag >= 0 ? args[outFlag + 1] : 'canopy.vsix';
const target = args.find((a, i) => !a.startsWith('--') && i !== outFlag + 1) ?? `${process.platform}-${process.arch}`;
const supported = ['linux-x64', 'linux-arm64', 'darwin-arm64', 'win32-x64'];
if (!supported.includes(target)) {
  console.error(`package: no onnxruntime-node binary for ${target}; choose one of ${supported.join(', ')}`);
  process.exit(2);
}
const [platform, arch] = target.split('-');

const run = (cmd, argv) => {
  const r = spawnSync(cmd, argv, { stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run(process.execPath, ['scripts/build.mjs', '--production']);

const runtime = [
  'onnxruntime-node/package.json',
  'onnxruntime-node/LICENSE',
  'onnxruntime-node/dist',
  `onnxruntime-node/bin/napi-v6/${platform}/${arch}`,
  'onnxruntime-common/package.json',
  'onnxruntime-common/LICENSE',
  'onnxruntime-common/dist/cjs',
  'pdfjs-dist/package.json',
  'pdfjs-dist/LICENSE',
  'pdfjs-dist/legacy/build/pdf.mjs',
  'pdfjs-dist/legacy/build/pdf.worker.mjs',
  'pdfjs-dist/standard_fonts',
  // The canvas pdf.js renders on in Node: page images and crops for a multimodal reader
  // (canopy.reader.pageImages). Its native part is the target's own package, below.
  '@napi-rs/canvas/package.json',
  '@napi-rs/canvas/LICENSE',
  '@napi-rs/canvas/index.js',
  '@napi-rs/canvas/js-binding.js',
  '@napi-rs/canvas/geometry.js',
  '@napi-rs/canvas/load-image.js',
];
const canvasNative = { 'linux-x64': 'linux-x64-gnu', 'linux-arm64': 'linux-arm64-gnu', 'darwin-arm64': 'darwin-arm64', 'win32-x64': 'win32-x64-msvc' }[target];
const canvasPackage = `@napi-rs/canvas-${canvasNative}`;
if (existsSync(join('node_modules', canvasPackage))) runtime.push(canvasPackage);
else console.warn(`package: ${canvasPackage} is not installed here, so this VSIX cannot render page images (canopy.reader.pageImages says so when used)`);
const staged = join('dist', 'node_modules');
rmSync(staged, { recursive: true, force: true });
for (const rel of runtime) {
  const from = join('node_modules', rel);
  if (!existsSync(from)) continue; // e.g. a LICENSE a package does not ship
  mkdirSync(dirname(join(staged, rel)), { recursive: true });
  cpSync(from, join(staged, rel), { recursive: true, dereference: true });
}
const allow = readFileSync('.vscodeignore', 'utf8').trimEnd();
mkdirSync('out', { recursive: true });
const ignoreFile = join('out', `vscodeignore-${target}`);
writeFileSync(ignoreFile, `${allow}\n# the native runtime for ${target}, staged by scripts/package.mjs\n!dist/node_modules/**\ndist/node_modules/**/*.map\n`);

try {
  run(join('node_modules', '.bin', 'vsce'), ['package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--target', target, '--ignoreFile', ignoreFile, '--out', out]);
} finally {
  rmSync(staged, { recursive: true, force: true });
}
console.log(`${out}: ${(statSync(out).size / 1024 / 1024).toFixed(1)} MB for ${target}`);
