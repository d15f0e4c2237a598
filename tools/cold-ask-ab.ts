/**
 * Cold `canopy ask` processes of several builds (or indexes) interleaved question by question, so
 * every configuration runs under the same machine load: on a shared 2-core machine two benchmark
 * runs minutes apart are not comparable, one interleaved run is. Prints p50 / p95 of wall and CPU
 * time (user + system of the child) per configuration and question source, says whether each
 * configuration's traces match the first one's (every field but timings and ids), and writes the
 * rows as JSON.
 *
 *   node --import tsx tools/cold-ask-ab.ts --questions <canopy bench realdocs --out JSON> \
 *     --config base=<dir of an older checkout>:<work folder> --config new=.:<work folder> [--out ab.json]
 *
 * A configuration is name=<package folder with bin/canopy.js>:<work folder with corpus/ and index/>.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

interface Config {
  name: string;
  bin: string;
  work: string;
}
interface Question {
  id: string;
  source: string;
  question: string;
}

const { values } = parseArgs({ options: { questions: { type: 'string' }, config: { type: 'string', multiple: true }, out: { type: 'string' } } });
if (!values.questions || !values.config || values.config.length < 2) {
  console.error('usage: tools/cold-ask-ab.ts --questions <realdocs report.json> --config name=<package>:<work> --config … [--out file]');
  process.exit(2);
}
const configs: Config[] = values.config.map((c) => {
  const m = /^([^=]+)=([^:]+):(.+)$/.exec(c);
  if (!m) throw new Error(`--config ${c}: expected name=<package folder>:<work folder>`);
  return { name: m[1]!, bin: join(resolve(m[2]!), 'bin', 'canopy.js'), work: resolve(m[3]!) };
});
const tmp = mkdtempSync(join(tmpdir(), 'canopy-ab-'));
const questions = (JSON.parse(readFileSync(values.questions, 'utf8')) as { questions: Question[] }).questions;

/** One cold process: wall and CPU seconds, and the trace it printed. */
function ask(c: Config, q: string): Promise<{ wall: number; cpu: number; trace?: unknown; error?: string }> {
  return new Promise((done) => {
    // stdout to a file (a pipe cut the output of canopy builds before e1ce7cb at 64 KiB); the
    // child's CPU from /usr/bin/time, the last line of its stderr.
    const outFile = join(tmp, 'out.json');
    const fd = openSync(outFile, 'w');
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%U %S', process.execPath, c.bin, 'ask', '--dir', join(c.work, 'corpus'), '--index', join(c.work, 'index'), '--json', '--', q], { stdio: ['ignore', fd, 'pipe'] });
    const err: Buffer[] = [];
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('close', (code) => {
      const wall = (performance.now() - t0) / 1000;
      closeSync(fd);
      const stderr = Buffer.concat(err).toString('utf8').trim().split('\n');
      const [user, system] = (stderr.pop() ?? '0 0').split(' ').map(Number);
      const cpu = (user ?? 0) + (system ?? 0);
      if (code !== 0) return done({ wall, cpu, error: stderr.slice(-3).join(' ') });
      const text = readFileSync(outFile, 'utf8').trim();
      done({ wall, cpu, trace: JSON.parse(text.slice(text.lastIndexOf('\n') + 1)) });
    });
  });
}

/** A trace without what differs between two runs of the same question: timings, ids, dates, and where the index is. */
function stable(x: unknown, top = true): unknown {
  if (Array.isArray(x)) return x.map((v) => stable(v, false));
  if (x && typeof x === 'object') {
    return Object.fromEntries(
      Object.entries(x)
        .filter(([k]) => !['ms', 'id', 'createdAt'].includes(k) && !k.endsWith('Ms') && !(top && k === 'index'))
        .map(([k, v]) => [k, stable(v, false)]),
    );
  }
  return x;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const k = (s.length - 1) * p;
  const f = Math.floor(k);
  const c = Math.min(f + 1, s.length - 1);
  return s[f]! + (s[c]! - s[f]!) * (k - f);
}

async function main(): Promise<void> {
  const rows: Array<{ id: string; source: string; runs: Record<string, { wall: number; cpu: number; error?: string; sameAsFirst?: boolean }> }> = [];
  const loadStart = loadavg();
  for (const [i, q] of questions.entries()) {
    const order = [...configs.slice(i % configs.length), ...configs.slice(0, i % configs.length)];
    const runs: (typeof rows)[number]['runs'] = {};
    const traces = new Map<string, string>();
    for (const c of order) {
      const r = await ask(c, q.question);
      runs[c.name] = { wall: r.wall, cpu: r.cpu, ...(r.error ? { error: r.error } : {}) };
      if (r.trace) traces.set(c.name, JSON.stringify(stable(r.trace)));
    }
    const first = traces.get(configs[0]!.name);
    for (const c of configs) if (traces.has(c.name)) runs[c.name]!.sameAsFirst = traces.get(c.name) === first;
    rows.push({ id: q.id, source: q.source, runs });
    console.log(`${i + 1}/${questions.length} ${q.id} ${configs.map((c) => `${c.name} ${runs[c.name]!.wall.toFixed(2)} s`).join(', ')}`);
  }
  const loadEnd = loadavg();
  for (const group of ['all', ...new Set(questions.map((q) => q.source))]) {
    const rs = rows.filter((r) => group === 'all' || r.source === group);
    for (const c of configs) {
      const wall = rs.map((r) => r.runs[c.name]!.wall);
      const cpu = rs.map((r) => r.runs[c.name]!.cpu);
      const same = rs.filter((r) => r.runs[c.name]!.sameAsFirst).length;
      console.log(
        `${group.padEnd(12)} ${c.name.padEnd(16)} n=${rs.length} wall p50 ${percentile(wall, 0.5).toFixed(2)} p95 ${percentile(wall, 0.95).toFixed(2)} | cpu p50 ${percentile(cpu, 0.5).toFixed(2)} p95 ${percentile(cpu, 0.95).toFixed(2)} | trace as ${configs[0]!.name}: ${same}/${rs.length}`,
      );
    }
  }
  console.log(`load average at the start ${loadStart.map((x) => x.toFixed(2)).join(' / ')}, at the end ${loadEnd.map((x) => x.toFixed(2)).join(' / ')}`);
  if (values.out) writeFileSync(values.out, JSON.stringify({ configs, loadStart, loadEnd, rows }, null, 1));
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
