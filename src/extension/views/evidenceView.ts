/**
 * The Evidence view (activity bar → Canopy): the shown answer's evidence as a native tree —
 * rounds, the items each round compressed, and their kept regions (dropped ones too while
 * "Show Dropped Regions" is on) with score, decision and tokens. A region opens its source at
 * the exact range and is selected in the inspector.
 */
import * as vscode from 'vscode';
import type { AskTrace, TraceNode, TraceRetrievedItem, TraceRound } from '../../contracts/trace';
import { regionHover } from '../decorations';
import { type EvidenceRegion, evidenceRegions } from './evidenceRegions';

export type EvidenceElement =
  | { kind: 'round'; round: TraceRound }
  | { kind: 'item'; item: TraceRetrievedItem; round: number }
  | { kind: 'region'; region: EvidenceRegion };

const clip = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length <= n ? t : `${t.slice(0, n - 1)}…`;
};

export class EvidenceProvider implements vscode.TreeDataProvider<EvidenceElement>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<EvidenceElement | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private trace: AskTrace | undefined;
  private regionsByItem = new Map<string, EvidenceRegion[]>();
  private showDropped = false;

  setTrace(trace: AskTrace | undefined): void {
    this.trace = trace;
    this.index();
    this.changed.fire();
  }

  setShowDropped(on: boolean): void {
    this.showDropped = on;
    this.index();
    this.changed.fire();
  }

  private index(): void {
    this.regionsByItem = new Map();
    if (!this.trace) return;
    for (const r of evidenceRegions(this.trace, this.showDropped)) {
      const key = `${r.round}:${r.item.itemId}`;
      const list = this.regionsByItem.get(key) ?? [];
      list.push(r);
      this.regionsByItem.set(key, list);
    }
  }

  getTreeItem(e: EvidenceElement): vscode.TreeItem {
    switch (e.kind) {
      case 'round': {
        const r = e.round;
        const item = new vscode.TreeItem(`Round ${r.round}`, vscode.TreeItemCollapsibleState.Expanded);
        item.description = clip(r.query, 80);
        item.tooltip = `${r.query}\n\n${r.addedItemIds.length} item(s) added${r.critic ? ` — critic: ${r.critic.sufficient ? 'sufficient' : 'not sufficient'}` : ''}`;
        item.iconPath = new vscode.ThemeIcon('search');
        item.id = `round:${r.round}`;
        return item;
      }
      case 'item': {
        const it = e.item;
        const regions = this.regionsByItem.get(`${e.round}:${it.itemId}`) ?? [];
        const item = new vscode.TreeItem(it.title, regions.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
        // The controller's carrier item holds regions from the whole PDF; otherwise never more than the item has.
        item.description = it.controller ? `${it.file} · kept ${it.tokens.kept} tok from the whole PDF` : `${it.file} · kept ${Math.min(it.tokens.kept, it.tokens.whole)}/${it.tokens.whole} tok`;
        item.tooltip = `${it.file}\nrank ${it.rank + 1}, fused ${it.scores.fused.toFixed(4)}${it.scores.dense !== undefined ? `, dense ${it.scores.dense.toFixed(3)}` : ''}${it.scores.bm25 !== undefined ? `, BM25 ${it.scores.bm25.toFixed(3)}` : ''}`;
        item.iconPath = new vscode.ThemeIcon('file');
        item.resourceUri = undefined;
        item.id = `item:${e.round}:${it.itemId}`;
        return item;
      }
      case 'region': {
        const r = e.region;
        const n: TraceNode = r.node;
        const item = new vscode.TreeItem(clip(n.text ?? n.preview ?? n.kind, 70), vscode.TreeItemCollapsibleState.None);
        item.description = `${r.kept ? 'kept' : 'dropped'} · ${n.score?.toFixed(3) ?? '—'} · ${n.decision} · ${n.tokens} tok`;
        item.tooltip = regionHover(r, false);
        item.iconPath = new vscode.ThemeIcon(r.kept ? 'pass-filled' : 'circle-slash', new vscode.ThemeColor(r.kept ? 'charts.green' : 'charts.red'));
        item.contextValue = r.kept ? 'canopyKeptRegion' : 'canopyDroppedRegion';
        item.id = `region:${r.round}:${n.id}`;
        item.command = { command: 'canopy.openRegion', title: 'Open the region', arguments: [{ itemId: r.item.itemId, nodeId: n.id }] };
        return item;
      }
      default: {
        const unreachable: never = e;
        throw new Error(`unknown evidence element ${JSON.stringify(unreachable)}`);
      }
    }
  }

  getChildren(e?: EvidenceElement): EvidenceElement[] {
    const t = this.trace;
    if (!t) return [];
    if (!e) return t.rounds.filter((r) => r.addedItemIds.length > 0).map((round) => ({ kind: 'round', round }));
    if (e.kind === 'round') {
      return e.round.retrieved.filter((i) => !i.repeated && i.tree).map((item) => ({ kind: 'item', item, round: e.round.round }));
    }
    if (e.kind === 'item') return (this.regionsByItem.get(`${e.round}:${e.item.itemId}`) ?? []).map((region) => ({ kind: 'region', region }));
    return [];
  }

  dispose(): void {
    this.changed.dispose();
  }
}
