/**
 * Every file a comment or a document points at is in the repository: `*.md` names and relative paths in
 * code comments, Markdown links (with their `#anchor`), and a quoted heading after a docs/ file
 * (`docs/api-reference.md "Server-Sent Events"`). The contract lives in docs/, so the names of design
 * files that were never part of the repository fail wherever they appear.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchor } from '../../scripts/docs/http-api.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where references are looked for; generated and third-party folders are not ours to fix. */
const SCANNED = ['src', 'test', 'bench', 'console/src', 'examples', 'scripts', 'machines', 'bin', 'README.md', 'docs'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'results', 'screenshots', 'fixtures']);
const CODE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
/** Top-level folders a path written from the repository root starts with. */
const ROOTS = ['src', 'test', 'bench', 'console', 'examples', 'scripts', 'docs', 'machines', 'bin'];

/** Names that must not appear: design files outside the repository (an API file name only when it is not a docs/ path). */
const FORBIDDEN: Array<[RegExp, string]> = [
  [/(?<![\w-])decisions\.md/i, 'decisions.md is not in the repository; point at the docs/ section that says it'],
  [/(?<![\w-])design\.md/i, 'DESIGN.md is not in the repository; point at docs/design-notes.md or docs/api-reference.md'],
  [/(?<![\w/.-])api\.md/, 'api.md is not in the repository; point at docs/api-reference.md or docs/reference/http-api.md'],
];

/**
 * Names that look like repository paths and are not: files of a user's project or of the running server's
 * working directory, another project's document, a build output, and a file name cited as one to avoid.
 */
const NOT_REPOSITORY_PATHS = new Map<string, string>([
  ['.env', "the server's working directory"],
  ['.eventloom', "a project's data directory"],
  ['eventloom.config.ts', "a user's project"],
  ['testing', 'the package subpath eventloom/testing'],
  ['table_format.md', "LevelDB's own documentation"],
  ['src/mcp/server.ts', 'named as the file name the layout avoids'],
  ['bench/peers/voltagent/dist', 'built by the benchmark when it runs'],
]);

function walk(rel: string, out: string[]): void {
  const abs = path.join(root, rel);
  if (!existsSync(abs)) return;
  if (statSync(abs).isFile()) {
    if (CODE.test(rel) || rel.endsWith('.md')) out.push(rel);
    return;
  }
  for (const e of readdirSync(abs, { withFileTypes: true })) {
    if (e.isDirectory() && SKIPPED_DIRS.has(e.name)) continue;
    if (e.isSymbolicLink()) continue;
    walk(path.posix.join(rel, e.name), out);
  }
}

/** The comment text of each line of a source file (line and block comments; strings are not comments). */
export function commentLines(source: string): string[] {
  const lines = source.split('\n');
  let inBlock = false;
  return lines.map((line) => {
    let text = '';
    let i = 0;
    let quote: string | undefined;
    while (i < line.length) {
      if (inBlock) {
        const end = line.indexOf('*/', i);
        text += ` ${line.slice(i, end === -1 ? line.length : end)}`;
        if (end === -1) break;
        inBlock = false;
        i = end + 2;
        continue;
      }
      const c = line[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = undefined;
        i++;
        continue;
      }
      if (c === '"' || c === "'" || c === '`') quote = c;
      else if (line.startsWith('//', i)) {
        text += ` ${line.slice(i + 2)}`;
        break;
      } else if (line.startsWith('/*', i)) {
        inBlock = true;
        i += 2;
        continue;
      }
      i++;
    }
    // a template literal spanning lines is rare in comments' neighbourhood: treat each line afresh
    return text;
  });
}

interface Reference {
  file: string;
  line: number;
  target: string;
  heading?: string;
}

const headingsCache = new Map<string, string[]>();
function headingsOf(rel: string): string[] {
  let hs = headingsCache.get(rel);
  if (!hs) {
    hs = [];
    let fence = false;
    for (const l of readFileSync(path.join(root, rel), 'utf8').split('\n')) {
      if (l.startsWith('```')) fence = !fence;
      const m = !fence && /^#{1,6}\s+(.*?)\s*$/.exec(l);
      if (m) hs.push(m[1]);
    }
    headingsCache.set(rel, hs);
  }
  return hs;
}

