/**
 * Finds and starts a Chromium for the webview tier (test/webview) and the end-to-end tier
 * (test/e2e), with no manual install step. In order:
 *
 *   1. `CANOPY_CHROMIUM`, when set: that binary, and nothing else (a clear error if it is missing).
 *   2. A browser installed on the system: Debian's `/usr/bin/chromium` on Linux, then the Google
 *      Chrome and Microsoft Edge installs that playwright-core knows as its `chrome` and `msedge`
 *      channels (their standard places on Linux, macOS and Windows).
 *   3. The Chromium inside the npm package `@sparticuz/chromium` (a devDependency, so `npm ci`
 *      brings it; Linux x64 only): a headless-shell build, brotli-packed with the NSS libraries it
 *      needs and a font. It is unpacked once per install into
 *      `node_modules/.cache/canopy-chromium/<version>/`; its own libraries go first on
 *      LD_LIBRARY_PATH and its own fontconfig file names its font, so it needs nothing from Debian's
 *      chromium package (or any other browser package).
 *
 * `CANOPY_CHROMIUM_SOURCE` narrows the choice: `system` (steps 1–2 only) or `npm` (step 3 only;
 * the fresh-clone check, scripts/check-fresh-clone.sh, uses it to prove the npm path works with
 * the system browser hidden). Unset or `auto`: all three.
 *
 * `prefer: 'headless-shell'` (the webview tier, test/webview/harness.ts) tries step 3 before step 2
 * when both are allowed: the package's headless shell opens a page for about a fifth of the CPU
 * that a system Chrome/Chromium in its new headless mode (a full browser) needs, and the webview
 * tier opens one page per test. The end-to-end tier keeps the system browser first.
 *
 * The package's own `executablePath()` is made for serverless functions: it unpacks into fixed
 * names in the shared temp folder and reuses whatever it finds there, which races when test files
 * run in parallel and mixes versions between checkouts. Unpacking into a staging folder that is
 * renamed into place in one step avoids both.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, createBrotliDecompress } from 'node:zlib';
import { type Browser, chromium, type LaunchOptions } from 'playwright-core';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The flags the platform notes measured for headless Chromium on these machines. */
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The Debian package's launcher; other distributions' browsers come through the channels. */
export const debianChromium = '/usr/bin/chromium';
const npmPackage = '@sparticuz/chromium';

/** One way to start a browser: what launch() needs, and a line saying where it came from. */
export interface ChromiumCandidate {
  /** e.g. "CANOPY_CHROMIUM=/opt/x/chrome", "system /usr/bin/chromium", "channel chrome", "npm @sparticuz/chromium 147.0.0". */
  label: string;
  launch: Pick<LaunchOptions, 'executablePath' | 'channel' | 'env'>;
}

type Source = 'auto' | 'system' | 'npm';

function wantedSource(): Source {
  const raw = (process.env.CANOPY_CHROMIUM_SOURCE ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'auto') return 'auto';
  if (raw === 'system' || raw === 'npm') return raw;
  throw new Error(`CANOPY_CHROMIUM_SOURCE must be auto, system or npm, not "${process.env.CANOPY_CHROMIUM_SOURCE}"`);
}

/** A channel that is not installed fails launch() with this playwright-core message before anything starts. */
const channelMissing = /distribution '[^']+' is not (found|supported)/;

/**
 * Starts headless Chromium from the first source that has one (see the header). A browser that is
 * found but fails to start is an error, not a reason to try the next: that would hide a broken
 * install. When nothing is found the error lists every place looked at and how to get one.
 */
export async function launchChromium(options: { args?: string[]; timeout?: number; prefer?: 'system' | 'headless-shell' } = {}): Promise<Browser> {
  const base: LaunchOptions = { args: options.args ?? chromiumArgs, headless: true, timeout: options.timeout ?? 60_000 };
  const looked: string[] = [];
  const source = wantedSource();

  const explicit = process.env.CANOPY_CHROMIUM;
  if (explicit && source !== 'npm') {
    if (!existsSync(explicit)) throw new Error(`CANOPY_CHROMIUM is set to ${explicit}, which does not exist`);
    return chromium.launch({ ...base, executablePath: explicit });
  }
  let npmTried = false;
  if (source === 'auto' && options.prefer === 'headless-shell') {
    const npm = await npmChromium();
    if (typeof npm !== 'string') return chromium.launch({ ...base, ...npm.launch });
    looked.push(npm);
    npmTried = true;
  }
  if (source !== 'npm') {
    if (process.platform === 'linux' && existsSync(debianChromium)) return chromium.launch({ ...base, executablePath: debianChromium });
    looked.push(`${debianChromium} (Linux)`);
    for (const channel of ['chrome', 'msedge']) {
      try {
        return await chromium.launch({ ...base, channel });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!channelMissing.test(message)) throw err;
        looked.push(`playwright channel "${channel}" (${message.split('\n')[0]})`);
      }
    }
  }
  if (source !== 'system' && !npmTried) {
    const npm = await npmChromium();
    if (typeof npm !== 'string') return chromium.launch({ ...base, ...npm.launch });
    looked.push(npm);
  }
  throw new Error(
    `No Chromium found for the browser tests. Looked at: ${looked.join('; ')}. ` +
      'Run `npm ci` (it installs @sparticuz/chromium, used on Linux x64), install Chromium or Google Chrome, ' +
      'or point CANOPY_CHROMIUM at a Chromium/Chrome binary.',
  );
}

