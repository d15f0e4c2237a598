// The five platform VSIXes (`npm run test:package` builds them with scripts/package.mjs --all into
// out/vsix/ first). Each archive is opened and every file's first bytes read: every native binary
// must be an ELF, Mach-O or PE for exactly the archive's OS and CPU, the set of native files must
// be exactly the target's onnxruntime-node and @napi-rs/canvas binaries, and no path may name
// another platform. Mach-O binaries must find their @rpath libraries beside them. Then the VSIX
// of this machine is unpacked and its bundled MCP server (dist/mcp.js, no node_modules beyond the
// staged runtime) answers a client; and the darwin-x64 server, with only its onnxruntime binary
// swapped for the linux-x64 binary of the same onnxruntime release, answers identically.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as yauzl from 'yauzl';
import type { SearchEvidenceResult } from '../../src/core/agent/operations';
import { indexedFixture, type IndexedFixture } from '../helpers/fixtureWorkspace';
// @ts-expect-error -- a plain ES module shared with scripts/package.mjs (no type declarations)
import { ORT_DARWIN_X64, TARGETS, TARGET_NAMES } from '../../scripts/platforms.mjs';

type Target = { os: string; cpu: string; format: 'elf' | 'macho' | 'pe'; ort: 'installed' | { version: string }; skip?: RegExp[]; canvas: string };
const targets = TARGETS as Record<string, Target>;
const repo = fileURLToPath(new URL('../..', import.meta.url));
const vsixDir = join(repo, 'out', 'vsix');
const QUESTION = 'When were the anemometer and the wind vane recalibrated?';

async function readZip(file: string): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((ok, fail) => yauzl.open(file, { lazyEntries: true }, (err, z) => (err ? fail(err) : ok(z))));
  const out = new Map<string, Buffer>();
  await new Promise<void>((ok, fail) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName.endsWith('/')) return zip.readEntry();
      zip.openReadStream(entry, (err, stream) => {
        if (err) return fail(err);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          out.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
        stream.on('error', fail);
      });
    });
    zip.on('end', ok);
    zip.on('error', fail);
    zip.readEntry();
  });
  zip.close();
  return out;
}

const ELF_MACHINES: Record<number, string> = { 0x3e: 'x64', 0xb7: 'arm64', 0x28: 'arm', 0x03: 'ia32' };
const MACHO_CPUS: Record<number, string> = { 0x01000007: 'x64', 0x0100000c: 'arm64', 7: 'ia32', 12: 'arm' };
const PE_MACHINES: Record<number, string> = { 0x8664: 'x64', 0xaa64: 'arm64', 0x14c: 'ia32' };

/** The format and CPU of a native binary, or undefined for anything else. */
function nativeKind(b: Buffer): { format: 'elf' | 'macho' | 'pe'; cpus: string[] } | undefined {
  if (b.length < 64) return undefined;
  if (b.readUInt32BE(0) === 0x7f454c46) {
    const machine = b[5] === 1 ? b.readUInt16LE(18) : b.readUInt16BE(18);
    return { format: 'elf', cpus: [ELF_MACHINES[machine] ?? `elf-${machine}`] };
  }
  const magic = b.readUInt32LE(0);
  if (magic === 0xfeedfacf || magic === 0xfeedface) return { format: 'macho', cpus: [MACHO_CPUS[b.readInt32LE(4)] ?? `macho-${b.readInt32LE(4)}`] };
  if (b.readUInt32BE(0) === 0xcafebabe && b.readUInt32BE(4) < 20) {
    const n = b.readUInt32BE(4);
    return { format: 'macho', cpus: Array.from({ length: n }, (_, i) => MACHO_CPUS[b.readInt32BE(8 + i * 20)] ?? `macho-${b.readInt32BE(8 + i * 20)}`) };
  }
  if (b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(0x3c);
    if (pe + 6 <= b.length && b.toString('latin1', pe, pe + 4) === 'PE\0\0') return { format: 'pe', cpus: [PE_MACHINES[b.readUInt16LE(pe + 4)] ?? `pe-${b.readUInt16LE(pe + 4)}`] };
  }
  return undefined;
}

