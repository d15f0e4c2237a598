// The settings the code reads must be exactly the settings package.json declares, with the
// same defaults and ranges, and the commands the code registers must be declared too.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { defaultSettings, resolveSettings, settingKeys } from '../../src/core/config/settings';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const declared: Record<string, { default: unknown; minimum?: number; maximum?: number; enum?: string[] }> = manifest.contributes.configuration.properties;

describe('settings', () => {
  it('declares every core setting in package.json with the same default', () => {
    for (const [key, value] of Object.entries(defaultSettings)) {
      const name = settingKeys[key as keyof typeof settingKeys];
      const entry = declared[name];
      assert.ok(entry, `${name} is missing from package.json`);
      assert.deepEqual(entry.default, value, `default of ${name}`);
    }
  });

  it('has no setting in package.json that the core does not read', () => {
    const known = new Set(Object.values(settingKeys));
    for (const key of Object.keys(declared)) assert.ok(known.has(key), `${key} is declared but unused`);
  });

  it('clamps numbers to the declared ranges and ignores wrong types', () => {
    const byKey = new Map(Object.entries(settingKeys).map(([field, key]) => [key, field as keyof typeof defaultSettings]));
    for (const [key, entry] of Object.entries(declared)) {
      const name = byKey.get(key)!;
      if (entry.minimum !== undefined) assert.equal(resolveSettings({ [name]: entry.minimum - 1000 })[name], entry.minimum, key);
      if (entry.maximum !== undefined) assert.equal(resolveSettings({ [name]: entry.maximum + 1000 })[name], entry.maximum, key);
      const wrong = typeof defaultSettings[name] === 'string' ? 42 : 'nonsense';
      assert.deepEqual(resolveSettings({ [name]: wrong })[name], defaultSettings[name], key);
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
