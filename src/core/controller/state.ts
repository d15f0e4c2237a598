/**
 * The evidence state of one controller run: the state of every page and element node, the
 * relations followed and the activations they proposed, and the latest search hits. `apply`
 * is the only way to change it, and it enforces the controller's rules (design §7):
 *   - a page is activated from Inactive; pruned pages stay pruned for the run;
 *   - an element is activated from Inactive only while its page is Active;
 *   - only Active elements can be opened; page nodes are never opened (their elements are);
 *   - FOLLOW_RELATION starts at an Active or Opened element and only proposes activating the
 *     edge's target (its page first when that page is Inactive); it changes no node state;
 *   - PRUNE_NODE applies to Active or Opened nodes; pruning a page prunes its Active and Opened
 *     elements too, and its other elements stop being candidates because their page is no
 *     longer Active.
 * A rejected action leaves the state unchanged and says why. Budgets are the controller's
 * business, not the state's.
 */
import type { DocumentView } from './documentView';
import type { ControllerAction, NodeState, RelationType, StateChange, StateCounts } from './trace';

export type ApplyResult =
  | { ok: true; changes: StateChange[]; proposed?: Array<{ type: 'ACTIVATE_PAGE' | 'ACTIVATE_NODE'; id: string }> }
  | { ok: false; error: string };

export interface Proposal {
  from: string;
  relation: RelationType;
}

export class EvidenceState {
  private readonly states = new Map<string, NodeState>();
  /** FOLLOW_RELATION proposals by target element id, in the order they were made. */
  readonly proposals = new Map<string, Proposal>();
  /** Relations already followed, as `from>to`. */
  readonly followed = new Set<string>();
  /** SEARCH_EVIDENCE hits still to act on, by element id, with the query that found them. */
  readonly searchHits = new Map<string, { query: string; score: number }>();
  /** Queries searched so far, in order. */
  readonly queries: string[] = [];

  constructor(readonly view: DocumentView) {}

  stateOf(id: string): NodeState {
    return this.states.get(id) ?? 'inactive';
  }

  /** Every node that left the Inactive state, with its state, in page then reading order. */
  touched(): Array<{ id: string; state: NodeState }> {
    const out: Array<{ id: string; state: NodeState }> = [];
    for (const p of this.view.pages) {
      const ps = this.stateOf(p.id);
      if (ps !== 'inactive') out.push({ id: p.id, state: ps });
      for (const e of this.view.elementsOn(p.id)) {
        const es = this.stateOf(e.id);
        if (es !== 'inactive') out.push({ id: e.id, state: es });
      }
    }
    return out;
  }

  activePages(): string[] {
    return this.view.pages.filter((p) => this.stateOf(p.id) === 'active').map((p) => p.id);
  }

  /** Elements in the given state, in reading order. */
  elementsIn(state: NodeState): string[] {
    return this.view.elements.filter((e) => this.stateOf(e.id) === state).map((e) => e.id);
  }

  counts(): StateCounts {
    let activePages = 0;
    let activeElements = 0;
    let opened = 0;
    let pruned = 0;
    for (const s of this.states.values()) if (s === 'pruned') pruned++;
    for (const [id, s] of this.states) {
      if (s === 'active' && this.view.isPage(id)) activePages++;
      else if (s === 'active') activeElements++;
      else if (s === 'opened') opened++;
    }
    return { activePages, activeElements, opened, pruned };
  }

