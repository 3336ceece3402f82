/**
 * Timestamps as the API shows them: ISO 8601 in UTC, from epoch milliseconds (records' `at`).
 * The records of one execution, its views and its spans mostly share a millisecond, and each read
 * model formats it again: the last few conversions are remembered (a `Date` and its string per call
 * otherwise, several times per record).
 */
const SLOTS = 4;
const lastMs: number[] = new Array(SLOTS).fill(NaN);
const lastIso: string[] = new Array(SLOTS).fill('');
let next = 0;

export const iso = (ms: number): string => {
  for (let i = 0; i < SLOTS; i++) if (lastMs[i] === ms) return lastIso[i];
  const s = new Date(ms).toISOString();
  lastMs[next] = ms;
  lastIso[next] = s;
  next = (next + 1) % SLOTS;
  return s;
};
