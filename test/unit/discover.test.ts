// Discovery: which files of a folder are indexed, and why the others are not.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { discoverFiles } from '../../src/core/ingest/discover';
import { formatForPath } from '../../src/core/ingest/documentFormat';
import { CancelledError } from '../../src/core/errors';

let root: string;
const opts = { include: ['**/*'], exclude: ['**/node_modules/**'], maxFileSizeMB: 1 };

function write(rel: string, content: string | Buffer) {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
}

before(() => {
  root = mkdtempSync(join(tmpdir(), 'canopy-discover-'));
  write('README.md', '# Hello\n');
  write('notes/a.txt', 'a');
  write('notes/b.csv', 'x,y\n1,2\n');
  write('notes/secret.txt', 'ignored by git');
  write('notes/.gitignore', 'secret.txt\n');
  write('.gitignore', 'build/\n*.log\n');
  write('build/out.md', '# built');
  write('debug.log', 'log');
  write('node_modules/pkg/readme.md', '# dep');
  write('src/main.ts', 'export {}');
  write('big.txt', Buffer.alloc(2 * 1024 * 1024, 97));
  write('pics/photo.png', Buffer.from([0x89, 0x50]));
  symlinkSync(root, join(root, 'notes', 'loop'));
  symlinkSync(join(root, 'missing-target'), join(root, 'dangling.md'));
});

after(() => rmSync(root, { recursive: true, force: true }));

describe('discoverFiles', () => {
  it('lists document files in a stable order, honouring nested .gitignore files and excludes', async () => {
    const d = await discoverFiles(root, opts);
    assert.deepEqual(
      d.files.map((f) => `${f.relPath}:${f.format}`),
      ['README.md:markdown', 'notes/a.txt:text', 'notes/b.csv:csv'],
    );
  });

  it('says why it skipped a file: size, broken symlink, symlink loop', async () => {
    const d = await discoverFiles(root, opts);
    const reasons = Object.fromEntries(d.skipped.map((s) => [s.relPath, s.reason]));
    assert.match(reasons['big.txt'] ?? '', /larger than canopy.maxFileSizeMB \(2.0 MB > 1 MB\)/);
    assert.match(reasons['dangling.md'] ?? '', /broken symlink/);
    assert.match(reasons['notes/loop'] ?? '', /symlink loop/);
  });

  it('applies include globs and can ignore .gitignore', async () => {
    const d = await discoverFiles(root, { ...opts, include: ['notes/**'], respectGitignore: false });
    assert.deepEqual(
      d.files.map((f) => f.relPath),
      ['notes/a.txt', 'notes/b.csv', 'notes/secret.txt'],
    );
  });

  it('lists stand-alone images only when asked', async () => {
    const d = await discoverFiles(root, { ...opts, listImages: true });
    assert.ok(d.files.some((f) => f.relPath === 'pics/photo.png' && f.format === 'image'));
  });

  it('stops when cancelled', async () => {
    const abort = new AbortController();
    abort.abort();
    await assert.rejects(discoverFiles(root, { ...opts, signal: abort.signal }), CancelledError);
  });

  it('refuses a root that is not a folder, naming it', async () => {
    await assert.rejects(discoverFiles(join(root, 'README.md'), opts), /README\.md is not a folder/);
  });

  it('detects formats by extension, case-insensitively', () => {
    assert.equal(formatForPath('a/B.PDF'), 'pdf');
    assert.equal(formatForPath('talk.srt'), 'subtitles');
    assert.equal(formatForPath('x.ts'), undefined);
  });
});
