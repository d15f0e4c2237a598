// `--compressor canopy:…` options of the rank gate: parsed into the pipeline's setting, labelled
// back the same way, and refused outside their ranges with the option named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compressorLabel, parseEvalCompressor } from '../../../src/eval/configs';

describe('eval compressor options', () => {
  it('parses the rank gate with min and glimpse and labels it back', () => {
    const p = parseEvalCompressor('canopy:items=0.3,whole=600,min=4,glimpse=1');
    assert.deepEqual(p.compressor, { name: 'canopy', items: 0.3, wholeBelow: 600, minItems: 4, glimpse: 1 });
    assert.equal(compressorLabel(p.compressor, p.groupVectors), 'canopy:items=0.3,whole=600,min=4,glimpse=1');
    // A glimpse without the gate is the projection's own option.
    assert.deepEqual(parseEvalCompressor('canopy:glimpse=2').compressor, { name: 'canopy', glimpse: 2 });
    // The glimpse floor (measured, off by default: docs/evaluation.md).
    const f = parseEvalCompressor('canopy:items=0.3,min=4,glimpse=1,floor=0.8');
    assert.deepEqual(f.compressor, { name: 'canopy', items: 0.3, minItems: 4, glimpse: 1, glimpseFloor: 0.8 });
    assert.equal(compressorLabel(f.compressor, f.groupVectors), 'canopy:items=0.3,min=4,glimpse=1,floor=0.8');
    for (const bad of ['canopy:glimpse=1,floor=0.8', 'canopy:items=0.3,floor=0.8', 'canopy:items=0.3,glimpse=1,floor=']) {
      assert.throws(() => parseEvalCompressor(bad), (e: Error) => e.message.includes('floor='), bad);
    }
  });

  it('refuses values outside the ranges, naming the option', () => {
    for (const bad of ['canopy:min=0', 'canopy:min=2.5', 'canopy:glimpse=-1', 'canopy:glimpse=101', 'canopy:floor=1.5']) {
      assert.throws(() => parseEvalCompressor(bad), (e: Error) => e.message.includes(bad.slice('canopy:'.length)) && /min=<items>, glimpse=<leaves>/.test(e.message), bad);
    }
  });

  it('refuses whole= and min= without items=, which turns the gate on', () => {
    for (const bad of ['canopy:whole=600', 'canopy:min=4', 'canopy:whole=600,glimpse=1']) {
      assert.throws(() => parseEvalCompressor(bad), (e: Error) => e.message.includes(bad) && /items=<share> turns on/.test(e.message), bad);
    }
    assert.equal(parseEvalCompressor('canopy:items=0.3,min=4').compressor.name, 'canopy');
  });
});
