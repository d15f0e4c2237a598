// The Postgres store against a real Postgres engine: PGlite with pgvector, reached over the wire
// by the plain `pg` client through PGlite's socket server (the code path a user runs against
// their own server), plus PGlite driven in-process. The store contract (both lexical rankings),
// kill -9 of an indexer writing into it, and PGlite's single-owner lock.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CliIO } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import { CanopyError } from '../../../src/core/errors';
import { CorpusIndex } from '../../../src/core/index/corpusIndex';
import { runIndexer } from '../../../src/core/index/indexer';
import { ownerLockFile, PgliteHost } from '../../../src/core/index/pgliteHost';
import { PostgresStore } from '../../../src/core/index/postgresStore';
import { openIndexStore } from '../../../src/core/index/storeSpec';
import { discoverFiles } from '../../../src/core/ingest/discover';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { hashEmbeddings } from '../../helpers/hashEmbeddings';
import { indexFolder } from '../../helpers/indexFolder';
import { pgliteTemplate, servePglite, type ServedPglite } from '../../helpers/pglite';
import { tsNode } from '../../helpers/tsNode';
import { describeStoreContract } from './storeContract';

let served: ServedPglite;
let schemas = 0;

before(async () => {
  served = await servePglite();
});
after(async () => {
  await served?.close();
});

for (const lexical of ['tsvector', 'bm25'] as const) {
  describeStoreContract(`postgres over the socket (${lexical})`, async () => {
    const schema = `contract_${lexical}_${++schemas}`;
    const open = () => new PostgresStore({ connectionString: served.url, schema, lexical, poolSize: 4 });
    const store = open();
    return { store, reopen: open, cleanup: () => store.close() };
  });
}

