/**
 * Small measuring helpers shared by the benchmarks: medians and percentiles, wall and CPU time,
 * the process's peak resident set, folder sizes, and the machine a run was measured on.
 */
import { readdirSync, statSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile (p in [0, 1]). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
}

export interface Latency {
  n: number;
  p50: number;
  p95: number;
  mean: number;
}

export function latency(ms: readonly number[]): Latency {
  return { n: ms.length, p50: percentile(ms, 0.5), p95: percentile(ms, 0.95), mean: ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length) };
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; cpuSeconds: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const c = process.cpuUsage(c0);
  return { value, seconds: (performance.now() - t0) / 1000, cpuSeconds: (c.user + c.system) / 1e6 };
}

/** Peak resident set of this process so far, in MiB. */
export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

export function folderBytes(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const p = join(dir, name);
    const st = statSync(p);
    total += st.isDirectory() ? folderBytes(p) : st.size;
  }
  return total;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  loadAverage1m: number;
}

export function machine(): Machine {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
