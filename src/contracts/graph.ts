/**
 * The document graph (MAGE-RAG) as stored with each parsed document: shared by the ingester that
 * builds it (src/core/ingest/graph.ts), the controller that walks it, and the trace that records
 * its subgraph.
 */
import * as z from 'zod/mini';
import type { Anchor } from './region';

export const GraphNodeType = z.enum(['page', 'section', 'heading', 'paragraph', 'table', 'figure', 'list', 'code']);
export type GraphNodeType = z.output<typeof GraphNodeType>;
export const GraphEdgeType = z.enum(['contains', 'subsection', 'next', 'prev', 'near', 'semantic']);
export type GraphEdgeType = z.output<typeof GraphEdgeType>;

export interface GraphNode {
  id: string;
  type: GraphNodeType;
  text: string;
  /** First sentence, or the heading path for headings and sections; at most ~200 chars. */
  summary: string;
  anchor: Anchor;
  /** PDF user-space box on `page` (absent for non-PDF formats). */
  bbox?: [number, number, number, number];
  /** 0-based page (PDF) — the virtual page 0 for other formats. */
  page: number;
  /** The region this node stands for (absent for section nodes and virtual pages). */
  regionId?: string;
  itemId?: string;
  /** Headings and sections. */
  level?: number;
  /** True for the one page of a format without pages. */
  virtual?: boolean;
}

export interface GraphEdge {
  type: GraphEdgeType;
  from: string;
  to: string;
  /** Cosine similarity for semantic edges; box distance in points for near edges. */
  weight?: number;
}

export interface DocumentGraph {
  file: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}
