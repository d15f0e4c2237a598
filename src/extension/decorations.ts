/**
 * Editor decorations for the shown answer: every kept region of an open file is highlighted
 * (the dropped ones too while "Show Dropped Regions" is on), with a hover that gives the
 * region's score, its parent's score, the decision, the rule that fired and its tokens, and a
 * link that selects it in the inspector. Ranges come from the regions' parse-time anchors.
 */
import * as vscode from 'vscode';
import type { AskTrace } from '../contracts/trace';
import { type EvidenceRegion, evidenceRegions, ruleWords } from './views/evidenceRegions';

/** The hover of a region: document text only through appendText (never interpreted as Markdown). */
export function regionHover(r: EvidenceRegion, withLink: boolean): vscode.MarkdownString {
  const n = r.node;
  const md = new vscode.MarkdownString(undefined, true);
  md.isTrusted = withLink ? { enabledCommands: ['canopy.revealRegion'] } : false;
  md.appendMarkdown(`**Canopy: ${r.kept ? 'kept' : 'dropped'}** ${n.kind} — round ${r.round}\n\n`);
  const score = n.score !== undefined ? n.score.toFixed(3) : '—';
  const parent = n.parentScore !== undefined ? n.parentScore.toFixed(3) : '—';
  md.appendMarkdown(`score \`${score}\` · parent \`${parent}\` · ${n.tokens} tokens\n\n`);
  md.appendMarkdown(`decision \`${n.decision}\`, rule \`${n.rule}\`: `);
  md.appendText(ruleWords[n.rule] ?? n.rule);
  md.appendMarkdown('\n\nitem: ');
  md.appendText(r.item.title);
  if (withLink) {
    const args = encodeURIComponent(JSON.stringify([{ itemId: r.item.itemId, nodeId: n.id }]));
    md.appendMarkdown(`\n\n[Show in the Evidence Inspector](command:canopy.revealRegion?${args})`);
  }
  return md;
}

export class EvidenceDecorations implements vscode.Disposable {
  private readonly kept = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
    borderColor: new vscode.ThemeColor('charts.green'),
    borderStyle: 'solid',
    borderWidth: '0 0 1px 0',
    overviewRulerColor: new vscode.ThemeColor('charts.green'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  private readonly dropped = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
    textDecoration: 'line-through',
    overviewRulerColor: new vscode.ThemeColor('charts.red'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  private trace: AskTrace | undefined;
  private byFile = new Map<string, EvidenceRegion[]>();
  private showDropped = false;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly folder: () => vscode.WorkspaceFolder | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscription = vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.apply(e)));
  }

  get droppedShown(): boolean {
    return this.showDropped;
  }

  setTrace(trace: AskTrace | undefined): void {
    this.trace = trace;
    this.reindex();
  }

  setShowDropped(on: boolean): void {
    this.showDropped = on;
    this.reindex();
  }

  private reindex(): void {
    this.byFile = new Map();
    if (this.trace) {
      for (const r of evidenceRegions(this.trace, this.showDropped)) {
        if (!r.range) continue;
        const list = this.byFile.get(r.item.file) ?? [];
        list.push(r);
        this.byFile.set(r.item.file, list);
      }
    }
    vscode.window.visibleTextEditors.forEach((e) => this.apply(e));
  }

  /** The workspace-relative path of an editor's file, when it lies in the workspace folder. */
  private relativePath(uri: vscode.Uri): string | undefined {
    const folder = this.folder();
    if (!folder || uri.scheme !== folder.uri.scheme) return undefined;
    const base = folder.uri.path.endsWith('/') ? folder.uri.path : `${folder.uri.path}/`;
    return uri.path.startsWith(base) ? uri.path.slice(base.length) : undefined;
  }

  apply(editor: vscode.TextEditor): void {
    const rel = this.relativePath(editor.document.uri);
    const regions = rel ? (this.byFile.get(rel) ?? []) : [];
    const toOptions = (r: EvidenceRegion): vscode.DecorationOptions => ({
      range: new vscode.Range(r.range!.startLine, r.range!.startColumn, r.range!.endLine, r.range!.endColumn),
      hoverMessage: regionHover(r, true),
    });
    const kept = regions.filter((r) => r.kept).map(toOptions);
    const dropped = regions.filter((r) => !r.kept).map(toOptions);
    editor.setDecorations(this.kept, kept);
    editor.setDecorations(this.dropped, dropped);
    if (rel && regions.length > 0) this.log.info(`decorated ${kept.length} kept${this.showDropped ? ` and ${dropped.length} dropped` : ''} region(s) in ${rel}`);
  }

  dispose(): void {
    this.subscription.dispose();
    this.kept.dispose();
    this.dropped.dispose();
  }
}