/** The @rpath / @loader_path libraries a thin 64-bit Mach-O loads, and its rpaths. */
function machoDependencies(b: Buffer): { libs: string[]; rpaths: string[] } {
  const ncmds = b.readUInt32LE(16);
  const libs: string[] = [];
  const rpaths: string[] = [];
  const cstr = (at: number) => b.toString('utf8', at, b.indexOf(0, at));
  let at = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = b.readUInt32LE(at);
    const size = b.readUInt32LE(at + 4);
    if (cmd === 0xc || cmd === 0x80000018 || cmd === 0x8000001f) libs.push(cstr(at + b.readUInt32LE(at + 8)));
    if (cmd === 0x8000001c) rpaths.push(cstr(at + b.readUInt32LE(at + 8)));
    at += size;
  }
  return { libs, rpaths };
}

/** The onnxruntime-node binary files a target must ship, from the package it was staged from. */
function expectedOrtFiles(target: string): string[] {
  const t = targets[target]!;
  const pkg = t.ort === 'installed' ? join(repo, 'node_modules', 'onnxruntime-node') : join(repo, 'out', 'native-cache', `onnxruntime-node@${t.ort.version}`, 'package');
  const dir = join(pkg, 'bin', 'napi-v6', t.os, t.cpu);
  return readdirSync(dir)
    .filter((f) => !(t.skip ?? []).some((re) => re.test(f)))
    .map((f) => `extension/dist/node_modules/onnxruntime-node/bin/napi-v6/${t.os}/${t.cpu}/${f}`)
    .sort();
}

function unpack(files: Map<string, Buffer>, dir: string): void {
  for (const [name, data] of files) {
    const to = join(dir, ...name.split('/'));
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, data);
  }
}

async function searchWith(mcpScript: string, fx: IndexedFixture): Promise<SearchEvidenceResult> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mcpScript, '--dir', fx.root, '--index', fx.indexDir],
    cwd: dirname(mcpScript),
    env: { PATH: process.env.PATH ?? '', HOME: dirname(mcpScript) },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'canopy-package-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const result = (await client.callTool({ name: 'search_evidence', arguments: { question: QUESTION } })) as CallToolResult;
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    return JSON.parse((result.content[0] as { text: string }).text) as SearchEvidenceResult;
  } finally {
    await client.close();
  }
}

