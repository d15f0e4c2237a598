/**
 * The text of a trace node: a leaf carries its own text; an inner node only a preview, so its
 * text is its leaves' texts in document order. Shared by the agent results and the OpenInference
 * export, which both hand region text to someone outside Canopy.
 */
import type { TraceNode } from '../../contracts/trace';

/** A region's text: its own text for a leaf, else its leaves' texts in document order (rows one per line). */
export function regionText(node: TraceNode): string {
  if (node.children.length === 0) return node.text ?? node.preview ?? '';
  const leaves: string[] = [];
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.children.length === 0) leaves.push(n.text ?? n.preview ?? '');
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return leaves.filter(Boolean).join(node.modality === 'table' ? '\n' : ' ');
}
