// A new question cancels the old one, and nothing from the old one is delivered.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LatestOnly } from '../../../src/core/app/latestOnly';
import { CancelledError } from '../../../src/core/errors';

const slow = (value: string, ms: number, seen: string[]) => (signal: AbortSignal) =>
  new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => resolve(value), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      seen.push(`${value} aborted`);
      reject(new CancelledError());
    });
  });

describe('LatestOnly', () => {
  it('cancels the older run and delivers only the newest result', async () => {
    const slot = new LatestOnly();
    const seen: string[] = [];
    const first = slot.run(slow('first', 200, seen));
    const second = slot.run(slow('second', 10, seen));
    assert.equal(await second, 'second');
    assert.equal(await first, undefined);
    assert.deepEqual(seen, ['first aborted']);
  });

  it('drops a result that finishes after a newer run started even if it ignored the signal', async () => {
    const slot = new LatestOnly();
    let release!: () => void;
    const stubborn = slot.run(() => new Promise<string>((r) => (release = () => r('old'))));
    const fresh = slot.run(async () => 'new');
    release();
    assert.equal(await stubborn, undefined);
    assert.equal(await fresh, 'new');
  });

  it('honours an outer cancellation and passes real errors through', async () => {
    const slot = new LatestOnly();
    const outer = new AbortController();
    const seen: string[] = [];
    const p = slot.run(slow('x', 200, seen), outer.signal);
    outer.abort();
    assert.equal(await p, undefined);
    await assert.rejects(slot.run(async () => {
      throw new Error('boom');
    }), /boom/);
  });
});
