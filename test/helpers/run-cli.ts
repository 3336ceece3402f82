/**
 * Runs the real CLI (`tsx src/cli/index.ts ...`) as a child process to its exit; stdout and stderr kept
 * apart and together. One still running after `timeoutMs` (e.g. a start that should have failed) is killed.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they arrived */
  output: string;
}

export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'index.ts'), ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, NODE_ENV: 'test', ...opts.env },
    });
    let stdout = '';
    let stderr = '';
    let output = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15_000);
    child.stdout.on('data', (d) => ((stdout += d), (output += d)));
    child.stderr.on('data', (d) => ((stderr += d), (output += d)));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, output });
    });
  });
}
