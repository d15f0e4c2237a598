/**
 * Writes answers' traces as OpenInference spans (openInference.ts) with the OpenTelemetry JS SDK:
 * to an OTLP/HTTP endpoint (protobuf — what Phoenix, Langfuse, Jaeger and the OTel Collector
 * accept on `/v1/traces`) and/or to a file of OTLP JSON lines (one ExportTraceServiceRequest per
 * line, the Collector's file format). The CLI (`--otlp-endpoint`, `--otlp-file`), the MCP server
 * and the extension (`canopy.export.*` settings) build one of these; a failed export is reported
 * to the caller and never touches the answer.
 *
 * Spans carry their trace's own times, so each export builds a fresh provider, records the span
 * tree into memory and hands the finished spans to the exporters directly: their result (and the
 * error, e.g. a refused connection) comes back to the caller instead of vanishing into a batch
 * processor's diagnostics.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import * as path from 'node:path';
import type { Context } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { CanopyError, ErrorCodes } from '../errors';
import type { AskTrace } from '../../contracts/trace';
import { traceToSpans, type OpenInferenceOptions, type SpanSpec } from './openInference';

/**
 * The OpenTelemetry SDK, loaded at the first export rather than with this module (some 250
 * modules): the CLI, the MCP server and the extension import this file whether or not an export
 * is configured.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
function loadOtel() {
  const { SEMRESATTRS_PROJECT_NAME } = require('@arizeai/openinference-semantic-conventions') as typeof import('@arizeai/openinference-semantic-conventions');
  const { context, SpanKind, trace } = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { ExportResultCode } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer') as typeof import('@opentelemetry/otlp-transformer');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  return { SEMRESATTRS_PROJECT_NAME, context, SpanKind, otelTrace: trace, ExportResultCode, OTLPTraceExporter, JsonTraceSerializer, resourceFromAttributes, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider };
}
/* eslint-enable @typescript-eslint/no-require-imports */
let otelModules: ReturnType<typeof loadOtel> | undefined;
const otel = () => (otelModules ??= loadOtel());

export interface TraceExportConfig {
  /** OTLP/HTTP endpoint: a base URL (`http://localhost:6006`) or the full traces URL (`…/v1/traces`). */
  endpoint?: string;
  /** Extra request headers (e.g. an API key header a hosted backend wants). */
  headers?: Record<string, string>;
  /** A file that receives one OTLP JSON line per answer. */
  file?: string;
  /** `openinference.project.name` (Phoenix files traces under it). Default "canopy". */
  project?: string;
  /** service.version on the resource. */
  version?: string;
  timeoutMs?: number;
  mapping?: OpenInferenceOptions;
}

/** The traces URL of an endpoint setting: `…/v1/traces` is kept, a base URL gets it appended. */
export function tracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    throw new CanopyError(ErrorCodes.badInput, `the OTLP endpoint "${endpoint}" is not a URL (e.g. http://localhost:6006/v1/traces)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CanopyError(ErrorCodes.badInput, `the OTLP endpoint "${endpoint}" must be http or https`);
  if (!/\/v1\/traces\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

/** Records the span tree with a real tracer and returns the finished spans. */
export function recordSpans(root: SpanSpec, config: Pick<TraceExportConfig, 'project' | 'version'> = {}): ReadableSpan[] {
  const { context, InMemorySpanExporter, resourceFromAttributes, SEMRESATTRS_PROJECT_NAME, SimpleSpanProcessor, SpanKind, otelTrace, TracerProvider } = otel();
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': 'canopy',
      ...(config.version ? { 'service.version': config.version } : {}),
      [SEMRESATTRS_PROJECT_NAME]: config.project ?? 'canopy',
    }),
    // Retrieval and compression spans list many documents (four attributes each).
    spanLimits: { attributeCountLimit: 8192, eventCountLimit: 4096, attributePerEventCountLimit: 64 },
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer('canopy', config.version);
  const start = (spec: SpanSpec, parent: Context) => {
    const span = tracer.startSpan(spec.name, { kind: SpanKind.INTERNAL, startTime: spec.startMs, attributes: { 'openinference.span.kind': spec.kind, ...spec.attributes } }, parent);
    for (const e of spec.events ?? []) span.addEvent(e.name, e.attributes, e.timeMs);
    const ctx = otelTrace.setSpan(parent, span);
    for (const child of spec.children) start(child, ctx);
    span.end(spec.endMs);
  };
  start(root, context.active());
  return memory.getFinishedSpans();
}

function exportWith(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

/** A file exporter: one OTLP JSON ExportTraceServiceRequest per line. */
class JsonLinesFileExporter implements SpanExporter {
  constructor(private readonly file: string) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const { ExportResultCode, JsonTraceSerializer } = otel();
    const bytes = JsonTraceSerializer.serializeRequest(spans);
    if (!bytes) {
      done({ code: ExportResultCode.FAILED, error: new Error('the spans could not be serialised') });
      return;
    }
    mkdir(path.dirname(this.file), { recursive: true })
      .then(() => appendFile(this.file, `${Buffer.from(bytes).toString('utf8')}\n`))
      .then(
        () => done({ code: ExportResultCode.SUCCESS }),
        (error: Error) => done({ code: ExportResultCode.FAILED, error }),
      );
  }
  async shutdown(): Promise<void> {}
}

export class TraceExporter {
  private readonly url: string | undefined;

  constructor(private readonly config: TraceExportConfig) {
    if (!config.endpoint && !config.file) throw new CanopyError(ErrorCodes.badInput, 'trace export needs an OTLP endpoint or a file');
    this.url = config.endpoint ? tracesUrl(config.endpoint) : undefined;
  }

  /** Where the spans go, for messages. */
  describe(): string {
    return [this.url, this.config.file].filter(Boolean).join(' and ');
  }

  /** Exports one answer; rejects with CanopyError naming the destination when a destination refused it. */
  async export(trace: AskTrace): Promise<{ spans: number }> {
    const { ExportResultCode, OTLPTraceExporter } = otel();
    const spans = recordSpans(traceToSpans(trace, this.config.mapping), this.config);
    const failures: string[] = [];
    if (this.url) {
      const exporter = new OTLPTraceExporter({ url: this.url, ...(this.config.headers ? { headers: this.config.headers } : {}), timeoutMillis: this.config.timeoutMs ?? 10_000 });
      try {
        const result = await exportWith(exporter, spans);
        if (result.code !== ExportResultCode.SUCCESS) failures.push(`${this.url}: ${result.error?.message ?? 'export failed'}`);
      } finally {
        await exporter.shutdown().catch(() => undefined);
      }
    }
    if (this.config.file) {
      const result = await exportWith(new JsonLinesFileExporter(this.config.file), spans);
      if (result.code !== ExportResultCode.SUCCESS) failures.push(`${this.config.file}: ${result.error?.message ?? 'write failed'}`);
    }
    if (failures.length > 0) throw new CanopyError(ErrorCodes.writeFailed, `trace ${trace.id} was not exported: ${failures.join('; ')}`);
    return { spans: spans.length };
  }
}
