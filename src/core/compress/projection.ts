/**
 * CANOPY projection (design §5, CANOPY §3.2): post-retrieval compression of one item's region
 * tree against a query, with no LLM call per node.
 *
 * Starting at the root: score the node's children; if ANY child scores ≥ its parent, the parent
 * is replaced by exactly those children (the other children's subtrees are dropped) and the rule
 * recurses into each of them; otherwise the parent is kept whole. The kept set is a forest of
 * original regions at mixed depths. Every visited node gets a decision and the rule that fired,
 * so the inspector can show why a region was kept or dropped.
 *
 * With `glimpse: n` (compressor option, off by default) a sibling dropped below its parent keeps
 * its n best-scoring leaves (rule `glimpse`): the rule's decisions are unchanged, but a dropped
 * half of an abstract still shows its closest sentence, and a dropped sentence stays.
 */
import type { RegionNode } from '../../contracts/region';
import type { NodeDecision, ProjectionRule } from '../../contracts/trace';
import { glimpseLeaves } from './itemGate';



export interface NodeVerdict {
  nodeId: string;
  decision: NodeDecision;
  rule: ProjectionRule;
  /** The node's score; absent for not-visited nodes, which are never scored. */
  score?: number;
  /** The parent's score, which the node was compared against (absent for the root). */
  parentScore?: number;
  depth: number;
}

export interface ProjectionResult {
  /** Kept regions in document order (pre-order of the tree). */
  kept: RegionNode[];
  /** One verdict per node of the tree, in pre-order. */
  verdicts: NodeVerdict[];
}

export interface ProjectionOptions {
  /** Keep nodes of kind 'table' whole instead of pruning rows (aggregate questions, design §5). */
  keepTablesWhole?: boolean;
  /**
   * A sibling dropped below its parent keeps its this many best-scoring leaves as a glimpse (a
   * dropped leaf is itself kept); 0 or absent: dropped whole, the plain rule.
   */
  glimpse?: number;
}

/**
 * Scores are looked up through `score(node)`; it is called once per visited node, so the caller
 * may compute vectors lazily. Scores are compared exactly: a tie (child == parent) descends.
 */
export function projectItem(root: RegionNode, score: (node: RegionNode) => number, options: ProjectionOptions = {}): ProjectionResult {
  const kept: RegionNode[] = [];
  const verdicts: NodeVerdict[] = [];

  const markSubtree = (node: RegionNode, depth: number, rule: 'ancestor-kept-whole' | 'ancestor-dropped') => subtreeVerdicts(node, depth, rule, verdicts);

  // `nodeScore` is computed by the caller of visit (the parent compared its children already).
  const visit = (node: RegionNode, nodeScore: number, parentScore: number | undefined, depth: number) => {
    const base = { nodeId: node.id, score: nodeScore, depth, ...(parentScore === undefined ? {} : { parentScore }) };
    if (node.children.length === 0) {
      verdicts.push({ ...base, decision: 'keep-whole', rule: 'leaf' });
      kept.push(node);
      return;
    }
    if (options.keepTablesWhole && node.kind === 'table') {
      verdicts.push({ ...base, decision: 'keep-whole', rule: 'aggregate-table' });
      kept.push(node);
      markSubtree(node, depth, 'ancestor-kept-whole');
      return;
    }
    const childScores = node.children.map((c) => score(c));
    const anyBetter = childScores.some((s) => s >= nodeScore);
    if (!anyBetter) {
      verdicts.push({ ...base, decision: 'keep-whole', rule: 'no-child-ge-parent' });
      kept.push(node);
      markSubtree(node, depth, 'ancestor-kept-whole');
      return;
    }
    verdicts.push({ ...base, decision: 'descend', rule: 'child-ge-parent' });
    node.children.forEach((child, i) => {
      const s = childScores[i]!;
      if (s >= nodeScore) {
        visit(child, s, nodeScore, depth + 1);
      } else {
        if (options.glimpse && child.children.length === 0) {
          verdicts.push({ nodeId: child.id, decision: 'keep-whole', rule: 'glimpse', score: s, parentScore: nodeScore, depth: depth + 1 });
          kept.push(child);
          return;
        }
        verdicts.push({ nodeId: child.id, decision: 'dropped-sibling', rule: 'below-parent', score: s, parentScore: nodeScore, depth: depth + 1 });
        if (!options.glimpse) {
          markSubtree(child, depth + 1, 'ancestor-dropped');
          return;
        }
        kept.push(...glimpseVerdicts(child, depth + 1, new Set(glimpseLeaves(child, options.glimpse, score)), score, verdicts));
      }
    });
  };

  visit(root, score(root), undefined, 0);
  return { kept, verdicts };
}

/** Every region below `node` (at `depth`) was not visited, for `rule`: its verdicts, appended to `out`. */
export function subtreeVerdicts(node: RegionNode, depth: number, rule: 'ancestor-kept-whole' | 'ancestor-dropped', out: NodeVerdict[]): void {
  for (const child of node.children) {
    out.push({ nodeId: child.id, decision: 'not-visited', rule, depth: depth + 1 });
    subtreeVerdicts(child, depth + 1, rule, out);
  }
}

/**
 * The regions below a dropped `node` (at `depth`): the `glimpse` ones kept whole (rule `glimpse`),
 * every other one not visited inside the dropped region. Appends the verdicts to `out` and returns
 * the glimpse regions in document order.
 */
export function glimpseVerdicts(node: RegionNode, depth: number, glimpse: ReadonlySet<RegionNode>, score: (node: RegionNode) => number, out: NodeVerdict[]): RegionNode[] {
  const kept: RegionNode[] = [];
  const mark = (n: RegionNode, d: number) => {
    for (const c of n.children) {
      if (glimpse.has(c)) {
        out.push({ nodeId: c.id, decision: 'keep-whole', rule: 'glimpse', score: score(c), depth: d + 1 });
        kept.push(c);
      } else out.push({ nodeId: c.id, decision: 'not-visited', rule: 'ancestor-dropped', depth: d + 1 });
      mark(c, d + 1);
    }
  };
  mark(node, depth);
  return kept;
}
