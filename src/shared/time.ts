/** Timestamps as the API shows them: ISO 8601 in UTC, from epoch milliseconds (records' `at`). */
export const iso = (ms: number): string => new Date(ms).toISOString();
