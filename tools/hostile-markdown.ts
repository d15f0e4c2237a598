/**
 * The hostile Markdown of the memory-limit figures (docs/reliability.md): a list of one-letter
 * items (`- a`, 4 bytes each) that mdast-util-from-markdown needs ~3,700 times the file's size in
 * heap to parse. Parses it through a ParsePool (a worker with a heap limit) or in this thread, and
 * prints the outcome, the time and the peak RSS of the process (worker heaps included). The
 * graph is left out (the heap runs out in the Markdown parser, before it).
 *
 *   node --import tsx tools/hostile-markdown.ts [--kb 1024] [--limit-mb 1024] [--in-process] [--write <file>]
 *
 * `--kind prose` / `--kind csv` make an ordinary file of the same size instead (paragraphs under
 * headings; survey rows), to check that the limit leaves normal files alone.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseFile } from '../src/core/ingest/parseFile';
import { ParsePool } from '../src/core/ingest/parsePool';

const { values } = parseArgs({ options: { kind: { type: 'string' }, kb: { type: 'string' }, 'limit-mb': { type: 'string' }, 'in-process': { type: 'boolean' }, write: { type: 'string' } } });
const kb = Number(values.kb ?? 1024);
const limitMb = Number(values['limit-mb'] ?? 1024);
const kind = values.kind ?? 'list';
const name = kind === 'csv' ? 'survey.csv' : kind === 'prose' ? 'report.md' : 'hostile.md';
const bytes = Buffer.from(kind === 'list' ? '- a\n'.repeat(kb * 256) : ordinary(kind, kb * 1024));

function ordinary(kind: string, target: number): string {
  const parts: string[] = [];
  let len = 0;
  const para =
    'The survey team measured the canopy cover of every plot twice a year, in spring and in late summer. Ash dieback was recorded where crowns had lost more than half of their leaves. ';
  if (kind === 'csv') parts.push('plot,date,species,height_m,dbh_cm,notes\n');
  for (let i = 0; len < target; i++) {
    const s =
      kind === 'csv'
        ? `P${i % 50},2023-0${(i % 9) + 1}-1${i % 10},Fraxinus excelsior,${(i % 30) + 3}.${i % 10},${(i % 80) + 10},crown thinning observed near the north edge\n`
        : i % 20 === 0
          ? `\n## Section ${i}\n\n`
          : `${para}${para}\n\n`;
    parts.push(s);
    len += s.length;
  }
  return parts.join('');
}
if (values.write) {
  writeFileSync(values.write, bytes);
  console.log(`wrote ${values.write}: ${bytes.length} bytes`);
  process.exit(0);
}

let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const pool = values['in-process'] ? undefined : new ParsePool({ maxMemoryMB: limitMb, size: 1 });
  await (pool ? pool.parse('warm.md', Buffer.from('# a\n')) : parseFile('warm.md', Buffer.from('# a\n')));
  const t0 = Date.now();
  const options = { timeLimitMs: 3_600_000, graph: kind !== 'list' };
  const outcome = await (pool ? pool.parse(name, bytes, options) : parseFile(name, bytes, options)).then(
    (doc) => `parsed: ${doc.stats.nodes} nodes`,
    (err: Error & { code?: string }) => `${err.code ?? err.name}: ${err.message}`,
  );
  const ms = Date.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(`${(bytes.length / 1024).toFixed(0)} KB ${kind}, ${pool ? `worker with a ${limitMb} MB heap limit` : 'in-process'}: ${outcome}`);
  console.log(`  ${(ms / 1000).toFixed(1)} s; peak RSS of the process ${mib(peak)}; this thread's heap now ${mib(process.memoryUsage().heapUsed)}`);
  await pool?.close();
}

void main();
