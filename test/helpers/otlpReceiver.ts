/**
 * A loopback OTLP/HTTP receiver for the export tests: `POST /v1/traces` with a protobuf
 * ExportTraceServiceRequest, decoded here with protobufjs from the OTLP trace messages written
 * out below (field numbers from opentelemetry-proto's trace/v1 and common/v1 definitions), so the
 * test reads the wire bytes independently of the exporter's own serialiser. Spans come back
 * flattened, with attributes as plain values.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as protobuf from 'protobufjs';

const OTLP_TRACE_PROTO = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const requestType = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: true }).root.lookupType('ExportTraceServiceRequest');

type Plain = string | number | boolean | Plain[] | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, Plain>;
  events: Array<{ name: string; attributes: Record<string, Plain> }>;
  droppedAttributes: number;
}

export interface ReceivedRequest {
  path: string;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  resource: Record<string, Plain>;
  scope: string;
  spans: ReceivedSpan[];
}

function plain(v: Record<string, unknown> | undefined): Plain {
  if (!v) return null;
  if ('string_value' in v) return v.string_value as string;
  if ('bool_value' in v) return v.bool_value as boolean;
  if ('int_value' in v) return Number(v.int_value);
  if ('double_value' in v) return v.double_value as number;
  if ('array_value' in v) return ((v.array_value as { values?: Record<string, unknown>[] }).values ?? []).map(plain);
  return null;
}

function attributes(list: Array<{ key: string; value?: Record<string, unknown> }> | undefined): Record<string, Plain> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('hex');
const ms = (nanos: unknown) => Number(BigInt(String(nanos)) / 1_000_000n);

/** Decodes an OTLP protobuf ExportTraceServiceRequest body. */
export function decodeTraceRequest(body: Uint8Array): Omit<ReceivedRequest, 'path' | 'contentType' | 'headers'> {
  const msg = requestType.toObject(requestType.decode(body), { longs: String, bytes: Array, oneofs: false, defaults: false }) as {
    resource_spans?: Array<{ resource?: { attributes?: [] }; scope_spans?: Array<{ scope?: { name: string }; spans?: Array<Record<string, unknown>> }> }>;
  };
  const out: Omit<ReceivedRequest, 'path' | 'contentType' | 'headers'> = { resource: {}, scope: '', spans: [] };
  for (const rs of msg.resource_spans ?? []) {
    Object.assign(out.resource, attributes(rs.resource?.attributes));
    for (const ss of rs.scope_spans ?? []) {
      out.scope = ss.scope?.name ?? '';
      for (const s of ss.spans ?? []) {
        out.spans.push({
          traceId: hex(Uint8Array.from(s.trace_id as number[])),
          spanId: hex(Uint8Array.from(s.span_id as number[])),
          parentSpanId: hex(Uint8Array.from((s.parent_span_id as number[] | undefined) ?? [])),
          name: s.name as string,
          startMs: ms(s.start_time_unix_nano),
          endMs: ms(s.end_time_unix_nano),
          attributes: attributes(s.attributes as []),
          events: ((s.events as Array<{ name: string; attributes?: [] }> | undefined) ?? []).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
          droppedAttributes: Number(s.dropped_attributes_count ?? 0),
        });
      }
    }
  }
  return out;
}

export interface OtlpReceiver {
  /** e.g. http://127.0.0.1:4318 (no path). */
  readonly base: string;
  readonly requests: ReceivedRequest[];
  /** Waits until at least `n` requests arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      try {
        const decoded = decodeTraceRequest(Buffer.concat(chunks));
        requests.push({ path: req.url, contentType: String(req.headers['content-type'] ?? ''), headers: req.headers, ...decoded });
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    async waitFor(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > deadline) throw new Error(`the OTLP receiver got ${requests.length} of ${n} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