describe('platform VSIXes', () => {
  const contents = new Map<string, Map<string, Buffer>>();
  before(async () => {
    for (const target of TARGET_NAMES as string[]) {
      const file = join(vsixDir, `canopy-${target}.vsix`);
      assert.ok(existsSync(file), `${file} is missing: run "node scripts/package.mjs --all" first (npm run test:package does)`);
    }
  });

  for (const target of TARGET_NAMES as string[]) {
    it(`${target}: holds exactly its own native binaries, for ${target} only`, async () => {
      const t = targets[target]!;
      const files = await readZip(join(vsixDir, `canopy-${target}.vsix`));
      contents.set(target, files);
      const manifest = files.get('extension.vsixmanifest')?.toString('utf8') ?? '';
      assert.match(manifest, new RegExp(`TargetPlatform="${target}"`));

      const natives = [...files].flatMap(([name, data]) => {
        const kind = nativeKind(data);
        return kind ? [{ name, ...kind }] : [];
      });
      for (const n of natives) {
        assert.equal(n.format, t.format, `${n.name} is ${n.format}, not ${t.format}`);
        assert.deepEqual(n.cpus, [t.cpu], `${n.name} is built for ${n.cpus.join('+')}, not ${t.cpu}`);
      }
      const canvas = natives.filter((n) => n.name.startsWith(`extension/dist/node_modules/@napi-rs/canvas-${t.canvas}/`));
      assert.equal(canvas.length, 1, `one canvas binary, found ${JSON.stringify(canvas.map((c) => c.name))}`);
      assert.deepEqual(natives.map((n) => n.name).sort(), [...expectedOrtFiles(target), canvas[0]!.name].sort());

      // Nothing of another platform, nothing outside the allowlist.
      for (const other of TARGET_NAMES as string[]) {
        if (other === target) continue;
        const o = targets[other]!;
        const foreign = [...files.keys()].filter((f) => f.includes(`/napi-v6/${o.os}/${o.cpu}/`) || (o.canvas !== t.canvas && f.includes(`/canvas-${o.canvas}/`)));
        assert.deepEqual(foreign, [], `${target} holds files of ${other}`);
      }
      const names = [...files.keys()].filter((f) => f.startsWith('extension/'));
      assert.deepEqual(names.filter((f) => f.endsWith('.map') || f.includes('/src/') || (f.includes('node_modules/') && !f.startsWith('extension/dist/node_modules/'))), []);
      for (const must of ['extension/dist/extension.js', 'extension/dist/mcp.js', 'extension/dist/parseWorker.js', 'extension/models/use-lite/model.onnx', 'extension/media/icon.png', 'extension/changelog.md', 'extension/media/walkthrough/gold.md']) {
        assert.ok(files.has(must), `${must} is missing`);
      }

      // Mach-O: every @rpath library a binary loads lies beside it (the rpath is @loader_path).
      if (t.format === 'macho') {
        for (const n of natives) {
          const { libs, rpaths } = machoDependencies(files.get(n.name)!);
          const dir = posix.dirname(n.name);
          for (const lib of libs.filter((l) => l.startsWith('@rpath/') || l.startsWith('@loader_path/'))) {
            const base = lib.replace(/^@(rpath|loader_path)\//, '');
            if (n.name.endsWith(`/${base}`)) continue; // its own install name
            assert.ok(rpaths.includes('@loader_path') || lib.startsWith('@loader_path/'), `${n.name} loads ${lib} without an @loader_path rpath`);
            assert.ok(files.has(`${dir}/${base}`), `${n.name} loads ${lib}, which the VSIX does not hold`);
          }
        }
      }
      const ortVersion = JSON.parse(files.get('extension/dist/node_modules/onnxruntime-node/package.json')!.toString('utf8')).version;
      assert.equal(ortVersion, t.ort === 'installed' ? JSON.parse(readFileSync(join(repo, 'node_modules', 'onnxruntime-node', 'package.json'), 'utf8')).version : ORT_DARWIN_X64.version);
    });
  }

  describe('the bundled MCP server runs from an unpacked VSIX', () => {
    let fx: IndexedFixture;
    let tmp: string;
    let native: SearchEvidenceResult;
    const here = `${process.platform}-${process.arch}`;
    before(async () => {
      fx = await indexedFixture('e2e-workspace');
      tmp = mkdtempSync(join(tmpdir(), 'canopy-vsix-'));
    });
    after(async () => {
      await fx?.dispose();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    });

    it(`${here} (this machine): search_evidence answers with cited evidence`, async () => {
      assert.ok(TARGET_NAMES.includes(here), `no VSIX for this machine (${here})`);
      const files = contents.get(here) ?? (await readZip(join(vsixDir, `canopy-${here}.vsix`)));
      const dir = join(tmp, here);
      unpack(files, dir);
      native = await searchWith(join(dir, 'extension', 'dist', 'mcp.js'), fx);
      const hit = native.regions.find((r) => r.text.includes('2024-03-12'));
      assert.ok(hit, JSON.stringify(native.regions));
      const text = readFileSync(join(fx.root, hit.citation.file), 'utf8');
      assert.ok(text.slice(hit.citation.chars!.start, hit.citation.chars!.end).includes('2024-03-12'));
    });

    it(`darwin-x64: onnxruntime-node ${ORT_DARWIN_X64.version} answers like ${here}'s (its linux-x64 binary swapped in)`, async (t) => {
      if (here !== 'linux-x64') {
        t.diagnostic(`the swap needs the linux-x64 binary of ${ORT_DARWIN_X64.version}; this machine is ${here}`);
        return;
      }
      const files = contents.get('darwin-x64') ?? (await readZip(join(vsixDir, 'canopy-darwin-x64.vsix')));
      const dir = join(tmp, 'darwin-x64');
      unpack(files, dir);
      const ort = join(dir, 'extension', 'dist', 'node_modules', 'onnxruntime-node');
      const release = join(repo, 'out', 'native-cache', `onnxruntime-node@${ORT_DARWIN_X64.version}`, 'package', 'bin', 'napi-v6', 'linux', 'x64');
      cpSync(release, join(ort, 'bin', 'napi-v6', 'linux', 'x64'), { recursive: true });
      const swapped = await searchWith(join(dir, 'extension', 'dist', 'mcp.js'), fx);
      assert.deepEqual(swapped.regions.map((r) => [r.citation.ref, r.item.id]), native.regions.map((r) => [r.citation.ref, r.item.id]));
      swapped.regions.forEach((r, i) => assert.ok(Math.abs((r.score ?? 0) - (native.regions[i]!.score ?? 0)) < 1e-5, `${r.citation.ref}: ${r.score} vs ${native.regions[i]!.score}`));
    });
  });
});