/**
 * The npm package's Chromium, unpacked if need be; or, as a string, why it cannot be used here.
 * Exported for the fresh-clone check and for tests of this module.
 */
export async function npmChromium(cacheRoot = join(repoRoot, 'node_modules', '.cache', 'canopy-chromium')): Promise<ChromiumCandidate | string> {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `${npmPackage} (ships Linux x64 only; this is ${process.platform} ${process.arch})`;
  let pkgDir: string;
  try {
    pkgDir = packageDir(createRequire(import.meta.url).resolve(npmPackage));
  } catch {
    return `${npmPackage} (not installed: run npm ci)`;
  }
  const version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const dir = await unpackBrowser(join(pkgDir, 'bin'), join(cacheRoot, version));
  return {
    label: `npm ${npmPackage} ${version} (${dir})`,
    launch: {
      executablePath: join(dir, 'chromium'),
      env: {
        ...stringEnv(),
        LD_LIBRARY_PATH: [join(dir, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
        FONTCONFIG_FILE: join(dir, 'fonts.conf'),
      },
    },
  };
}

/** The folder of the package.json that names the npm package, above its resolved entry file. */
function packageDir(entry: string): string {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === npmPackage) return dir;
  }
  throw new Error(`no package.json of ${npmPackage} above ${entry}`);
}

function stringEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return env;
}

/**
 * Unpacks the package's browser (chromium.br), its NSS libraries (al2023.tar.br → lib/) and its
 * font (fonts.tar.br → fonts/) into `target`, unless a complete copy is there. Several test
 * processes may get here at once: each unpacks into its own staging folder and renames it into
 * place; the first rename wins and the others drop their copy. The GPU libraries
 * (swiftshader.tar.br) are left packed: the tests run with --disable-gpu.
 */
export async function unpackBrowser(bin: string, target: string): Promise<string> {
  if (existsSync(join(target, 'chromium'))) return target;
  mkdirSync(dirname(target), { recursive: true });
  const staging = mkdtempSync(`${target}.partial-`);
  try {
    await pipeline(createReadStream(join(bin, 'chromium.br')), createBrotliDecompress(), createWriteStream(join(staging, 'chromium'), { mode: 0o755 }));
    untarBrotli(join(bin, 'al2023.tar.br'), staging); // lib/libnss3.so, libnspr4.so, … libexpat.so.1
    untarBrotli(join(bin, 'fonts.tar.br'), staging); // fonts/Open_Sans/*.ttf (+ a fonts.conf for /tmp/fonts, replaced below)
    writeFileSync(
      join(staging, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(target, 'fonts')}</dir>\n  <cachedir>${join(target, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    try {
      renameSync(staging, target);
    } catch (err) {
      // Another process finished first: use its copy.
      if (!existsSync(join(target, 'chromium'))) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return target;
}

/**
 * Extracts a brotli-compressed tar with the system's tar (this path is Linux-only). The tar goes
 * through a file, not a pipe: tar stops reading at the end-of-archive blocks and would cut the
 * pipe before the padding behind them is written.
 */
function untarBrotli(file: string, into: string): void {
  const tarFile = join(into, '.unpacking.tar');
  writeFileSync(tarFile, brotliDecompressSync(readFileSync(file)));
  const tar = spawnSync('tar', ['-x', '--no-same-owner', '-f', tarFile, '-C', into], { encoding: 'utf8' });
  rmSync(tarFile);
  if (tar.error) throw new Error(`tar could not unpack ${file}: ${tar.error.message}`);
  if (tar.status !== 0) throw new Error(`tar could not unpack ${file} (exit ${tar.status}): ${tar.stderr.trim()}`);
}