  /** Applies one action under the rules above; STOP and SEARCH_EVIDENCE are the controller's and change no state. */
  apply(action: ControllerAction): ApplyResult {
    switch (action.type) {
      case 'ACTIVATE_PAGE': {
        const page = this.view.node(action.pageId);
        if (!page || page.type !== 'page') return { ok: false, error: `${action.pageId} is not a page of ${this.view.file}` };
        const s = this.stateOf(page.id);
        if (s === 'pruned') return { ok: false, error: `page ${page.page + 1} was pruned; pruned pages stay out of the evidence for this run` };
        if (s !== 'inactive') return { ok: false, error: `page ${page.page + 1} is already ${s}` };
        return { ok: true, changes: [this.set(page.id, 'active')] };
      }
      case 'ACTIVATE_NODE': {
        if (this.view.isPage(action.nodeId)) return { ok: false, error: `${action.nodeId} is a page: activate pages with ACTIVATE_PAGE` };
        if (!this.view.isElement(action.nodeId)) return { ok: false, error: `${action.nodeId} is not an element of ${this.view.file}` };
        const page = this.view.pageOf(action.nodeId);
        if (!page || this.stateOf(page.id) !== 'active') {
          return { ok: false, error: `the page of ${this.view.label(action.nodeId)} is ${page ? this.stateOf(page.id) : 'missing'}; an element can only be activated while its page is active` };
        }
        const s = this.stateOf(action.nodeId);
        if (s !== 'inactive') return { ok: false, error: `${this.view.label(action.nodeId)} is already ${s}` };
        this.proposals.delete(action.nodeId);
        this.searchHits.delete(action.nodeId);
        return { ok: true, changes: [this.set(action.nodeId, 'active')] };
      }
      case 'OPEN_NODE': {
        if (this.view.isPage(action.nodeId)) return { ok: false, error: `${action.nodeId} is a page: page nodes are never opened, their elements are` };
        if (!this.view.isElement(action.nodeId)) return { ok: false, error: `${action.nodeId} is not an element of ${this.view.file}` };
        const s = this.stateOf(action.nodeId);
        if (s !== 'active') return { ok: false, error: `${this.view.label(action.nodeId)} is ${s}; only active nodes can be opened` };
        return { ok: true, changes: [this.set(action.nodeId, 'opened')] };
      }
      case 'FOLLOW_RELATION': {
        const s = this.stateOf(action.from);
        if (s !== 'active' && s !== 'opened') return { ok: false, error: `relations are followed from active or opened elements; ${this.view.label(action.from)} is ${s}` };
        const rel = this.view.relationsFrom(action.from).find((r) => r.to === action.to && r.type === action.relation);
        if (!rel) return { ok: false, error: `no ${action.relation} relation from ${this.view.label(action.from)} to ${this.view.label(action.to)}` };
        const key = `${action.from}>${action.to}`;
        if (this.followed.has(key)) return { ok: false, error: `the relation to ${this.view.label(action.to)} was already followed` };
        const target = this.stateOf(action.to);
        const page = this.view.pageOf(action.to)!;
        const pageState = this.stateOf(page.id);
        if (target !== 'inactive') return { ok: false, error: `${this.view.label(action.to)} is already ${target}` };
        if (pageState === 'pruned') return { ok: false, error: `${this.view.label(action.to)} is on pruned page ${page.page + 1}` };
        this.followed.add(key);
        if (!this.proposals.has(action.to)) this.proposals.set(action.to, { from: action.from, relation: action.relation });
        const proposed: Array<{ type: 'ACTIVATE_PAGE' | 'ACTIVATE_NODE'; id: string }> =
          pageState === 'inactive' ? [{ type: 'ACTIVATE_PAGE', id: page.id }] : [{ type: 'ACTIVATE_NODE', id: action.to }];
        return { ok: true, changes: [], proposed };
      }
      case 'PRUNE_NODE': {
        const node = this.view.node(action.nodeId);
        if (!node || node.type === 'section') return { ok: false, error: `${action.nodeId} is not a page or element of ${this.view.file}` };
        const s = this.stateOf(node.id);
        if (s !== 'active' && s !== 'opened') return { ok: false, error: `${this.view.label(node.id)} is ${s}; only active or opened nodes can be pruned` };
        const changes = [this.set(node.id, 'pruned')];
        if (node.type === 'page') {
          for (const e of this.view.elementsOn(node.id)) {
            const es = this.stateOf(e.id);
            if (es === 'active' || es === 'opened') changes.push(this.set(e.id, 'pruned'));
            this.proposals.delete(e.id);
            this.searchHits.delete(e.id);
          }
        }
        return { ok: true, changes };
      }
      case 'SEARCH_EVIDENCE':
      case 'STOP':
        return { ok: true, changes: [] };
      default: {
        const never: never = action;
        return { ok: false, error: `unknown action ${JSON.stringify(never)}` };
      }
    }
  }

  private set(id: string, to: NodeState): StateChange {
    const from = this.stateOf(id);
    this.states.set(id, to);
    return { id, from, to };
  }
}
