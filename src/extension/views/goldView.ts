/**
 * The Gold view (activity bar → Canopy): the folder's gold annotations per question
 * (`goldModel.ts`), re-located against the files as they are now. Clicking an annotation opens
 * its span; the context menu edits its question or removes it; lost spans are shown, not hidden.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { relocateAll } from '../../core/annotate/relocate';
import { annotationsPath, AnnotationStore } from '../../core/annotate/store';
import { formatForPath } from '../../core/ingest/documentFormat';
import { goldTree, type GoldNode } from './goldModel';

export class GoldProvider implements vscode.TreeDataProvider<GoldNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<GoldNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly folder: () => vscode.WorkspaceFolder | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  getTreeItem(n: GoldNode): vscode.TreeItem {
    if (n.kind === 'question') {
      const item = new vscode.TreeItem(n.question, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `gold:${n.key}`;
      item.description = `${n.entries.length} span${n.entries.length === 1 ? '' : 's'}${n.lost ? ` · ${n.lost} lost` : ''}`;
      item.tooltip = n.question;
      item.iconPath = new vscode.ThemeIcon('question');
      item.contextValue = 'canopyGoldQuestion';
      return item;
    }
    if (n.kind === 'corrupt') {
      const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
      item.tooltip = n.line.raw;
      item.iconPath = new vscode.ThemeIcon('warning');
      return item;
    }
    const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
    item.id = `gold:${n.annotation.id}`;
    item.description = n.description;
    item.tooltip = new vscode.MarkdownString(undefined, false);
    item.tooltip.appendText(n.annotation.text);
    item.tooltip.appendMarkdown(`\n\n${n.annotation.source} · ${n.annotation.author} · ${n.annotation.time.replace('T', ' ').slice(0, 16)} · ${n.status}`);
    item.iconPath = new vscode.ThemeIcon(n.status === 'lost' ? 'error' : 'pass');
    item.contextValue = 'canopyGold';
    if (n.status !== 'lost') item.command = { command: 'canopy.openGold', title: 'Open Gold Evidence', arguments: [n] };
    return item;
  }

  async getChildren(element?: GoldNode): Promise<GoldNode[]> {
    if (element) return element.kind === 'question' ? element.entries : [];
    const folder = this.folder();
    if (!folder) return [];
    try {
      const { annotations, corrupt } = await new AnnotationStore(annotationsPath(folder.uri.fsPath)).read();
      const root = folder.uri.fsPath;
      const relocations = await relocateAll(annotations, async (file) =>
        formatForPath(file) === 'pdf' ? undefined : fs.readFile(path.join(root, ...file.split('/')), 'utf8').catch(() => undefined),
      );
      return goldTree(relocations, corrupt);
    } catch (err) {
      this.log.warn(`the gold annotations could not be read: ${(err as Error).message}`);
      return [];
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}
