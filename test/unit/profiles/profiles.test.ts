// Document profiles (src/core/profiles): a document's traits — its language and the profiles it
// fits — read from its own opening text at parse time, never from its file name, and carried by
// every item of the document.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFile } from '../../../src/core/ingest/parseFile';
import { isFilingCover } from '../../../src/core/profiles/filings/detect';
import { documentTraits } from '../../../src/core/profiles/profiles';

const COVER = `UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended December 31, 2022`;

describe('document profiles', () => {
  it('knows a securities filing by its cover page: the regulator and the form', () => {
    assert.ok(isFilingCover(COVER));
    assert.ok(isFilingCover('SECURITIES AND EXCHANGE COMMISSION\nWashington\nFORM 8-K\nCURRENT REPORT'));
    assert.ok(!isFilingCover('# Release notes\n\nThe 10-K form field now validates on blur.'), 'a form name alone is no filing');
    assert.ok(!isFilingCover('The Securities and Exchange Commission regulates markets. It was founded in 1934.'), 'the regulator alone is no filing');
  });

  it('reads the language and the profiles of a document from its opening', () => {
    assert.deepEqual(documentTraits(COVER), { language: 'eng', profiles: ['filing'] });
    assert.deepEqual(documentTraits('Die Firma wurde im Jahr 1998 gegründet. Der Umsatz stieg und die Zahl der Mitarbeiter wuchs.'), { language: 'deu', profiles: [] });
  });

  it('gives every item of a parsed document its traits, whatever the file is called', async () => {
    const md = `# Annual report\n\n${COVER}\n\n## Item 1. Business\n\nWe design and sell widgets.\n`;
    const doc = await parseFile('reports/notes.md', Buffer.from(md), { graph: false });
    assert.ok(doc.items.length > 0);
    for (const item of doc.items) assert.deepEqual(item.traits, { language: 'eng', profiles: ['filing'] });
    const plain = await parseFile('10K_2023.md', Buffer.from('# Garden\n\nThe roses bloom in June and the lilies follow in July.\n'), { graph: false });
    for (const item of plain.items) assert.deepEqual(item.traits, { language: 'eng', profiles: [] });
  });
});
