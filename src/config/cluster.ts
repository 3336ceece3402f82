/**
 * Which store a node runs on, and who the node is. `--database-url` / `EVENTLOOM_DATABASE_URL` /
 * `cluster.databaseUrl` selects the PostgreSQL store shared by several nodes; without one the node
 * keeps its LevelDB log in the data directory. The node id names this process among the nodes
 * (default `<hostname>-<pid>`); `leaseMs` is the ownership lease of streams (default 10 000).
 */
import os from 'node:os';

export interface ClusterConfig {
  /** postgres:// or postgresql:// URL of the shared store */
  databaseUrl?: string;
  /** this node's id (default `<hostname>-<pid>`) */
  nodeId?: string;
  /** ownership lease of a stream, ms (default 10 000) */
  leaseMs?: number;
}

export interface ResolvedCluster {
  store: 'leveldb' | 'postgres';
  databaseUrl?: string;
  nodeId: string;
  /** false when the id is the per-process default, so nothing stored under it outlives the process */
  stableNodeId: boolean;
  leaseMs: number;
}

const DEFAULT_LEASE_MS = 10_000;

/** Precedence: explicit options (CLI flags), then the environment, then the config file. */
export function resolveCluster(config: ClusterConfig | undefined, env: NodeJS.ProcessEnv, flags: { databaseUrl?: string; nodeId?: string; leaseMs?: number } = {}): ResolvedCluster {
  if (config !== undefined && (config === null || typeof config !== 'object' || Array.isArray(config))) {
    throw new Error('config.cluster must be an object ({ databaseUrl?, nodeId?, leaseMs? })');
  }
  const databaseUrl = flags.databaseUrl ?? (env.EVENTLOOM_DATABASE_URL || undefined) ?? config?.databaseUrl;
  if (databaseUrl !== undefined) {
    if (typeof databaseUrl !== 'string' || !/^postgres(ql)?:\/\//.test(databaseUrl)) {
      throw new Error(`The database URL must start with postgres:// or postgresql://, got '${String(databaseUrl).replace(/\/\/[^@/]*@/, '//***@')}'`);
    }
  }
  const nodeId = flags.nodeId ?? config?.nodeId;
  if (nodeId !== undefined && (typeof nodeId !== 'string' || !/^[\w.:@-]{1,128}$/.test(nodeId))) {
    throw new Error(`The node id must be 1 to 128 letters, digits or . _ : @ -, got '${String(nodeId)}'`);
  }
  const leaseMs = flags.leaseMs ?? config?.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isInteger(leaseMs) || leaseMs < 100 || leaseMs > 3_600_000) {
    throw new Error(`The lease (--lease-ms, config.cluster.leaseMs) must be an integer from 100 to 3600000 (ms), got ${String(leaseMs)}`);
  }
  return {
    store: databaseUrl ? 'postgres' : 'leveldb',
    databaseUrl,
    nodeId: nodeId ?? `${os.hostname()}-${process.pid}`,
    stableNodeId: nodeId !== undefined,
    leaseMs,
  };
}

/**
 * Streams one node at a time may write on the PostgreSQL store: workflow executions (and their
 * child executions) and agent runs, whose actors run effects. Memory and other streams are written
 * by any node, guarded by expectedStreamSeq alone.
 */
export function isOwnedStream(stream: string): boolean {
  return stream.startsWith('exec:') || stream.startsWith('run:');
}

/**
 * Record types after which an owned stream's actor has ended or is parked: the owner lets it go.
 * A run waiting for tool approvals is parked (its state is only in the log), so whichever node
 * receives the decision claims the run in the commit of that decision and continues it there.
 */
const RELEASING_TYPES = new Set(['execution.suspended', 'run.approval-requested', 'execution.completed', 'execution.failed', 'execution.cancelled', 'run.finished', 'run.failed', 'run.aborted']);

export function releasesOwnership(type: string): boolean {
  return RELEASING_TYPES.has(type);
}
