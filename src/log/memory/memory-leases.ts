/**
 * Leases and stream ownership for in-memory logs that share one store (memory-log.ts,
 * `createMemoryCluster`): the rules of the PostgreSQL store's `el_claim`, on maps, so tests of
 * what runs on several nodes need no database. A node's lease lasts until its log closes: in one
 * process no node can be paused or cut off past it, so nothing lapses by time.
 */
import { OWNED_BY, type Fencing } from '../capabilities.js';
import { compareCodePoints } from '../names.js';

interface Owner {
  nodeId: string;
  nodeEpoch: number;
}

export class MemoryLeases {
  /** current epoch of each registered node id, and whether its lease is current */
  private readonly nodes = new Map<string, { epoch: number; alive: boolean }>();
  private readonly owners = new Map<string, Owner>();

  /** Registers `nodeId` under a new epoch (a node id that registers again fences its previous run). */
  register(nodeId: string): Fencing {
    const epoch = (this.nodes.get(nodeId)?.epoch ?? 0) + 1;
    this.nodes.set(nodeId, { epoch, alive: true });
    return { nodeId, epoch };
  }

  /** Ends the lease at once, so other nodes may claim what it owned. */
  stop(f: Fencing): void {
    const n = this.nodes.get(f.nodeId);
    if (n && n.epoch === f.epoch) n.alive = false;
  }

  private current(f: Fencing): boolean {
    const n = this.nodes.get(f.nodeId);
    return n !== undefined && n.alive && n.epoch === f.epoch;
  }

  /** undefined when `stream` is now `f`'s, else why not (worded as the PostgreSQL store words it) */
  claim(stream: string, f: Fencing): string | undefined {
    if (!this.current(f)) return `the lease of node ${f.nodeId} (epoch ${f.epoch}) is not current`;
    const o = this.owners.get(stream);
    if (!o || o.nodeId === f.nodeId || !this.current({ nodeId: o.nodeId, epoch: o.nodeEpoch })) {
      this.owners.set(stream, { nodeId: f.nodeId, nodeEpoch: f.epoch });
      return undefined;
    }
    return OWNED_BY + o.nodeId;
  }

  /** The stream's actor ended or parked: it belongs to no node. */
  release(stream: string, f: Fencing): void {
    const o = this.owners.get(stream);
    if (o && o.nodeId === f.nodeId && o.nodeEpoch === f.epoch) this.owners.delete(stream);
  }

  ownedCounts(prefixes: readonly string[], f: Fencing): number[] {
    return prefixes.map((p) => {
      let n = 0;
      for (const [stream, o] of this.owners) if (stream.startsWith(p) && o.nodeId === f.nodeId && o.nodeEpoch === f.epoch) n++;
      return n;
    });
  }

  liveOwners(streams: readonly string[]): Map<string, string> {
    const out = new Map<string, string>();
    for (const stream of streams) {
      const o = this.owners.get(stream);
      if (o && this.current({ nodeId: o.nodeId, epoch: o.nodeEpoch })) out.set(stream, o.nodeId);
    }
    return out;
  }

  lapsedStreams(prefix: string, limit: number): string[] {
    const out: string[] = [];
    for (const [stream, o] of this.owners) {
      if (!stream.startsWith(prefix) || stream.slice(prefix.length).includes('/')) continue;
      if (!this.current({ nodeId: o.nodeId, epoch: o.nodeEpoch })) out.push(stream);
    }
    return out.sort(compareCodePoints).slice(0, limit);
  }
}
