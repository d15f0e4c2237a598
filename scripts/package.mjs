// Builds platform-specific VSIXes: the bundles (dist/extension.js, dist/mcp.js, dist/parseWorker.js,
// the webview), the built-in model with its NOTICE, and from the npm registry only what runs outside
// the bundles, for ONE platform each: onnxruntime-node's binary, pdf.js, and the canvas pdf.js
// renders page images on (@napi-rs/canvas). scripts/platforms.mjs says what each target ships.
//
//   node scripts/package.mjs [target] [--out file]     one VSIX (default: this machine's target,
//                                                      canopy.vsix)
//   node scripts/package.mjs --all [--out-dir dir]     all five: linux-x64, linux-arm64, darwin-x64,
//                                                      darwin-arm64, win32-x64 (default out/vsix/),
//                                                      named canopy-<target>.vsix
//   --no-build                                         reuse the current production build
//
// The runtime files are staged in dist/node_modules/ (vsce never packages the top-level
// node_modules without its own dependency scan, and Node resolves the bundles' requires there
// first) and removed again afterwards. Native packages this machine did not install (the other
// platforms' @napi-rs/canvas, onnxruntime-node 1.23.2 for darwin-x64) are fetched with `npm pack`
// into out/native-cache/ and checked against the integrity in package-lock.json or platforms.mjs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { TARGETS, TARGET_NAMES } from './platforms.mjs';

const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const valueFlags = new Set(['--out', '--out-dir']);
const positional = args.filter((a, i) => !a.startsWith('--') && !valueFlags.has(args[i - 1]));
const all = args.includes('--all');
const here = `${process.platform}-${process.arch}`;
const targets = all ? TARGET_NAMES : [positional[0] ?? here];
for (const t of targets) {
  if (!TARGETS[t]) {
    console.error(`package: no VSIX for ${t}; choose one of ${TARGET_NAMES.join(', ')} (or --all)`);
    process.exit(2);
  }
}
const outDir = flag('--out-dir') ?? (all ? join('out', 'vsix') : '.');
const outFor = (target) => (!all && flag('--out') ? flag('--out') : join(outDir, all ? `canopy-${target}.vsix` : 'canopy.vsix'));

const run = (cmd, argv, options = {}) => {
  const r = spawnSync(cmd, argv, { stdio: 'inherit', shell: process.platform === 'win32', ...options });
  if (r.status !== 0) process.exit(r.status ?? 1);
  return r;
};

if (!args.includes('--no-build')) run(process.execPath, ['scripts/build.mjs', '--production']);

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const cacheDir = join('out', 'native-cache');

/** sha512 integrity of a file, as npm writes it. */
const integrityOf = (file) => `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;

/**
 * A package's folder: node_modules/<name> when installed at that version, else fetched with
 * `npm pack` (registry) into the cache, its tarball checked against `integrity`, and unpacked.
 */
function packageDir(name, version, integrity) {
  const installed = join('node_modules', name);
  if (existsSync(join(installed, 'package.json')) && JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version === version) return installed;
  const dir = join(cacheDir, `${name.replace('/', '+')}@${version}`);
  if (existsSync(join(dir, 'package', 'package.json'))) return join(dir, 'package');
  mkdirSync(dir, { recursive: true });
  console.log(`package: fetching ${name}@${version} from the npm registry`);
  const packed = spawnSync('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', dir], { encoding: 'utf8', shell: process.platform === 'win32' });
  if (packed.status !== 0) throw new Error(`npm pack ${name}@${version} failed: ${packed.stderr}`);
  const tgz = join(dir, JSON.parse(packed.stdout)[0].filename);
  const got = integrityOf(tgz);
  if (got !== integrity) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${name}@${version}: integrity ${got} does not match the pinned ${integrity}`);
  }
  run('tar', ['-xzf', tgz, '-C', dir]);
  rmSync(tgz);
  return join(dir, 'package');
}

