// Renders media/icon.svg to media/icon.png (256×256, transparent corners) with headless Chromium,
// the marketplace icon (vsce wants a PNG). Run after editing the SVG: node tools/render-icon.mjs
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const svg = readFileSync(new URL('../media/icon.svg', import.meta.url), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CANOPY_CHROMIUM || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 256, height: 256 }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: new URL('../media/icon.png', import.meta.url).pathname, omitBackground: true });
} finally {
  await browser.close();
}
