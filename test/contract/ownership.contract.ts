/**
 * The contract of the ownership capability (`EventLog.ownership`, src/log/capabilities.ts): every
 * store that offers it registers this suite with a factory and must pass it unchanged, as every
 * store passes the EventLog contract. `newStore()` makes a fresh, empty store; its `open(node)`
 * opens a log on it as `node.nodeId`, holding a lease of `node.leaseMs`, with `fenced` and
 * `releases` as given. The suite closes every log it opened. Registered by the PostgreSQL store
 * (test/log/pg-log-fencing.test.ts) and the memory cluster (test/log/memory-log.test.ts).
 *
 * What needs real time or real processes (a lease lapsing while its process is paused, renewals)
 * is the store's own test: here a node stops by closing its log, which gives its lease up at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StreamFencedError } from '../../src/log/capabilities.js';
import type { EventLog } from '../../src/log/types.js';

interface OwnershipNode {
  nodeId: string;
  leaseMs: number;
  /** streams that need their node's ownership */
  fenced: (stream: string) => boolean;
  /** record types whose append releases the stream */
  releases?: (type: string) => boolean;
}

interface OwnershipStore {
  open(node: OwnershipNode): Promise<EventLog>;
}

export type OwnershipStoreFactory = () => Promise<OwnershipStore>;

const fenced = (s: string) => s.startsWith('exec:') || s.startsWith('run:');
const releases = (t: string) => t === 'execution.suspended';

/** The capability of a log opened by the suite: a store that offers it always declares it. */
function ownershipOf(log: EventLog) {
  if (!log.ownership) throw new Error('a log opened with a lease declares no ownership capability');
  return log.ownership;
}