/** [from, to] pairs of the runtime files one target ships (to: relative to dist/node_modules). */
function runtimeFiles(target) {
  const t = TARGETS[target];
  const files = [];
  const add = (fromDir, toDir, rels) => {
    for (const rel of rels) if (existsSync(join(fromDir, rel))) files.push([join(fromDir, rel), join(toDir, rel)]);
  };
  // onnxruntime-node: its JS, onnxruntime-common's, and the one platform's binary folder.
  const ort = t.ort === 'installed' ? { dir: join('node_modules', 'onnxruntime-node'), common: join('node_modules', 'onnxruntime-common') } : { dir: packageDir(t.ort.name, t.ort.version, t.ort.integrity), common: packageDir(t.ort.common.name, t.ort.common.version, t.ort.common.integrity) };
  add(ort.dir, 'onnxruntime-node', ['package.json', 'LICENSE', 'dist']);
  const binDir = join('bin', 'napi-v6', t.os, t.cpu);
  if (!existsSync(join(ort.dir, binDir))) throw new Error(`onnxruntime-node in ${ort.dir} has no ${binDir}`);
  add(
    ort.dir,
    'onnxruntime-node',
    readdirSync(join(ort.dir, binDir))
      .filter((f) => !(t.skip ?? []).some((re) => re.test(f)))
      .map((f) => join(binDir, f)),
  );
  add(ort.common, 'onnxruntime-common', ['package.json', 'LICENSE', join('dist', 'cjs')]);
  // pdf.js (platform-independent) and the canvas it renders page images on (canopy.reader.pageImages).
  add(join('node_modules', 'pdfjs-dist'), 'pdfjs-dist', ['package.json', 'LICENSE', join('legacy', 'build', 'pdf.mjs'), join('legacy', 'build', 'pdf.worker.mjs'), 'standard_fonts']);
  add(join('node_modules', '@napi-rs', 'canvas'), join('@napi-rs', 'canvas'), ['package.json', 'LICENSE', 'index.js', 'js-binding.js', 'geometry.js', 'load-image.js']);
  const canvasName = `@napi-rs/canvas-${t.canvas}`;
  const locked = lock.packages[`node_modules/${canvasName}`];
  if (!locked?.integrity) throw new Error(`package-lock.json has no ${canvasName}`);
  const canvasDir = packageDir(canvasName, locked.version, locked.integrity);
  add(canvasDir, canvasName, readdirSync(canvasDir));
  return files;
}

function packageTarget(target) {
  const out = outFor(target);
  mkdirSync(dirname(resolve(out)), { recursive: true });
  const staged = join('dist', 'node_modules');
  rmSync(staged, { recursive: true, force: true });
  for (const [from, to] of runtimeFiles(target)) {
    mkdirSync(dirname(join(staged, to)), { recursive: true });
    // Source maps and type declarations stay out: vsce's negated patterns (the allowlist) win over
    // later exclusions, so they are filtered here rather than in the ignore file.
    cpSync(from, join(staged, to), { recursive: true, dereference: true, filter: (src) => !/\.(map|d\.ts)$/.test(src) });
  }
  const allow = readFileSync('.vscodeignore', 'utf8').trimEnd();
  mkdirSync('out', { recursive: true });
  const ignoreFile = join('out', `vscodeignore-${target}`);
  writeFileSync(ignoreFile, `${allow}\n# the native runtime for ${target}, staged by scripts/package.mjs\n!dist/node_modules/**\n`);
  try {
    run(join('node_modules', '.bin', 'vsce'), ['package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--target', target, '--ignoreFile', ignoreFile, '--out', out]);
  } finally {
    rmSync(staged, { recursive: true, force: true });
  }
  const mb = (statSync(out).size / 1024 / 1024).toFixed(1);
  console.log(`${out}: ${mb} MB for ${target}`);
  return { target, file: out, bytes: statSync(out).size };
}

const made = targets.map(packageTarget);
if (made.length > 1) {
  writeFileSync(join(outDir, 'vsix.json'), `${JSON.stringify(made, null, 2)}\n`);
  for (const m of made) console.log(`${m.target.padEnd(13)} ${(m.bytes / 1024 / 1024).toFixed(1).padStart(6)} MB  ${m.file}`);
}
