/**
 * The parse workers of one host (core/ingest/parsePool.ts: a per-file memory limit and a hard
 * time limit), shared by indexing and adapter training so that every file Canopy parses goes
 * through them. Kept between runs so a re-index does not start them again; a changed
 * `canopy.maxParseMemoryMB` replaces the pool on the next request.
 */
import type { ParseOptions, ParsedDocument } from '../ingest/parsedDocument';
import { ParsePool } from '../ingest/parsePool';
import { silentLogger, type Logger } from '../ports';

export class ParseWorkers {
  private current: ParsePool | undefined;
  private readonly log: Logger;

  constructor(logger?: Logger) {
    this.log = logger ?? silentLogger;
  }

  /** The pool with this memory limit (the last one, unless the limit changed). */
  pool(maxMemoryMB: number): ParsePool {
    if (this.current?.maxMemoryMB !== maxMemoryMB) {
      void this.current?.close();
      this.current = new ParsePool({ maxMemoryMB, logger: this.log });
    }
    return this.current;
  }

  /** `parseFile` in a worker with this memory limit. */
  parse(maxMemoryMB: number, relPath: string, bytes: Uint8Array, options: ParseOptions = {}): Promise<ParsedDocument> {
    return this.pool(maxMemoryMB).parse(relPath, bytes, options);
  }

  async close(): Promise<void> {
    const pool = this.current;
    this.current = undefined;
    await pool?.close();
  }
}
