// The settings the code reads must be exactly the settings package.json declares, with the
// same defaults and ranges, and the commands the code registers must be declared too.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { defaultSettings, resolveSettings } from '../../src/core/config/settings';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const declared: Record<string, { default: unknown; minimum?: number; maximum?: number }> = manifest.contributes.configuration.properties;

describe('settings', () => {
  it('declares every core setting in package.json with the same default', () => {
    for (const [key, value] of Object.entries(defaultSettings)) {
      const entry = declared[`canopy.${key}`];
      assert.ok(entry, `canopy.${key} is missing from package.json`);
      assert.deepEqual(entry.default, value, `default of canopy.${key}`);
    }
  });

  it('has no setting in package.json that the core does not read', () => {
    for (const key of Object.keys(declared)) {
      assert.ok(key.replace(/^canopy\./, '') in defaultSettings, `${key} is declared but unused`);
    }
  });

  it('clamps numbers to the declared ranges and ignores wrong types', () => {
    for (const [key, entry] of Object.entries(declared)) {
      const name = key.replace(/^canopy\./, '') as keyof typeof defaultSettings;
      if (entry.minimum !== undefined) assert.equal(resolveSettings({ [name]: entry.minimum - 1000 })[name], entry.minimum, key);
      if (entry.maximum !== undefined) assert.equal(resolveSettings({ [name]: entry.maximum + 1000 })[name], entry.maximum, key);
      assert.deepEqual(resolveSettings({ [name]: 'nonsense' })[name], defaultSettings[name], key);
    }
  });

  it('registers exactly the commands the manifest declares', () => {
    const source = readFileSync(new URL('../../src/extension/extension.ts', import.meta.url), 'utf8');
    const registered = [...source.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]).sort();
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual(registered, contributed);
    for (const c of manifest.contributes.commands) assert.equal(c.category, 'Canopy');
  });
});
