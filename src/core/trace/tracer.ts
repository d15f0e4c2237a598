/**
 * Trace events: every stage writes what it decided into an injected Tracer. The trace is what
 * the inspector renders, so a stage that does not trace is invisible to the user.
 */

export interface TraceEvent {
  /** `stage/what`, e.g. `ingest/file`, `retrieve/items`, `compress/node`. */
  type: string;
  /** Milliseconds since the trace started. */
  t: number;
  data: Record<string, unknown>;
}

export interface Tracer {
  emit(type: string, data: Record<string, unknown>): void;
}

/** Collects events in memory, in order; the pipeline serialises them into the trace file. */
export class MemoryTracer implements Tracer {
  readonly events: TraceEvent[] = [];
  private readonly start: number;

  constructor(private readonly now: () => number = () => Date.now()) {
    this.start = now();
  }

  emit(type: string, data: Record<string, unknown>): void {
    this.events.push({ type, t: this.now() - this.start, data });
  }
}

export const nullTracer: Tracer = { emit: () => undefined };
