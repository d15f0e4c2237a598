/**
 * Times the resource-limit test's hostile PDF (one page, N text-show operators in a FlateDecode
 * stream) parsed with and without the per-file time limit — the figure in docs/reliability.md.
 *
 *   node --import tsx tools/hostile-pdf.ts [--runs 150000] [--limit-ms 1000]
 */
import { parseArgs } from 'node:util';
import { parseFile } from '../src/core/ingest/parseFile';
import { hostilePdf } from '../test/unit/security/hostilePdf';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, 'limit-ms': { type: 'string' } } });
  const runs = Number(values.runs ?? 150_000);
  const limitMs = Number(values['limit-ms'] ?? 1_000);
  await parseFile('warm.pdf', hostilePdf([2]), { graph: false }); // load pdf.js first
  const bytes = hostilePdf([runs]);
  const timed = async (what: string, timeLimitMs: number) => {
    const t = Date.now();
    const cpu0 = process.cpuUsage();
    let outcome: string;
    try {
      const doc = await parseFile('hostile.pdf', bytes, { graph: false, timeLimitMs });
      outcome = `parsed: ${doc.items.length} item(s), ${doc.stats.nodes} nodes`;
    } catch (err) {
      outcome = `${(err as { code?: string }).code}: ${(err as Error).message}`;
    }
    const cpu = process.cpuUsage(cpu0);
    console.log(`${what}: ${((Date.now() - t) / 1000).toFixed(1)} s wall, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU — ${outcome}`);
  };
  console.log(`hostile PDF: ${runs} text runs on one page, ${bytes.length} bytes`);
  await timed(`with a ${limitMs} ms limit`, limitMs);
  await timed('without a limit', 3_600_000);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
