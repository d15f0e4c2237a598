/**
 * "Canopy: Mark Selection as Gold Evidence": turns the editor selection into a gold annotation
 * (design §10) for the current question (the inspector's last one), a question already
 * annotated, or a new one, and appends it to `<folder>/.canopy/annotations.jsonl` through the
 * core store (locked, atomic). The anchor is the selection's char offsets and lines, with the
 * text around it as the re-location fingerprint.
 */
import * as vscode from 'vscode';
import { annotationsPath, AnnotationStore, contextFingerprint, makeAnnotation } from '../core/annotate/store';
import { describeError } from '../core/errors';

export interface AnnotationCommandDeps {
  folder(): vscode.WorkspaceFolder | undefined;
  /** The question the inspector shows now, if any. */
  currentQuestion(): string | undefined;
  log: vscode.LogOutputChannel;
}

async function pickQuestion(store: AnnotationStore, current: string | undefined): Promise<string | undefined> {
  const known = new Set<string>();
  if (current) known.add(current);
  const { annotations } = await store.read().catch(() => ({ annotations: [] }));
  for (const a of annotations.slice().reverse()) known.add(a.question);
  const other = '$(edit) Another question…';
  const items: vscode.QuickPickItem[] = [...[...known].slice(0, 30).map((q) => ({ label: q, ...(q === current ? { description: 'current question' } : {}) })), { label: other }];
  const picked = await vscode.window.showQuickPick(items, { title: 'Canopy: gold evidence for which question?', ignoreFocusOut: true });
  if (!picked) return undefined;
  if (picked.label !== other) return picked.label;
  const typed = await vscode.window.showInputBox({ title: 'Canopy: question', prompt: 'The question this selection is gold evidence for', ignoreFocusOut: true });
  return typed?.trim() || undefined;
}

/**
 * The command's handler. activate() registers it with a literal id,
 * `vscode.commands.registerCommand('canopy.markGold', markSelectionAsGold(...))`, because
 * test/unit/settings.test.ts matches registered ids against package.json by that literal form.
 */
export function markSelectionAsGold(deps: AnnotationCommandDeps): () => Promise<void> {
  return async () => {
    const editor = vscode.window.activeTextEditor;
    const folder = deps.folder();
    if (!editor || editor.selection.isEmpty) {
      void vscode.window.showWarningMessage('Canopy: select the gold evidence text in an editor first.');
      return;
    }
    if (!folder) {
      void vscode.window.showWarningMessage('Canopy: open a folder first — annotations live in its .canopy folder.');
      return;
    }
    const doc = editor.document;
    const rel = vscode.workspace.asRelativePath(doc.uri, false).split('\\').join('/');
    if (doc.uri.scheme !== 'file' || !doc.uri.fsPath.startsWith(folder.uri.fsPath)) {
      void vscode.window.showWarningMessage('Canopy: only files inside the workspace folder can hold gold evidence.');
      return;
    }
    const store = new AnnotationStore(annotationsPath(folder.uri.fsPath));
    const question = await pickQuestion(store, deps.currentQuestion());
    if (!question) return;
    const source = doc.getText();
    const sel = editor.selection;
    const start = doc.offsetAt(sel.start);
    const end = doc.offsetAt(sel.end);
    const annotation = makeAnnotation({
      question,
      anchor: { file: rel, charStart: start, charEnd: end, startLine: sel.start.line + 1, startColumn: sel.start.character, endLine: sel.end.line + 1, endColumn: sel.end.character },
      text: source.slice(start, end),
      context: contextFingerprint(source, start, end),
      author: process.env.USER ?? process.env.USERNAME ?? 'unknown',
      source: 'editor',
    });
    try {
      const added = await store.add([annotation]);
      deps.log.info(`gold annotation ${annotation.id} for "${question}" at ${rel}:${sel.start.line + 1}`);
      void vscode.window.showInformationMessage(added.length ? `Canopy: marked as gold evidence for “${question}”.` : 'Canopy: this span is already gold evidence for that question.');
    } catch (err) {
      const { code, message } = describeError(err);
      deps.log.error(`marking gold evidence failed: ${message} (${code})`);
      void vscode.window.showErrorMessage(`Canopy: marking gold evidence failed — ${message}`);
    }
  };
}
