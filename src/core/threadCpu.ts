/**
 * CPU time of the calling thread (main or worker), for the indexing benchmark's "time each core
 * was busy" (core/index/indexTimings.ts). Linux only (`/proc/thread-self/stat`, 10 ms ticks);
 * undefined elsewhere, and the benchmark then reports wall-clock figures alone.
 */
import { readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on every Linux Node supports

let unavailable = process.platform !== 'linux';

/** User + system CPU time of this thread so far, ms; undefined where the platform does not tell. */
export function threadCpuMs(): number | undefined {
  if (unavailable) return undefined;
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'latin1');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    unavailable = true;
    return undefined;
  }
}