/** A heading named by its text, or by its text without a trailing parenthesis (`Agent history`). */
const hasHeading = (rel: string, name: string) => headingsOf(rel).some((h) => h === name || h.replace(/\s*\(.*\)$/, '') === name || h.replace(/`/g, '') === name);
const hasAnchor = (rel: string, a: string) => headingsOf(rel).some((h) => anchor(h) === a);

const basenames = (() => {
  const all: string[] = [];
  walk('.', all);
  return new Set(all.map((f) => path.posix.basename(f)));
})();

/** Where a referenced path is, if anywhere: from the referring file's folder, or from the repository root. */
function resolve(from: string, target: string): string | undefined {
  const candidates = target.startsWith('.') ? [path.posix.join(path.posix.dirname(from), target)] : [target, path.posix.join(path.posix.dirname(from), target)];
  for (const c of candidates) {
    const n = path.posix.normalize(c).replace(/\/$/, '');
    const variants = [n, n.replace(/\.js$/, '.ts'), n.replace(/\.mjs$/, '.mts'), n.replace(/\.js$/, '.tsx'), `${n}.ts`];
    for (const v of variants) if (!v.startsWith('..') && existsSync(path.join(root, v))) return v;
  }
  return undefined;
}

const PATH_CHARS = String.raw`[\w@.+-]+(?:/[\w@.+-]+)*/?`;
/** A Markdown file name, alone, with `#anchor`, or followed by quoted headings (`"A", "B" and "C"`). */
const MD_NAME = new RegExp(String.raw`(?<![\w/.-])((?:\.{1,2}/)?(?:[\w.+-]+/)*[\w.+-]+\.md)(?:#([\w-]+))?(?:,?\s*("[^"]+"(?:(?:,\s*|\s+and\s+)"[^"]+")*))?`, 'g');
const REL_PATH = new RegExp(String.raw`(?<![\w/.@:-])((?:\.{1,2}/)+${PATH_CHARS}|(?:${ROOTS.join('|')})/${PATH_CHARS})`, 'g');
const MD_LINK = /\[[^\]]*\]\(([^)\s]+)\)/g;

function referencesIn(file: string): Reference[] {
  const source = readFileSync(path.join(root, file), 'utf8');
  const isMd = file.endsWith('.md');
  const texts = isMd ? source.split('\n') : commentLines(source);
  const refs: Reference[] = [];
  let fence = false;
  texts.forEach((text, i) => {
    const line = i + 1;
    if (isMd && text.startsWith('```')) fence = !fence;
    if (isMd) {
      for (const m of text.matchAll(MD_LINK)) {
        const t = m[1];
        if (/^[a-z]+:/i.test(t) || t.startsWith('#')) {
          if (t.startsWith('#') && !fence) refs.push({ file, line, target: file, heading: `#${t.slice(1)}` });
          continue;
        }
        const [p, a] = t.split('#');
        refs.push({ file, line, target: p, heading: a ? `#${a}` : undefined });
      }
    }
    for (const m of text.matchAll(MD_NAME)) {
      if (/^https?:/.test(text.slice(Math.max(0, m.index - 8), m.index))) continue;
      if (m[2]) refs.push({ file, line, target: m[1], heading: `#${m[2]}` });
      else if (m[3]) for (const h of m[3].matchAll(/"([^"]+)"/g)) refs.push({ file, line, target: m[1], heading: h[1] });
      else refs.push({ file, line, target: m[1] });
    }
    if (!isMd || !fence) {
      for (const m of text.matchAll(REL_PATH)) {
        const t = m[1].replace(/[.,;:]+$/, '');
        if (t.endsWith('.md')) continue; // checked above
        // a pattern or a prefix (`src/cli-init*`, `soak-<time>.json`), not one file
        if (/^[*<{$]/.test(text.slice(m.index + m[1].length))) continue;
        refs.push({ file, line, target: t });
      }
    }
  });
  return refs;
}

function scan(): { problems: string[]; count: number } {
  const files: string[] = [];
  for (const s of SCANNED) walk(s, files);
  const problems: string[] = [];
  let count = 0;
  for (const file of files) {
    const source = readFileSync(path.join(root, file), 'utf8');
    const texts = file.endsWith('.md') ? source.split('\n') : commentLines(source);
    texts.forEach((text, i) => {
      for (const [re, why] of FORBIDDEN) if (re.test(text)) problems.push(`${file}:${i + 1}: ${why}`);
    });
    for (const ref of referencesIn(file)) {
      count++;
      const where = `${ref.file}:${ref.line}`;
      if (NOT_REPOSITORY_PATHS.has(ref.target.replace(/^\.\//, ''))) continue;
      const bare = !ref.target.includes('/');
      const found = resolve(ref.file, ref.target) ?? (bare && basenames.has(ref.target) ? ref.target : undefined);
      if (!found) {
        if (!FORBIDDEN.some(([re]) => re.test(ref.target))) problems.push(`${where}: ${ref.target} does not exist in the repository`);
        continue;
      }
      if (ref.heading === undefined || !found.endsWith('.md') || !existsSync(path.join(root, found))) continue;
      const ok = ref.heading.startsWith('#') ? hasAnchor(found, ref.heading.slice(1)) : hasHeading(found, ref.heading);
      if (!ok) problems.push(`${where}: ${found} has no heading ${ref.heading.startsWith('#') ? ref.heading : `"${ref.heading}"`}`);
    }
  }
  return { problems, count };
}

describe('references to files in comments and documents', () => {
  it('name only files and headings that exist in the repository, and none of the design files outside it', () => {
    const { problems, count } = scan();
    expect(count).toBeGreaterThan(50);
    expect(problems, `broken references:\n${problems.join('\n')}\n`).toEqual([]);
  });

  it('reads comments, not strings', () => {
    const lines = commentLines(["const a = 'see decisions.md'; // see docs/x.md", '/* one', ' * two */ code("//not")'].join('\n'));
    expect(lines[0].trim()).toBe('see docs/x.md');
    expect(lines[1]).toContain('one');
    expect(lines[2]).toContain('two');
    expect(lines[2]).not.toContain('not');
  });
});
