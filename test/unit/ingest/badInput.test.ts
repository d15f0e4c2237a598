import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CanopyError, ErrorCodes } from '../../../src/core/errors';
import { formatForPath, supportedExtensions } from '../../../src/core/ingest/documentFormat';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { assertExactLeaves, leaves } from './helpers';

async function rejectsWith(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof CanopyError, `a CanopyError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.match(e.message, message);
    return true;
  });
}

test('unsupported extensions and files over the size limit are refused with the file named', async () => {
  await rejectsWith(parseFile('bin/tool.exe', new Uint8Array([1, 2])), ErrorCodes.unsupportedFormat, /^bin\/tool\.exe: unsupported file type \.exe/);
  await rejectsWith(parseFile('Makefile', Buffer.from('all:')), ErrorCodes.unsupportedFormat, /^Makefile: unsupported file type \(none\)/);
  await rejectsWith(parseFile('big.txt', new Uint8Array(2048), { maxBytes: 1024 }), ErrorCodes.fileTooLarge, /^big\.txt: .* over the .* limit/);
  assert.equal(formatForPath('A/B.MD'), 'markdown');
  assert.equal(formatForPath('windows\\style.csv'.replace(/\\/g, '/')), 'csv');
  assert.ok(supportedExtensions.includes('ipynb'));
  const doc = await parseFile('dir\\notes.txt', Buffer.from('Backslashes become slashes.'));
  assert.equal(doc.file, 'dir/notes.txt');
  assert.equal(doc.items[0]!.id, 'dir/notes.txt#0');
});

test('binary content behind a text extension is refused', async () => {
  await rejectsWith(parseFile('data.csv', new Uint8Array([0x61, 0x2c, 0x00, 0x62])), ErrorCodes.binaryContent, /^data\.csv: binary content in a text file \(NUL byte at offset 2\)/);
  const controls = new Uint8Array(200).map((_, i) => (i % 3 === 0 ? 0x01 : 0x41));
  await rejectsWith(parseFile('weird.md', controls), ErrorCodes.binaryContent, /^weird\.md: binary content .*control characters/);
});

test('invalid UTF-8: repaired with U+FFFD and a warning, or refused on request; Windows-1252 is recognised', async () => {
  const bytes = new Uint8Array([...Buffer.from('Caf\u00e9 ok. Bad '), 0xff, ...Buffer.from(' byte here.')]);
  const doc = await parseFile('mixed.txt', bytes);
  const text = leaves(doc.items).map((l) => l.text).join(' ');
  assert.equal(text, 'Café ok. Bad \ufffd byte here.');
  assert.equal(doc.warnings[0]!.code, 'invalidUtf8');
  assert.match(doc.warnings[0]!.message, /^mixed\.txt: 1 invalid UTF-8 byte\(s\) \(first at byte 14\) replaced with U\+FFFD/);
  await rejectsWith(parseFile('mixed.txt', bytes, { invalidUtf8: 'reject' }), ErrorCodes.invalidEncoding, /^mixed\.txt: not valid UTF-8 \(1 invalid byte\(s\), first at byte 14\)/);

  const cp1252 = new Uint8Array([...Buffer.from('name,city\nRen'), 0xe9, ...Buffer.from(',K'), 0xf6, ...Buffer.from('ln\n')]);
  const csv = await parseFile('export.csv', cp1252);
  assert.deepEqual(leaves(csv.items)[0]!.cells, ['René', 'Köln']);
  assert.equal(csv.warnings[0]!.code, 'decodedAsWindows1252');
  assertExactLeaves(csv.items, 'name,city\nRené,Köln\n', ['row']);
});

test('empty and blank files give no items and a warning, not an error', async () => {
  for (const [name, bytes] of [
    ['empty.md', new Uint8Array(0)],
    ['blank.txt', Buffer.from('  \n\t\r\n')],
    ['bom.csv', new Uint8Array([0xef, 0xbb, 0xbf])],
    ['empty.pdf', new Uint8Array(0)],
    ['empty.json', Buffer.from('{}')],
  ] as const) {
    const doc = await parseFile(name, bytes);
    assert.equal(doc.items.length, 0, name);
    assert.equal(doc.warnings.length, 1, name);
    assert.equal(doc.warnings[0]!.code, 'empty');
    assert.ok(doc.warnings[0]!.message.startsWith(`${name}: `));
  }
});

test('cancellation is its own error', async () => {
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(parseFile('a.txt', Buffer.from('Hello.'), { signal: ac.signal }), (e: unknown) => e instanceof Error && e.name === 'CancelledError');
});

test('any bytes under any extension: a document or a CanopyError, never anything else', async () => {
  const exts = ['md', 'txt', 'csv', 'tsv', 'html', 'ipynb', 'json', 'jsonl', 'vtt', 'srt', 'pdf'];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...exts), fc.uint8Array({ maxLength: 300 }), async (ext, bytes) => {
      try {
        const doc = await parseFile(`fuzz.${ext}`, bytes, { graph: false });
        assert.ok(Array.isArray(doc.items));
      } catch (e) {
        assert.ok(e instanceof CanopyError, `fuzz.${ext}: ${String(e)}`);
        assert.ok(e.message.startsWith(`fuzz.${ext}: `));
      }
    }),
    { numRuns: 120, seed: 42 },
  );
  // Text-like random input: anchors stay exact.
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('md', 'txt', 'html', 'csv'), fc.string({ unit: fc.constantFrom('a', 'B', ' ', '.', '\n', '\r\n', '#', '|', '-', '&amp;', '<p>', '*', '`', ',', '"', 'é') }), async (ext, s) => {
      const doc = await parseFile(`fuzz.${ext}`, Buffer.from(s), { graph: false });
      if (ext === 'md' || ext === 'txt' || ext === 'csv') assertExactLeaves(doc.items, s, ['sentence', 'row', 'heading']);
    }),
    { numRuns: 150, seed: 7 },
  );
});
