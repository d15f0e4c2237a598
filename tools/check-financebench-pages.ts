/**
 * Acceptance check for the PDF parser against FinanceBench (not a unit test: the data is not in
 * the repository). For every evidence item of every question it parses the question's PDF with
 * Canopy's parser and checks that the page node with the evidence's 0-based page index holds at
 * least 80% of the evidence text's lower-cased word tokens (counted with multiplicity). Prints
 * the share of passing evidence items and each PDF's parse time.
 *
 *   npx tsx tools/check-financebench-pages.ts <questions.jsonl> [--json] [--verbose]
 *       [--headings <file.pdf> <reference.md>]
 *
 * `pdf_file` in each question is relative to the folder of questions.jsonl. With --headings it
 * also compares the headings detected in a PDF with the `#` headings of a reference Markdown
 * rendering of it (a sanity check of heading detection).
 */

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseFile } from '../src/core/ingest/parseFile';
import type { ParsedDocument } from '../src/core/ingest/parsedDocument';
import type { RegionNode } from '../src/contracts/region';

interface Evidence {
  evidence_text: string;
  evidence_page_num: number;
}
interface Question {
  financebench_id?: string;
  pdf_file: string;
  evidence: Evidence[];
}

const threshold = 0.8;

function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Share of `evidence` tokens found in `page` tokens, counting each page token once. */
function coverage(evidence: string, page: string): { share: number; missing: string[] } {
  const ev = tokens(evidence);
  if (ev.length === 0) return { share: 1, missing: [] };
  const bag = new Map<string, number>();
  for (const t of tokens(page)) bag.set(t, (bag.get(t) ?? 0) + 1);
  let hit = 0;
  const missing: string[] = [];
  for (const t of ev) {
    const n = bag.get(t) ?? 0;
    if (n > 0) {
      hit++;
      bag.set(t, n - 1);
    } else missing.push(t);
  }
  return { share: hit / ev.length, missing };
}

function pageTexts(doc: ParsedDocument): Map<number, string> {
  const out = new Map<number, string>();
  const walk = (n: RegionNode): void => {
    if (n.kind === 'page' && n.anchor.page !== undefined) {
      out.set(n.anchor.page, n.text);
      return;
    }
    for (const c of n.children) walk(c);
  };
  for (const item of doc.items) walk(item.root);
  return out;
}

function headings(doc: ParsedDocument): string[] {
  const out: string[] = [];
  const walk = (n: RegionNode): void => {
    if (n.kind === 'heading') out.push(n.text);
    for (const c of n.children) walk(c);
  };
  for (const item of doc.items) walk(item.root);
  return out;
}

const norm = (s: string): string => tokens(s).join(' ');

