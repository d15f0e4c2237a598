/**
 * How a round's decisions become trace: each fresh item's scored tree with every node's score,
 * its parent's score, its decision and the rule that fired; and the reader input, answer and
 * totals of the whole question. The inspector renders only these.
 */
import type { NodeScoreComponents } from '../compress/hybridScore';
import type { NodeVerdict } from '../compress/projection';
import type { TokenCounter } from '../compress/tokens';
import type { Answer, ReaderInput } from '../read/reader';
import type { RegionNode } from '../../contracts/region';
import type { AskTrace, TraceNode } from '../../contracts/trace';

const PREVIEW = 160;

/** The trace's reader input, answer and totals — the same for an asked and a replayed trace. */
export function traceOutcome(
  readerInput: ReaderInput,
  uncompressed: ReaderInput,
  answer: Answer,
  items: number,
): Pick<AskTrace, 'readerInput' | 'answer' | 'totals'> {
  return {
    readerInput: {
      text: readerInput.text,
      tokens: readerInput.tokens,
      truncated: readerInput.truncated,
      regions: readerInput.regions.map((r) => ({ itemId: r.itemId, nodeId: r.node.id })),
      // The images themselves are not stored: the trace says which were sent and how large they were.
      ...(readerInput.images?.length
        ? { images: readerInput.images.map((i) => ({ ref: i.ref, file: i.file, page: i.page, ...(i.bbox ? { bbox: i.bbox } : {}), width: i.width, height: i.height, bytes: i.data.length })) }
        : {}),
      ...(readerInput.notes?.length ? { notes: readerInput.notes } : {}),
    },
    answer: {
      mode: answer.mode,
      text: answer.text,
      citations: answer.citations,
      ...(answer.model ? { model: answer.model } : {}),
      ...(answer.notes?.length ? { notes: answer.notes } : {}),
      ...(answer.unresolvedMarkers?.length ? { unresolvedMarkers: answer.unresolvedMarkers } : {}),
      ...(answer.llmFailure ? { llmFailure: answer.llmFailure } : {}),
    },
    totals: {
      evidenceTokens: readerInput.tokens,
      uncompressedTokens: uncompressed.tokens,
      items,
      keptRegions: readerInput.regions.length,
    },
  };
}

/**
 * `controlled`: the item's file went through the MAGE controller, whose opened regions are the
 * kept ones; it maps every other region to the controller's decision and reason.
 */
export function traceTree(
  root: RegionNode,
  scores: Map<string, number>,
  verdicts: NodeVerdict[],
  kept: Set<string>,
  tokens: TokenCounter,
  controlled?: ReadonlyMap<string, { decision: TraceNode['decision']; rule: TraceNode['rule'] }>,
  components?: ReadonlyMap<string, NodeScoreComponents>,
  questionScores?: ReadonlyMap<string, number>,
): TraceNode {
  const byId = new Map(verdicts.map((v) => [v.nodeId, v]));
  const gated = verdicts.length === 1 && verdicts[0]!.nodeId === root.id && root.children.length > 0 && verdicts[0]!.decision === 'dropped-sibling';
  const build = (n: RegionNode, insideKept: boolean, parentScore: number | undefined, parent?: RegionNode): TraceNode => {
    const v = byId.get(n.id);
    const isKept = kept.has(n.id);
    const score = scores.get(n.id);
    const byController = controlled && !isKept ? controlled.get(n.id) : undefined;
    const node: TraceNode = {
      id: n.id,
      kind: n.kind,
      modality: n.modality,
      anchor: n.anchor,
      tokens: tokens.count(n.text),
      // Baselines decide on leaves (flat, threshold) or the root (none) only; CANOPY on every
      // visited node; the controller opens elements (its trace says why). Nodes nobody decided on are 'not-visited'.
      decision: controlled
        ? isKept
          ? 'kept-by-controller'
          : (byController?.decision ?? 'not-visited')
        : v
          ? v.decision
          : isKept
            ? 'kept-by-baseline'
            : !insideKept && !gated && verdicts.length === 0 && n.children.length === 0
              ? 'dropped-by-baseline'
              : 'not-visited',
      rule: controlled ? (isKept ? 'controller' : (byController?.rule ?? 'none')) : v ? v.rule : gated ? 'item-gate' : 'none',
      children: [],
    };
    if (score !== undefined) node.score = score;
    const parts = components?.get(n.id);
    const question = questionScores?.get(n.id);
    if (parts) node.components = { dense: parts.dense, lexical: parts.lexical, ...(question !== undefined ? { question } : {}) };
    const ps = v?.parentScore ?? parentScore;
    if (ps !== undefined) node.parentScore = ps;
    if (n.children.length === 0) node.text = n.text;
    else node.preview = n.text.length > PREVIEW ? `${n.text.slice(0, PREVIEW)}…` : n.text;
    if (n.header) node.header = n.header;
    // Context fields only where they change from the parent's (regionFromTrace inherits them back).
    if (n.context !== undefined && n.context !== parent?.context) node.context = n.context;
    if (n.caption !== undefined && n.caption !== parent?.caption) node.caption = n.caption;
    if (n.units !== undefined && n.units !== parent?.units) node.units = n.units;
    if (n.subheader !== undefined && n.subheader !== parent?.subheader) node.subheader = n.subheader;
    if (n.groups !== undefined) node.groups = n.groups;
    node.children = n.children.map((c) => build(c, insideKept || isKept, score, n));
    return node;
  };
  return build(root, false, undefined);
}
