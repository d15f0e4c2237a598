/**
 * What the host answers to the inspector webview's requests, with the checks that keep an
 * untrusted webview inside the index: a file is opened or read only when it is a file of the
 * current index (a workspace-relative path, never absolute, never `..`), PDFs only when they are
 * PDFs and not too large, traces only by the history's own file names. Free of `vscode` (the
 * panel supplies the editor actions), so the refusals are unit-tested in plain Node.
 */
import type { ReplaySettings } from '../../contracts/askSettings';
import { isTraceFileName, type TraceSummary } from '../../contracts/savedTrace';
import type { Anchor } from '../../contracts/region';
import type { AskTrace } from '../../contracts/trace';
import { findRegion } from './evidenceRegions';
import { MAX_PDF_BYTES, type PlaceholderView } from '../../protocol/messages';
import { ProtocolError, type RequestHandlers } from '../../protocol/rpc';

export interface SourceRange {
  /** 1-based lines, 0-based columns (the anchor's convention). */
  startLine?: number;
  startColumn?: number;
  endLine?: number;
  endColumn?: number;
}

export interface InspectorRequestHost {
  currentView(): PlaceholderView;
  /** Whether a workspace-relative path is a file of the current index. */
  isIndexedFile(relPath: string): boolean;
  openSource(relPath: string, range: SourceRange, preserveFocus: boolean): Promise<void>;
  readFile(relPath: string): Promise<Uint8Array>;
  listTraces(): Promise<TraceSummary[]>;
  readTrace(name: string): Promise<AskTrace>;
  findTrace(id: string): Promise<AskTrace | undefined>;
  replay(trace: AskTrace, settings: ReplaySettings): Promise<AskTrace>;
  /** Stores a gold annotation (design §10); absent: `gold/mark` is refused. */
  markGold?(mark: GoldMark): Promise<{ annotationId: string; added: boolean }>;
}

/** A region of a trace the webview asked to mark as gold evidence, checked against the index. */
export interface GoldMark {
  question: string;
  anchor: Anchor;
  /** The node's text as the trace holds it (absent for nodes stored without text). */
  text?: string;
  source: 'inspector' | 'pdf';
}

/** A relative path inside the workspace, in the index's form (forward slashes, no `..`), or undefined. */
export function indexRelativePath(p: string): string | undefined {
  if (!p || p.length > 4096 || p.includes('\0') || p.includes('\\')) return undefined;
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return undefined;
  const parts = p.split('/');
  if (parts.some((s) => s === '..' || s === '.' || s === '')) return undefined;
  return p;
}

function forbidden(file: string, what = 'a file of the Canopy index'): ProtocolError {
  return new ProtocolError('E_FORBIDDEN', `${file} is not ${what}`);
}

export function inspectorRequestHandlers(host: InspectorRequestHost): RequestHandlers {
  const indexed = (file: string): string => {
    const rel = indexRelativePath(file);
    if (!rel || !host.isIndexedFile(rel)) throw forbidden(file);
    return rel;
  };
  return {
    'inspector/getView': async () => host.currentView(),
    'source/open': async (params) => {
      const rel = indexed(params.file);
      const { startLine, startColumn, endLine, endColumn } = params;
      await host.openSource(
        rel,
        {
          ...(startLine !== undefined ? { startLine } : {}),
          ...(startColumn !== undefined ? { startColumn } : {}),
          ...(endLine !== undefined ? { endLine } : {}),
          ...(endColumn !== undefined ? { endColumn } : {}),
        },
        params.preserveFocus ?? false,
      );
      return { opened: true };
    },
    'pdf/get': async ({ file }) => {
      const rel = indexed(file);
      if (!rel.toLowerCase().endsWith('.pdf')) throw forbidden(file, 'a PDF');
      const bytes = await host.readFile(rel);
      if (bytes.byteLength > MAX_PDF_BYTES) throw new ProtocolError('E_TOO_LARGE', `${file} is larger than ${MAX_PDF_BYTES / 1024 / 1024} MB`);
      if (bytes.byteLength < 5 || String.fromCharCode(...bytes.subarray(0, 5)) !== '%PDF-') throw forbidden(file, 'a PDF (no %PDF- header)');
      return { file: rel, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
    },
    'traces/list': async () => ({ traces: await host.listTraces() }),
    'traces/get': async ({ name }) => {
      if (!isTraceFileName(name)) throw new ProtocolError('E_FORBIDDEN', `${name} is not a saved trace`);
      try {
        return { trace: await host.readTrace(name) };
      } catch (err) {
        throw new ProtocolError('E_NOT_FOUND', `trace ${name} could not be read: ${(err as Error).message}`);
      }
    },
    'trace/replay': async ({ traceId, settings }) => {
      const trace = await host.findTrace(traceId);
      if (!trace) throw new ProtocolError('E_NOT_FOUND', `no trace with id ${traceId} in this workspace`);
      return { trace: await host.replay(trace, settings) };
    },
    'gold/mark': async ({ traceId, nodeId, bbox }) => {
      if (!host.markGold) throw new ProtocolError('E_UNSUPPORTED', 'marking gold evidence is not available here');
      const trace = await host.findTrace(traceId);
      if (!trace) throw new ProtocolError('E_NOT_FOUND', `no trace with id ${traceId} in this workspace`);
      const region = findRegion(trace, nodeId);
      if (!region) throw new ProtocolError('E_NOT_FOUND', `no node ${nodeId} in trace ${traceId}`);
      const a = region.node.anchor;
      indexed(a.file);
      let mark: GoldMark;
      if (bbox) {
        if (a.page === undefined) throw new ProtocolError('E_BAD_PARAMS', `node ${nodeId} is not on a PDF page: a box can only be marked on a page`);
        mark = { question: trace.question, anchor: { file: a.file, page: a.page, bbox }, source: 'pdf' };
      } else {
        mark = { question: trace.question, anchor: a, ...(region.node.text !== undefined ? { text: region.node.text } : {}), source: 'inspector' };
      }
      const r = await host.markGold(mark);
      return { ...r, question: trace.question };
    },
  };
}