describe('postgres store', () => {
  it('the CLI indexes into a postgres:// store, and canopy ask --store and canopy store info answer from it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'canopy-pg-cli-'));
    const out: string[] = [];
    const errs: string[] = [];
    const io: CliIO = { out: (l) => out.push(l), err: (l) => errs.push(l), isTTY: false, env: {}, cwd: root };
    try {
      writeFileSync(join(root, 'weather.md'), '# Weather station\n\nThe anemometer and the wind vane were recalibrated on 2024-03-12. The rain gauge was cleaned.\n');
      writeFileSync(join(root, 'trees.md'), '# Trees\n\nAsh dieback killed the ash trees on plot P7. Hornbeam was replanted there.\n');
      const url = `${served.url}?schema=cli`;
      assert.equal(await main(['index', root, '--store', url, '--json'], io), 0, errs.join('\n'));
      const summary = JSON.parse(out.pop()!) as { files: number; generation: number };
      assert.equal(summary.files, 2);
      assert.equal(await main(['ask', 'When was the anemometer recalibrated?', '--dir', root, '--store', url, '--json'], io), 0, errs.join('\n'));
      const trace = JSON.parse(out.pop()!) as { answer: { text: string }; index: { generation: number } };
      assert.match(trace.answer.text, /2024-03-12/);
      assert.equal(trace.index.generation, summary.generation);
      assert.equal(await main(['store', 'info', '--store', url, '--json'], io), 0, errs.join('\n'));
      const info = JSON.parse(out.pop()!) as Record<string, unknown>;
      assert.match(String(info.encoder), /^use-lite/);
      assert.deepEqual({ ...info, encoder: undefined }, { kind: 'postgres', location: `${served.url} schema cli`, generation: summary.generation, items: 2, files: 2, encoder: undefined });
      assert.equal(await main(['ask', 'x', '--dir', root, '--store', 'postgres://h/db?lexical=fuzzy'], io), 2, 'a bad store is a usage error');
      assert.match(errs.join('\n'), /--store: .*lexical must be tsvector or bm25/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('names the server it cannot reach, without the password, with its own code (a refused connection is no E_NOT_FOUND)', async () => {
    const store = openIndexStore('postgres://canopy:hunter2@127.0.0.1:1/nowhere', '/unused');
    await assert.rejects(
      store.liveGeneration(),
      (err: unknown) =>
        err instanceof CanopyError && err.code === 'E_UNREACHABLE' && /cannot reach the Postgres store postgres:\/\/canopy:\*\*\*@127\.0\.0\.1:1\/nowhere/.test(err.message) && !err.message.includes('hunter2'),
    );
    await store.close();
  });

  it('a served PGlite refuses a database name it does not hold, as Postgres does, and serves the one it prints', async () => {
    const wrong = openIndexStore(served.url.replace(/\/postgres$/, '/canopy'), '/unused');
    await assert.rejects(wrong.liveGeneration(), (err: unknown) => err instanceof CanopyError && err.code === 'E_NOT_FOUND' && /database "canopy" does not exist: this PGlite server .* holds one database, "postgres"/.test(err.message));
    await wrong.close();
    assert.match(served.url, /\/postgres$/);
    const right = openIndexStore(`${served.url}?schema=dbname_check`, '/unused');
    assert.equal(await right.liveGeneration(), undefined, 'an empty schema of the one database: no index yet');
    await right.close();
  });

  it('refuses vectors of another width than the store holds, naming both', async () => {
    const store = new PostgresStore({ connectionString: served.url, schema: 'widths' });
    const root = mkdtempSync(join(tmpdir(), 'canopy-pg-width-'));
    try {
      writeFileSync(join(root, 'a.md'), '# A\n\nSome text.\n');
      await indexFolder(root, root, 1, store);
      await assert.rejects(
        runIndexer(await discoverFiles(root, { include: ['**/*'], exclude: [], maxFileSizeMB: 1 }), {
          store,
          parse: (rel, bytes) => parseFile(rel, bytes, { graph: false }),
          embeddings: hashEmbeddings(64),
          parserVersion: 'test',
          branchingFactor: 2,
        }),
        /holds 256-d vectors and the encoder gives 64-d ones/,
      );
      assert.equal(await store.liveGeneration(), 1, 'the index is unchanged');
    } finally {
      await store.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('survives kill -9 of an indexer writing over the socket: the live generation always reopens whole', async () => {
    const root = mkdtempSync(join(tmpdir(), 'canopy-pg-kill-'));
    const url = `${served.url}?schema=killed`;
    const write = (rel: string, content: string) => {
      mkdirSync(join(root, rel, '..'), { recursive: true });
      writeFileSync(join(root, rel), content);
    };
    try {
      for (let i = 0; i < 40; i++) write(`bulk/doc-${i}.md`, `# Document ${i}\n\n${'Canopy cover was measured at the plot. '.repeat(20)}Item ${i}.\n`);
      const child = fileURLToPath(new URL('../../helpers/indexChild.ts', import.meta.url));
      // killAt: the file whose start (the child's progress line) triggers kill -9 — a known point
      // mid-way, after the files before it were written over the socket and before the commit.
      const runChild = (killAt?: string) =>
        new Promise<{ code: number | null; err: string }>((resolve) => {
          let err = '';
          let out = '';
          const env = killAt === undefined ? process.env : { ...process.env, CANOPY_CHILD_PROGRESS: '1' };
          const proc = spawn(process.execPath, [...tsNode, child, root, root, url], { stdio: ['ignore', 'pipe', 'pipe'], env });
          proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
          proc.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            if (killAt !== undefined && out.split('\n').some((l) => l.startsWith('progress ') && l.endsWith(` ${killAt}`))) proc.kill('SIGKILL');
          });
          proc.on('exit', (code) => resolve({ code, err }));
        });
      const first = await runChild();
      assert.equal(first.code, 0, first.err);
      const store = openIndexStore(url, root);
      const before = (await store.liveGeneration())!;
      const edit = (round: number) => {
        for (let i = 0; i < 40; i += 3) write(`bulk/doc-${i}.md`, `# Document ${i} v${round}\n\nEdited in round ${round}. ${'Soil moisture fell in August. '.repeat(10)}\n`);
      };
      edit(-1);
      const full = await runChild();
      assert.equal(full.code, 0, full.err);
      let killed = 0;
      // npm test runs 2 kills; CANOPY_KILL_RUNS=20 (npm run test:kill:postgres) for the campaign.
      const rounds = Number(process.env.CANOPY_KILL_RUNS ?? 2);
      for (let round = 0; round < rounds; round++) {
        edit(round);
        // An edited file with at least two more edited files after it in any discovery order.
        const at = [3, 12, 15, 18, 21][Math.floor(Math.random() * 5)];
        const { code } = await runChild(`bulk/doc-${at}.md`);
        if (code !== 0) killed++;
        const live = await store.liveGeneration();
        assert.ok(live !== undefined && live >= before, `generation after kill: ${live}`);
        const corpus = await CorpusIndex.open(store);
        assert.equal(corpus.vectors.size, corpus.itemCount, 'vectors match the manifest');
        // Every item either ranking returns belongs to the live manifest: nothing of a torn generation shows.
        const ids = new Set(Object.values(corpus.manifest.files).flatMap((e) => e.items));
        const lexical = await corpus.lexical.query('canopy cover plot soil moisture edited round', 500);
        assert.equal(lexical.length, ids.size);
        assert.ok(lexical.every((h) => ids.has(h.id)));
        const dense = await corpus.vectors.query(new Float32Array(256).fill(1 / 16), 500);
        assert.equal(dense.length, ids.size);
        assert.ok(dense.every((h) => ids.has(h.id)));
        for (const file of Object.keys(corpus.manifest.files)) await corpus.document(file);
        await corpus.close();
      }
      assert.ok(killed >= 1, 'at least one run was killed mid-way');
      if (process.env.CANOPY_KILL_RUNS) console.log(`postgres kill -9 campaign: ${rounds} runs, ${killed} killed mid-way; the store reopened intact after every one`);
      // The next run after the kills completes, taking over the dead writer's lease at once.
      const last = await runChild();
      assert.equal(last.code, 0, last.err);
      const corpus = await CorpusIndex.open(store);
      assert.equal(corpus.itemCount, 40);
      assert.match(JSON.stringify((await corpus.item(corpus.manifest.files['bulk/doc-0.md']!.items[0]!)).root), new RegExp(`round ${rounds - 1}`));
      await corpus.close();
      await store.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// One data folder for these tests: a PGlite start from the template costs about 4 s of CPU and a
// reopen of a folder about 1.5 s, so the folder the first test makes is the one the second
// reopens (it still passes the template, so it also runs alone), and the in-process pg.Pool
// is tested on the host the first test opens.
describe('PGlite single-owner lock', () => {
  let dir: string;
  before(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'canopy-pglite-own-')), 'db');
  });
  after(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('a data folder open in this process cannot be opened again; after close it can; in-process, the store runs over a pg.Pool without a socket', async () => {
    const a = await PgliteHost.open(dir, { template: await pgliteTemplate() });
    const root = mkdtempSync(join(tmpdir(), 'canopy-pg-inproc-'));
    try {
      await assert.rejects(PgliteHost.open(dir), (err: unknown) => err instanceof CanopyError && /already open in process \d+/.test(err.message) && /takes no lock of its own/.test(err.message));
      await a.db.exec('CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)');
      writeFileSync(join(root, 'oak.md'), '# Oaks\n\nThe pedunculate oak grows slowly.\n');
      writeFileSync(join(root, 'ash.md'), '# Ash\n\nAsh dieback is a fungal disease.\n');
      const store = new PostgresStore({ pool: await a.pool(), schema: 'inproc' });
      const s = await indexFolder(root, root, 1, store);
      assert.equal(s.files, 2);
      const corpus = await CorpusIndex.open(store);
      assert.equal((await corpus.lexical.query('fungal disease', 3))[0]?.id, corpus.manifest.files['ash.md']!.items[0]);
      await corpus.close();
      await store.close();
    } finally {
      await a.close();
      rmSync(root, { recursive: true, force: true });
    }
    const b = await PgliteHost.open(dir);
    assert.deepEqual((await b.db.query<{ x: number }>('SELECT x FROM kept')).rows, [{ x: 7 }]);
    await b.close();
  });

  it('another process holding the folder keeps it; a lock left by a process that died is taken over', async () => {
    // Another process takes the lock and holds it.
    const code = `const { takeOwnership } = require(${JSON.stringify(fileURLToPath(new URL('../../../src/core/index/pgliteHost.ts', import.meta.url)))});
      takeOwnership(${JSON.stringify(dir)}).then(() => { process.stdout.write('held\\n'); setInterval(() => {}, 1000); });`;
    const holder = spawn(process.execPath, [...tsNode, '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    await assert.rejects(PgliteHost.open(dir), new RegExp(`already open in process ${holder.pid}`));
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    const host = await PgliteHost.open(dir, { template: await pgliteTemplate() });
    assert.match(JSON.stringify(await host.db.query('SELECT 1 AS one')), /one/);
    await host.close();
    assert.throws(() => readFileSync(ownerLockFile(dir)), /ENOENT/, 'released on close');
  });
});
