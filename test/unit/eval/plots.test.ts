// The SVG figures: text is escaped, axes get round ticks, every series and point is drawn.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeXml, niceTicks, qualityTokenSvg, recallByRoundSvg } from '../../../src/eval/plots';

const iv = (value: number, lo = value, hi = value) => ({ value, lo, hi, n: 10 });

describe('plots', () => {
  it('escapes text and picks round ticks', () => {
    assert.equal(escapeXml('a<b & "c"'), 'a&lt;b &amp; &quot;c&quot;');
    assert.deepEqual(niceTicks(0, 1000), [0, 200, 400, 600, 800, 1000]);
    assert.deepEqual(niceTicks(0.2, 0.95, 4), [0.2, 0.4, 0.6, 0.8]);
  });

  it('quality–token curve: the flat line through its points, numbered other points with a legend', () => {
    const svg = qualityTokenSvg(
      [
        { config: 'flat:5', family: 'flat', m: 5, tokens: iv(100, 90, 110), recall: iv(0.3, 0.2, 0.4) },
        { config: 'flat:10', family: 'flat', m: 10, tokens: iv(200), recall: iv(0.5) },
        { config: 'flat:20', family: 'flat', m: 20, tokens: iv(400), recall: iv(0.8) },
        { config: 'canopy <B=2>', family: 'canopy', tokens: iv(300), recall: iv(0.75, 0.7, 0.8) },
        { config: 'peer', family: 'peer', tokens: iv(300), recall: iv(0.6) },
      ],
      { title: 'Recall & tokens' },
    );
    assert.match(svg, /<title>Recall &amp; tokens<\/title>/);
    assert.equal((svg.match(/<polyline/g) ?? []).length, 1);
    assert.match(svg, /<polyline[^>]+points="[\d.]+,[\d.]+ [\d.]+,[\d.]+ [\d.]+,[\d.]+"/);
    assert.match(svg, /canopy &lt;B=2&gt;/);
    assert.match(svg, /peer \(vectra\)/);
    assert.match(svg, />m=10</);
    assert.ok(!svg.includes('NaN'));
  });

  it('recall by round: one line per configuration, a point per round', () => {
    const svg = recallByRoundSvg(
      [
        { config: 'canopy R=3', values: [iv(0.5, 0.4, 0.6), iv(0.6), iv(0.65)] },
        { config: 'none R=3', values: [iv(0.5), iv(0.55), iv(0.58)] },
      ],
      { title: 'By round', yLabel: 'all gold' },
    );
    assert.equal((svg.match(/<polyline/g) ?? []).length, 2);
    assert.equal((svg.match(/<circle/g) ?? []).length, 6);
    assert.ok(!svg.includes('NaN'));
  });
});
