/** Types of build-explorer.mjs for the tests that check what the build ships. */
export const EXPLORER_OUT: string;
export const EXPLORER_ASSETS: string[];
export function buildExplorer(): string;
