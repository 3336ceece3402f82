/**
 * Many reads of one retention pass (terminal checks, listings, summaries, archived streams) kept in
 * flight together rather than one after another: a store answers a batch of small reads in about
 * the time of one (LevelDB's reader threads, PostgreSQL's pooled connections), and the number in
 * flight stays bounded, so memory does too.
 */

/** Reads in flight at once. */
export const READS_IN_FLIGHT = 64;

/** `read` of each of `items`, at most READS_IN_FLIGHT at a time; the results in the order of `items`. */
export async function readBounded<T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += READS_IN_FLIGHT) out.push(...(await Promise.all(items.slice(i, i + READS_IN_FLIGHT).map(read))));
  return out;
}
