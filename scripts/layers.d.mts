/** Types of layers.mjs for the architecture test. */
export interface FolderArrow {
  from: string;
  to: string;
  files: string[];
}
export interface CruiseResult {
  modules: { source: string; dependencies: { resolved: string }[] }[];
  summary: { violations: { from: string; to: string; rule: { name: string } }[] };
}
export const DOMAINS: string[];
export const LAYERS: { id: string; name: string; folders: string[] }[];
export function folderOf(file: string): string;
export function rankOf(folder: string): number;
export function cruise(cwd?: string, dirs?: string[]): CruiseResult;
export function folderGraph(result: CruiseResult): Map<string, Map<string, string[]>>;
export function measure(graph: Map<string, Map<string, string[]>>): { folders: number; arrows: number; upward: FolderArrow[]; mutual: string[]; betweenDomains: FolderArrow[] };
export function render(graph: Map<string, Map<string, string[]>>): string;
export function withPicture(notes: string, picture: string): string;
export function readNotes(): string;
