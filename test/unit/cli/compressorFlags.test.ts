// CANOPY's flags (canopy ask, bench realdocs, bench corpus): each becomes the setting of the same
// name, explicit node-score weights travel with the request, a bad value is a usage error naming
// the flag, and the flags written back for a spawned `canopy ask` parse to the same choices.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canopyCompressor, defaultSettings, resolveSettings } from '../../../src/core/config/settings';
import { compressorFlagArgs, compressorFlags, parseNodeScore } from '../../../src/cli/compressorFlags';
import { UsageError } from '../../../src/cli/io';
import { parseCompressor } from '../../../src/cli/commands/ask';

const usage = (flag: string) => (err: unknown) => err instanceof UsageError && (err as Error).message.startsWith(flag);

describe('CANOPY flags', () => {
  it('turn into the canopy.compressor.* settings, and the compressor the settings describe', () => {
    const f = compressorFlags({ 'gate-items': '0.3', 'whole-below': '600', 'min-items': '4', glimpse: '1', 'node-score': 'dense' });
    assert.deepEqual(f.settings, { compressorItems: 0.3, compressorWholeBelow: 600, compressorMinItems: 4, compressorGlimpse: 1, nodeScore: 'dense' });
    assert.equal(f.nodeScore, undefined);
    assert.deepEqual(canopyCompressor(resolveSettings(f.settings)), { name: 'canopy', items: 0.3, wholeBelow: 600, minItems: 4, glimpse: 1 });
    // No flags: the defaults' compressor — CANOPY with the rank gate and a glimpse of one leaf.
    assert.deepEqual(compressorFlags({}).settings, {});
    assert.deepEqual(canopyCompressor(resolveSettings(compressorFlags({}).settings)), canopyCompressor(defaultSettings));
    assert.deepEqual(canopyCompressor(defaultSettings), { name: 'canopy', items: 0.3, wholeBelow: 800, minItems: 4, glimpse: 1 });
    assert.deepEqual(canopyCompressor(resolveSettings(compressorFlags({ glimpse: '0' }).settings)), { name: 'canopy', items: 0.3, wholeBelow: 800, minItems: 4 });
    // The design's plain rule, as the help says.
    assert.deepEqual(canopyCompressor(resolveSettings(compressorFlags({ 'gate-items': '0', glimpse: '0' }).settings)), { name: 'canopy' });
  });

  it('without the gate, its whole-item size and least count are left out of the compressor; the glimpse stays', () => {
    const c = canopyCompressor(resolveSettings({ compressorItems: 0, compressorWholeBelow: 600, compressorMinItems: 4, compressorGlimpse: 2 }));
    assert.deepEqual(c, { name: 'canopy', glimpse: 2 });
    assert.deepEqual(canopyCompressor(resolveSettings({ compressorItems: 0, compressorGlimpse: 0 })), { name: 'canopy' });
  });

  it('explicit node-score weights go to the request, not the settings', () => {
    const f = compressorFlags({ 'node-score': 'dense=1,lexical=0.5,model=coverage' });
    assert.deepEqual(f.nodeScore, { dense: 1, lexical: 0.5, model: 'coverage' });
    assert.deepEqual(f.settings, {});
    assert.deepEqual(compressorFlags({ 'node-score': 'profile' }).settings, { nodeScore: 'profile' });
  });

  it('refuses values outside the shared ranges as usage errors naming the flag', () => {
    assert.throws(() => compressorFlags({ 'gate-items': '0.01' }), usage('--gate-items'));
    assert.throws(() => compressorFlags({ 'gate-items': '1.5' }), usage('--gate-items'));
    assert.throws(() => compressorFlags({ 'gate-items': 'some' }), usage('--gate-items'));
    assert.throws(() => compressorFlags({ 'whole-below': '-1' }), usage('--whole-below'));
    assert.throws(() => compressorFlags({ 'min-items': '0' }), usage('--min-items'));
    assert.throws(() => compressorFlags({ glimpse: '1.5' }), usage('--glimpse'));
    assert.throws(() => compressorFlags({ 'node-score': 'hybrid' }), usage('--node-score'));
    assert.throws(() => parseNodeScore('dense=1,lexical=500'), usage('--node-score'));
    assert.throws(() => parseNodeScore('dense=-1'), usage('--node-score'));
    assert.equal(compressorFlags({ 'gate-items': '0' }).settings.compressorItems, 0);
  });

  it('written back as flags, parse to the same choices (what a benchmark passes to canopy ask)', () => {
    for (const values of [
      { 'gate-items': '0.3', 'whole-below': '600', 'min-items': '4', glimpse: '1', 'node-score': 'dense=1,lexical=0.5,model=coverage' },
      { 'gate-items': '0', glimpse: '0', 'node-score': 'dense' },
      {},
    ]) {
      const f = compressorFlags(values);
      const args = compressorFlagArgs(f);
      const back: Record<string, string> = {};
      for (let i = 0; i < args.length; i += 2) back[args[i]!.slice(2)] = args[i + 1]!;
      assert.deepEqual(compressorFlags(back), f, JSON.stringify(values));
    }
  });

  it('canopy ask: --compressor canopy leaves CANOPY to the settings; the others name their compressor', () => {
    assert.equal(parseCompressor(undefined), undefined);
    assert.equal(parseCompressor('canopy'), undefined);
    assert.deepEqual(parseCompressor('flat:3'), { name: 'flat', m: 3 });
    assert.deepEqual(parseCompressor('none'), { name: 'none' });
  });
});