async function checkHeadings(pdfPath: string, mdPath: string, json: boolean): Promise<Record<string, unknown>> {
  const doc = await parseFile(pdfPath.replace(/\\/g, '/').split('/').pop()!, readFileSync(pdfPath), { graph: false });
  const found = headings(doc).map(norm);
  const reference = readFileSync(mdPath, 'utf8')
    .split(/\r?\n/)
    .filter((l) => /^#{1,6}\s/.test(l))
    .map((l) => norm(l.replace(/^#+\s*/, '')));
  const foundSet = new Set(found);
  const refSet = new Set(reference);
  const hits = reference.filter((r) => foundSet.has(r)).length;
  const correct = found.filter((f) => refSet.has(f)).length;
  const result = {
    pdf: pdfPath,
    referenceHeadings: reference.length,
    detectedHeadings: found.length,
    recall: reference.length ? hits / reference.length : 1,
    precision: found.length ? correct / found.length : 1,
    missed: reference.filter((r) => !foundSet.has(r)),
    extra: found.filter((f) => !refSet.has(f)),
  };
  if (!json) {
    console.log(`\nHeadings in ${pdfPath} vs ${mdPath}:`);
    console.log(`  reference ${result.referenceHeadings}, detected ${result.detectedHeadings}, recall ${result.recall.toFixed(2)}, precision ${result.precision.toFixed(2)}`);
    if (result.missed.length) console.log(`  missed: ${result.missed.join(' | ')}`);
    if (result.extra.length) console.log(`  extra:  ${result.extra.join(' | ')}`);
  }
  return result;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const verbose = args.includes('--verbose');
  const hIdx = args.indexOf('--headings');
  const headingArgs = hIdx >= 0 ? args.slice(hIdx + 1, hIdx + 3) : [];
  const positional = args.filter((a, i) => !a.startsWith('--') && (hIdx < 0 || i < hIdx || i > hIdx + 2));
  const questionsPath = positional[0];
  if (!questionsPath) {
    console.error('usage: check-financebench-pages.ts <questions.jsonl> [--json] [--verbose] [--headings <file.pdf> <reference.md>]');
    process.exit(2);
  }
  const base = dirname(resolve(questionsPath));
  const questions: Question[] = readFileSync(questionsPath, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Question);

  const docs = new Map<string, { pages: Map<number, string>; ms: number; pageCount: number; error?: string }>();
  let total = 0;
  let passed = 0;
  const failures: Array<Record<string, unknown>> = [];
  for (const q of questions) {
    let parsed = docs.get(q.pdf_file);
    if (!parsed) {
      const started = Date.now();
      try {
        const doc = await parseFile(q.pdf_file, readFileSync(resolve(base, q.pdf_file)), { graph: false });
        parsed = { pages: pageTexts(doc), ms: Date.now() - started, pageCount: doc.pages?.length ?? 0 };
      } catch (err) {
        parsed = { pages: new Map(), ms: Date.now() - started, pageCount: 0, error: err instanceof Error ? err.message : String(err) };
      }
      docs.set(q.pdf_file, parsed);
      if (!json) console.log(`parsed ${q.pdf_file}: ${parsed.pageCount} pages in ${(parsed.ms / 1000).toFixed(1)} s${parsed.error ? ` — ERROR ${parsed.error}` : ''}`);
    }
    for (const ev of q.evidence) {
      total++;
      const page = parsed.pages.get(ev.evidence_page_num) ?? '';
      const c = coverage(ev.evidence_text, page);
      if (c.share >= threshold) passed++;
      else {
        failures.push({ id: q.financebench_id, pdf: q.pdf_file, page: ev.evidence_page_num, share: Math.round(c.share * 1000) / 1000, missing: c.missing.slice(0, 25) });
      }
    }
  }
  const times = [...docs.entries()].map(([pdf, d]) => ({ pdf, pages: d.pageCount, seconds: Math.round(d.ms / 100) / 10 }));
  const totalSeconds = times.reduce((s, t) => s + t.seconds, 0);
  const result: Record<string, unknown> = {
    questions: questions.length,
    evidenceItems: total,
    passed,
    share: total ? passed / total : 0,
    threshold,
    pdfs: times,
    totalParseSeconds: Math.round(totalSeconds * 10) / 10,
    failures,
  };
  if (headingArgs.length === 2) result.headings = await checkHeadings(headingArgs[0]!, headingArgs[1]!, json);
  if (json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(`\nEvidence pages: ${passed} / ${total} evidence items pass (${((100 * passed) / Math.max(1, total)).toFixed(1)}%; ≥ ${threshold * 100}% of tokens on the page).`);
    console.log(`Parse time: ${totalSeconds.toFixed(1)} s for ${times.length} PDFs (${times.map((t) => `${t.pdf} ${t.seconds}s/${t.pages}p`).join(', ')}).`);
    for (const f of failures) {
      console.log(`  FAIL ${String(f.id)} ${String(f.pdf)} p.${String(f.page)} share ${String(f.share)}${verbose ? ` missing: ${(f.missing as string[]).join(' ')}` : ''}`);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
