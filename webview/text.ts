/**
 * Markdown and inline HTML as the plain text a person reads: answers, item titles and region
 * labels carry the markup of their sources (`**T**abular`, `[Anserini](http://…)`, `<img src=…>`),
 * which the inspector shows as text, never as markup. The text is parsed with
 * mdast-util-from-markdown (CommonMark, the parser ingest uses for Markdown files) and the tree is
 * written back as text: emphasis and links keep their words, images their alt text, raw HTML is
 * left out, lists keep their numbers. Nothing here creates DOM: the views set the result as
 * textContent.
 */
import type { Nodes, Parents } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';

/**
 * Characters and line starts that can make markup. Text without any of them is already plain and
 * is returned as it is, so the many labels of a big tree are not parsed for nothing.
 */
const MAYBE_MARKUP = /[*_`<>&[\]!\\~=#|]|^ {0,3}(?:[-+]\s|\d{1,9}[.)]\s)|^ {4}/m;

/** How much of a label is parsed: labels are clipped to a line anyway. */
const LABEL_SOURCE = 600;

function isParent(node: Nodes): node is Parents {
  return 'children' in node;
}

/** Writes the tree as text: blocks on lines of their own (`block`), or one line (`inline`). */
function write(node: Nodes, block: boolean, out: string[]): void {
  switch (node.type) {
    case 'text':
    case 'inlineCode':
      out.push(node.value);
      return;
    case 'code':
      out.push(node.value, block ? '\n\n' : ' ');
      return;
    case 'html':
      // Raw HTML is markup, not text: `<br>` is a line break, every other tag goes.
      if (/^<br\s*\/?>$/i.test(node.value.trim())) out.push(block ? '\n' : ' ');
      return;
    case 'image':
    case 'imageReference':
      if (node.alt) out.push(node.alt);
      return;
    case 'break':
      out.push(block ? '\n' : ' ');
      return;
    case 'thematicBreak':
    case 'definition':
      return;
    case 'list': {
      let n = node.start ?? 1;
      for (const item of node.children) {
        out.push(node.ordered ? `${n++}. ` : '• ');
        for (const c of item.children) write(c, false, out);
        out.push(block ? '\n' : ' ');
      }
      if (block) out.push('\n');
      return;
    }
    case 'paragraph':
    case 'heading':
      for (const c of node.children) write(c, block, out);
      out.push(block ? '\n\n' : ' ');
      return;
    default:
      if (isParent(node)) for (const c of node.children) write(c as Nodes, block, out);
  }
}

function render(text: string, block: boolean): string {
  if (!MAYBE_MARKUP.test(text)) return text;
  const out: string[] = [];
  write(fromMarkdown(text), block, out);
  const joined = out.join('');
  return block
    ? joined
        .replace(/[ \t]{2,}/g, ' ')
        .replace(/[ \t]+\n/g, '\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim()
    : joined.replace(/\s+/g, ' ').trim();
}

/** An answer or any text of several lines: paragraphs, list items and headings on lines of their own. */
export function plainText(text: string): string {
  return render(text, true);
}

/** A title or a label: one line of plain text (only the first part of a long text is read). */
export function plainLabel(text: string): string {
  return render(text.length > LABEL_SOURCE ? text.slice(0, LABEL_SOURCE) : text, false);
}
