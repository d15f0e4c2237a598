/**
 * The Questions view (activity bar → Canopy): the trace history from the index's traces folder,
 * newest first. Clicking a question reopens its trace in the inspector; the context menu
 * deletes it or compares it with the shown answer. Replays are marked as such.
 */
import * as vscode from 'vscode';
import type { TraceSummary } from '../../contracts/savedTrace';

export class QuestionsProvider implements vscode.TreeDataProvider<TraceSummary>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TraceSummary | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly list: () => Promise<TraceSummary[]>,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  getTreeItem(s: TraceSummary): vscode.TreeItem {
    const item = new vscode.TreeItem(s.question, vscode.TreeItemCollapsibleState.None);
    const when = s.createdAt.replace('T', ' ').slice(0, 16);
    item.id = s.name;
    item.description = `${when} · ${s.mode === 'llm' ? 'LLM' : 'extractive'} · ${s.evidenceTokens} tok${s.replayOf ? ' · replay' : ''}`;
    item.tooltip = new vscode.MarkdownString(undefined, false);
    item.tooltip.appendText(s.question);
    item.tooltip.appendMarkdown(`\n\n${when} — ${s.mode === 'llm' ? 'LLM reader' : 'extractive reader'}, ${s.evidenceTokens} evidence tokens`);
    if (s.replayOf) item.tooltip.appendText(`\n\nReplay of ${s.replayOf}`);
    item.iconPath = new vscode.ThemeIcon(s.replayOf ? 'history' : 'comment-discussion');
    item.contextValue = 'canopyTrace';
    item.command = { command: 'canopy.openTrace', title: 'Open in the Evidence Inspector', arguments: [s] };
    return item;
  }

  async getChildren(element?: TraceSummary): Promise<TraceSummary[]> {
    if (element) return [];
    try {
      return await this.list();
    } catch (err) {
      this.log.warn(`the question history could not be read: ${(err as Error).message}`);
      return [];
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}
