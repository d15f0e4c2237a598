// The retrieval profile file (`retrieval-profile.json`): read through its schema, every problem
// named with the file and the field; a profile written by writeProfile reads back the same.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BUILTIN_PROFILE, readProfile, writeProfile } from '../../../src/core/retrieve/profile';

const dir = mkdtempSync(join(tmpdir(), 'canopy-profile-'));
const write = (name: string, value: unknown) => {
  const file = join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
};
const base = { format: 'canopy.retrieval-profile', version: 1, encoder: 'use-lite/', fusion: { kind: 'linear', dense: 0.3, depth: 100 }, fittedOn: 'test' };

describe('retrieval profile file', () => {
  it('round-trips through writeProfile and readProfile, node-score weights included', async () => {
    const file = join(dir, 'round.json');
    const profile = { ...BUILTIN_PROFILE, nodeScore: { dense: 1, lexical: 0.5, model: 'bm25' as const }, nodeScoreFittedOn: 'gold' };
    await writeProfile(file, profile);
    assert.deepEqual(await readProfile(file), profile);
  });

  it('is undefined when the file does not exist', async () => {
    assert.equal(await readProfile(join(dir, 'absent.json')), undefined);
  });

  it('defaults a missing fittedOn and drops keys it does not know', async () => {
    const { fittedOn: _, ...rest } = base;
    const read = await readProfile(write('lean.json', { ...rest, extra: true }));
    assert.deepEqual(read, { ...rest, fittedOn: '' });
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['not JSON', '{oops', /bad-json\.json is not JSON/],
    ['another format', { ...base, format: 'x' }, /is not a Canopy retrieval profile of version 1/],
    ['a later version', { ...base, version: 2 }, /is not a Canopy retrieval profile of version 1/],
    ['an unknown fusion', { ...base, fusion: { kind: 'max' } }, /profile\.fusion/],
    ['an RRF constant of 0', { ...base, fusion: { kind: 'rrf', rrfK: 0 } }, /profile\.fusion\.rrfK must be more than 0/],
    ['a fractional depth', { ...base, fusion: { kind: 'linear', dense: 0.2, depth: 1.5 } }, /profile\.fusion\.depth must be an integer/],
    ['a negative dense weight', { ...base, fusion: { kind: 'linear', dense: -1, depth: 10 } }, /profile\.fusion\.dense must be ≥ 0/],
    ['a node-score weight out of range', { ...base, nodeScore: { dense: 1, lexical: 101 } }, /profile\.nodeScore\.lexical must be from 0 to 100/],
    ['an unknown lexical model', { ...base, nodeScore: { dense: 1, lexical: 1, model: 'tfidf' } }, /profile\.nodeScore\.model/],
    ['a missing encoder', { ...base, encoder: undefined }, /profile\.encoder must be a string/],
  ];
  for (const [what, value, message] of bad) {
    it(`refuses ${what}, naming the file`, async () => {
      const name = what === 'not JSON' ? 'bad-json.json' : `bad-${what.replace(/\W+/g, '-')}.json`;
      const file = write(name, value);
      await assert.rejects(readProfile(file), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'E_BAD_INPUT');
        assert.ok(err.message.includes(file), err.message);
        assert.match(err.message, message);
        return true;
      });
    });
  }
});
