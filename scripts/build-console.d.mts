/** Types of build-console.mjs for the TypeScript tests that build the console before driving it. */
export function newestConsoleMtime(): number;
export function buildConsole(): Promise<string>;
