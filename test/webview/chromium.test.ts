// The browser lookup of the browser tiers (test/helpers/chromium.ts): the npm Chromium unpacks
// once even when several test processes ask at the same moment, it starts and renders a page,
// and a wrong setting is an error that names it rather than a silent fallback.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync } from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { launchChromium, npmChromium, unpackBrowser } from '../helpers/chromium';

const linuxX64 = process.platform === 'linux' && process.arch === 'x64';

/** Sets environment variables for one call and puts the old values back. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('Chromium lookup', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'canopy-chromium-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('unpacks a package once when several callers race, leaving no staging folder behind', { skip: !linuxX64 && 'the npm Chromium is unpacked on Linux x64 only' }, async () => {
    // A package laid out like @sparticuz/chromium's bin/ folder, with small stand-ins.
    const bin = join(tmp, 'bin');
    const build = join(tmp, 'build');
    mkdirSync(bin);
    mkdirSync(join(build, 'lib'), { recursive: true });
    mkdirSync(join(build, 'fonts', 'Open_Sans'), { recursive: true });
    writeFileSync(join(build, 'lib', 'libnss3.so'), 'nss');
    writeFileSync(join(build, 'fonts', 'Open_Sans', 'OpenSans-Regular.ttf'), 'font');
    writeFileSync(join(build, 'fonts.conf'), '<fontconfig><dir>/tmp/fonts</dir></fontconfig>');
    writeFileSync(join(bin, 'chromium.br'), brotliCompressSync(Buffer.from('#!/bin/sh\necho chromium\n')));
    for (const [name, members] of [['al2023', ['lib']], ['fonts', ['fonts', 'fonts.conf']]] as const) {
      const tar = spawnSync('tar', ['-c', '-f', '-', '-C', build, ...members]);
      assert.equal(tar.status, 0, String(tar.stderr));
      writeFileSync(join(bin, `${name}.tar.br`), brotliCompressSync(tar.stdout));
    }
    const cache = join(tmp, 'cache');
    const target = join(cache, '1.2.3');
    const dirs = await Promise.all([1, 2, 3, 4].map(() => unpackBrowser(bin, target)));
    assert.deepEqual(new Set(dirs), new Set([target]));
    assert.deepEqual(readdirSync(cache), ['1.2.3'], 'the losers removed their staging folders');
    assert.equal(readFileSync(join(target, 'chromium'), 'utf8'), '#!/bin/sh\necho chromium\n');
    assert.equal(readFileSync(join(target, 'lib', 'libnss3.so'), 'utf8'), 'nss');
    assert.ok(existsSync(join(target, 'fonts', 'Open_Sans', 'OpenSans-Regular.ttf')));
    // The package's fontconfig file names /tmp/fonts; ours names the unpacked folder.
    assert.match(readFileSync(join(target, 'fonts.conf'), 'utf8'), new RegExp(`<dir>${join(target, 'fonts')}</dir>`));
    // A complete copy is reused as it is.
    writeFileSync(join(target, 'marker'), '');
    assert.equal(await unpackBrowser(bin, target), target);
    assert.ok(existsSync(join(target, 'marker')));
  });

  it('starts the Chromium from npm with its own libraries and font, and renders a page', { skip: !linuxX64 && 'the npm Chromium runs on Linux x64 only' }, async () => {
    const npm = await npmChromium();
    assert.notEqual(typeof npm, 'string', String(npm));
    const browser = await withEnv({ CANOPY_CHROMIUM: undefined, CANOPY_CHROMIUM_SOURCE: 'npm' }, () => launchChromium());
    try {
      const version = browser.version();
      assert.ok(typeof npm !== 'string' && npm.label.includes(`@sparticuz/chromium ${version.split('.')[0]}.`), `${version} vs ${typeof npm === 'string' ? npm : npm.label}`);
      const page = await browser.newPage();
      await page.setContent('<p id="p" style="font: 16px sans-serif">Ash dieback at P5</p>');
      assert.equal(await page.textContent('#p'), 'Ash dieback at P5');
      // Text has width only if a font was found.
      assert.ok((await page.evaluate(() => document.getElementById('p')!.getBoundingClientRect().height)) > 0);
      const width = await page.evaluate(() => {
        const r = document.createRange();
        r.selectNodeContents(document.getElementById('p')!);
        return r.getBoundingClientRect().width;
      });
      assert.ok(width > 50, `text width ${width}`);
    } finally {
      await browser.close();
    }
  });

  it('prefer headless-shell starts the npm headless shell first; CANOPY_CHROMIUM_SOURCE=system still keeps it to the system browser', { skip: !linuxX64 && 'the npm Chromium runs on Linux x64 only' }, async () => {
    const version = (JSON.parse(readFileSync(join('node_modules', '@sparticuz', 'chromium', 'package.json'), 'utf8')) as { version: string }).version;
    const major = (b: { version(): string }) => b.version().split('.')[0];
    const shell = await withEnv({ CANOPY_CHROMIUM: undefined, CANOPY_CHROMIUM_SOURCE: undefined }, () => launchChromium({ prefer: 'headless-shell' }));
    try {
      assert.equal(major(shell), version.split('.')[0], `started ${shell.version()}, the package is ${version}`);
    } finally {
      await shell.close();
    }
    // The system half only where Debian's browser runs (the fresh-clone check hides it: its
    // wrapper script stays, the browser and the tools the script needs do not).
    const probe = existsSync('/usr/bin/chromium') ? spawnSync('/usr/bin/chromium', ['--version'], { encoding: 'utf8' }) : undefined;
    if (!probe || probe.status !== 0 || !/\d+\.\d+/.test(probe.stdout)) return;
    const debian = probe.stdout;
    const system = await withEnv({ CANOPY_CHROMIUM: undefined, CANOPY_CHROMIUM_SOURCE: 'system' }, () => launchChromium({ prefer: 'headless-shell' }));
    try {
      assert.ok(debian.includes(` ${system.version()}`), `started ${system.version()}, /usr/bin/chromium is ${debian.trim()}`);
    } finally {
      await system.close();
    }
  });

  it('refuses a CANOPY_CHROMIUM that does not exist, naming it, instead of falling back', async () => {
    const missing = join(tmp, 'no-such-chrome');
    await assert.rejects(
      withEnv({ CANOPY_CHROMIUM: missing, CANOPY_CHROMIUM_SOURCE: undefined }, () => launchChromium()),
      (err: Error) => err.message.includes(`CANOPY_CHROMIUM is set to ${missing}, which does not exist`),
    );
  });

  it('refuses an unknown CANOPY_CHROMIUM_SOURCE', async () => {
    await assert.rejects(
      withEnv({ CANOPY_CHROMIUM_SOURCE: 'snap' }, () => launchChromium()),
      /CANOPY_CHROMIUM_SOURCE must be auto, system or npm, not "snap"/,
    );
  });
});
