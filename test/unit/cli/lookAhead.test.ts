// The critic look-ahead's flags: on by default, --no-look-ahead turns it off for one command,
// and both at once are a usage error (never an internal one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultSettings, resolveSettings } from '../../../src/core/config/settings';
import { UsageError } from '../../../src/cli/io';
import { lookAheadSetting } from '../../../src/cli/runtime';

describe('look-ahead flags', () => {
  it('leaves the default (on) without a flag, and each flag sets it', () => {
    assert.equal(defaultSettings.criticLookAhead, true);
    assert.equal(resolveSettings(lookAheadSetting(undefined, undefined)).criticLookAhead, true);
    assert.equal(resolveSettings(lookAheadSetting(true, undefined)).criticLookAhead, true);
    assert.equal(resolveSettings(lookAheadSetting(undefined, true)).criticLookAhead, false);
  });
  it('refuses both flags at once as a usage error', () => {
    assert.throws(() => lookAheadSetting(true, true), (err: unknown) => err instanceof UsageError && /contradict/.test((err as Error).message));
  });
});
