/**
 * Which of the unfinished streams found at boot this node may run. On one node (LevelDB) all of
 * them; on the PostgreSQL store only those it can claim: a stream another live node runs stays
 * with that node, and one whose owner is gone becomes this node's.
 */
import type { ServerContext } from './server-module.js';

export async function claimable(ctx: Pick<ServerContext, 'claim'>, ids: readonly string[], streamOf: (id: string) => string): Promise<string[]> {
  const claim = ctx.claim;
  if (!claim) return [...ids];
  const out: string[] = [];
  for (const id of ids) if (await claim(streamOf(id))) out.push(id);
  return out;
}
