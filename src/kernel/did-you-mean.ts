/**
 * Suggestions for a misspelt name (an agent id, a step id, an MCP server id): the closest known
 * name by edit distance, when it is close enough to be the likely intent, and the list of known
 * names for the message otherwise.
 */

/** Levenshtein distance (insert, delete, substitute; an adjacent swap counts as one). */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}

/** The known name `name` most likely meant: within a third of its length in edits (case ignored), else undefined. */
function closestName(name: string, known: Iterable<string>): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(name.toLowerCase(), k.toLowerCase());
    if (d <= Math.max(1, Math.floor(Math.max(name.length, k.length) / 3)) && (!best || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}

/** `did you mean 'x'? ` plus the known names, or a note that there are none: the tail of an "unknown name" message. */
export function suggestName(name: string, known: readonly string[], what: string): string {
  const close = closestName(name, known);
  const list = known.length === 0 ? `no ${what} is configured` : `${what}: ${known.map((k) => `'${k}'`).join(', ')}`;
  return close ? `did you mean '${close}'? (${list})` : `(${list})`;
}