export function runOwnershipContract(name: string, newStore: OwnershipStoreFactory): void {
  describe(`ownership contract: ${name}`, () => {
    const opened: EventLog[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((l) => l.close()));
    });
    const nodes = async (...ids: string[]) => {
      const store = await newStore();
      const logs: EventLog[] = [];
      for (const nodeId of ids) {
        const log = await store.open({ nodeId, leaseMs: 10_000, fenced, releases });
        opened.push(log);
        logs.push(log);
      }
      return { store, logs };
    };

    it('declares the capability under the node id and epoch the log was opened with', async () => {
      const {
        logs: [a],
      } = await nodes('a');
      expect(a.ownership?.nodeId).toBe('a');
      expect(ownershipOf(a).fencing()).toEqual({ nodeId: 'a', epoch: expect.any(Number) });
    });

    it('refuses appends to a stream another live node owns, naming the owner, and lets it be claimed once that node stops', async () => {
      const {
        logs: [a, b],
      } = await nodes('a', 'b');
      await a.append('exec:x', [{ type: 'execution.started', data: 1 }]);
      const err = await b.append('exec:x', [{ type: 'step.started', data: 2 }]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StreamFencedError);
      expect(err).toMatchObject({ stream: 'exec:x', owner: 'a', message: 'Stream exec:x cannot be appended by this node: owned by node a' });
      expect(await ownershipOf(b).claim('exec:x')).toBe('owned by node a');
      await a.append('exec:x', [{ type: 'step.started', data: 3 }], { expectedStreamSeq: 1 });
      await a.close();
      expect(await ownershipOf(b).claim('exec:x')).toBeUndefined();
      await b.append('exec:x', [{ type: 'step.completed', data: 4 }], { expectedStreamSeq: 2 });
      expect((await b.readStream('exec:x')).map((r) => r.data)).toEqual([1, 3, 4]);
    });

    it('leaves streams that are not fenced open to every node, and a refused append uses up no sequence', async () => {
      const {
        logs: [a, b],
      } = await nodes('a', 'b');
      await a.append('exec:x', [{ type: 'execution.started', data: 1 }]);
      await expect(b.append('exec:x', [{ type: 'step.started', data: 2 }])).rejects.toBeInstanceOf(StreamFencedError);
      const shared = await b.append('conv:c', [{ type: 'conversation.created', data: {} }]);
      expect(shared.lastSeq).toBe(2);
      await a.append('conv:c', [{ type: 'message.added', data: {} }], { expectedStreamSeq: 1 });
      expect(await b.streamHead('conv:c')).toBe(2);
    });

    it('claims a free stream for the claiming node, again without complaint, and counts it as owned', async () => {
      const {
        logs: [a, b],
      } = await nodes('a', 'b');
      expect(await ownershipOf(b).claim('run:r')).toBeUndefined();
      expect(await ownershipOf(b).claim('run:r')).toBeUndefined();
      expect(await ownershipOf(b).ownedCounts(['exec:', 'run:'])).toEqual([0, 1]);
      expect(await ownershipOf(a).ownedCounts(['exec:', 'run:'])).toEqual([0, 0]);
      expect(await ownershipOf(a).claim('run:r')).toBe('owned by node b');
      await expect(a.append('run:r', [{ type: 'run.started', data: {} }])).rejects.toMatchObject({ owner: 'b' });
      await b.append('run:r', [{ type: 'run.started', data: {} }], { expectedStreamSeq: 0 });
    });

    it('gives a node id that registers again a new epoch, which fences what its previous run owned', async () => {
      const store = await newStore();
      const first = await store.open({ nodeId: 'n', leaseMs: 10_000, fenced });
      opened.push(first);
      await first.append('exec:y', [{ type: 't', data: 1 }]);
      const second = await store.open({ nodeId: 'n', leaseMs: 10_000, fenced });
      opened.push(second);
      expect(ownershipOf(second).fencing().epoch).toBe(ownershipOf(first).fencing().epoch + 1);
      await second.append('exec:y', [{ type: 't', data: 2 }]);
      const err = await first.append('exec:y', [{ type: 't', data: 3 }]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StreamFencedError);
      // refused for its stale epoch: there is no other node to forward the command to
      expect((err as StreamFencedError).owner).toBeUndefined();
      expect((await second.readStream('exec:y')).map((r) => r.data)).toEqual([1, 2]);
    });

    it('frees a stream for any node once its owner appends a record that ends or parks its actor', async () => {
      const {
        logs: [a, b],
      } = await nodes('a', 'b');
      await a.append('exec:p', [{ type: 'execution.started', data: 1 }]);
      await expect(b.append('exec:p', [{ type: 'execution.resumed', data: 2 }])).rejects.toThrow(/owned by node a/);
      await a.append('exec:p', [
        { type: 'step.completed', data: 2 },
        { type: 'execution.suspended', data: 3 },
      ]);
      expect(await ownershipOf(a).ownedCounts(['exec:'])).toEqual([0]);
      // resumed on b: b claims it with the append
      await b.append('exec:p', [{ type: 'execution.resumed', data: 4 }], { expectedStreamSeq: 3 });
      await expect(a.append('exec:p', [{ type: 'step.started', data: 5 }])).rejects.toThrow(/owned by node b/);
      expect((await a.readStream('exec:p')).map((r) => r.data)).toEqual([1, 2, 3, 4]);
    });

    it('frees a stream whose writer says its actor parks, whatever the last record type, and only then', async () => {
      const {
        logs: [a, b],
      } = await nodes('a', 'b');
      await a.append('run:r', [{ type: 'run.approval-requested', data: 1 }]);
      // a decision of several: the type does not release, the writer's word does
      await a.append('run:r', [{ type: 'run.approval-answered', data: 2 }]);
      await expect(b.append('run:r', [{ type: 'run.approval-answered', data: 3 }], { expectedStreamSeq: 2 })).rejects.toThrow(/owned by node a/);
      await a.append('run:r', [{ type: 'run.approval-answered', data: 3 }], { expectedStreamSeq: 2, releases: true });
      expect(await ownershipOf(a).ownedCounts(['run:'])).toEqual([0]);
      await b.append('run:r', [{ type: 'run.approval-answered', data: 4 }], { expectedStreamSeq: 3 });
      await expect(a.append('run:r', [{ type: 'run.step', data: 5 }])).rejects.toThrow(/owned by node b/);
      // on a stream nobody owns the word changes nothing
      await a.append('conv:c', [{ type: 'memory.message', data: 1 }], { releases: true });
      expect((await b.readStream('conv:c')).map((r) => r.data)).toEqual([1]);
    });

    it("lists the top-level streams of a stopped owner as takeover candidates, not its child streams nor a live owner's", async () => {
      const {
        logs: [a, b],
      } = await nodes('a', 'b');
      await a.append('exec:p', [{ type: 't', data: 1 }]);
      await a.append('exec:p/child', [{ type: 't', data: 2 }]);
      await b.append('exec:q', [{ type: 't', data: 3 }]);
      expect(await ownershipOf(b).lapsedStreams('exec:', 10)).toEqual([]);
      await a.close();
      expect(await ownershipOf(b).lapsedStreams('exec:', 10)).toEqual(['exec:p']);
      expect(await ownershipOf(b).lapsedStreams('run:', 10)).toEqual([]);
      expect(await ownershipOf(b).ownedCounts(['exec:', 'run:'])).toEqual([1, 0]);
      expect(await ownershipOf(b).claim('exec:p')).toBeUndefined();
      expect(await ownershipOf(b).lapsedStreams('exec:', 10)).toEqual([]);
      expect(await ownershipOf(b).ownedCounts(['exec:', 'run:'])).toEqual([2, 0]);
    });

    it('names the live owner of each stream asked about, and none for a free stream or one whose owner stopped', async () => {
      const {
        logs: [a, b],
      } = await nodes('a', 'b');
      await a.append('exec:p', [{ type: 't', data: 1 }]);
      await b.append('exec:q', [{ type: 't', data: 2 }]);
      const owners = await ownershipOf(b).liveOwners(['exec:p', 'exec:q', 'exec:free']);
      expect(Object.fromEntries(owners)).toEqual({ 'exec:p': 'a', 'exec:q': 'b' });
      await a.close();
      expect(Object.fromEntries(await ownershipOf(b).liveOwners(['exec:p', 'exec:q']))).toEqual({ 'exec:q': 'b' });
      expect((await ownershipOf(b).liveOwners([])).size).toBe(0);
    });
  });
}
