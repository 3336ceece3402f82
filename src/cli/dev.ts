/**
 * `eventloom dev [start flags]`: the server for development. It runs `eventloom start` with the same
 * flags as a child process and restarts it whenever a file of the config changes (the config, the
 * local modules it imports, the tsconfig.json that compiles it), so an edited workflow is served a
 * moment after it is saved. The data directory is the same across restarts (the same flags, the
 * same working directory): executions survive and running ones are recovered, as after any restart.
 *
 * A fresh process per restart, rather than re-importing the config in place: Node caches every ES
 * module it imported, so a re-import would keep serving the old code of the files the config imports.
 * Directories are watched, not files: an editor that saves by writing a new file and renaming it
 * over the old one would end a watch on the file itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { PACKAGE_ROOT } from '../package-root.js';

/** Several writes of one save (and an editor's backup file) make one restart. */
const SETTLE_MS = 150;

/** eventloom's own code is not the config: a checkout's sources change with a rebuild, not an edit of the config. */
const OWN_CODE = ['src', 'dist'].map((d) => path.join(PACKAGE_ROOT, d) + path.sep);

export interface DevOptions {
  /** the config file the child loads (resolved as `start` resolves it) */
  configFile: string;
  /** the arguments after `dev`, passed to `start` unchanged */
  startArgs: string[];
  logger: Logger;
}

/** The files to watch: the config's inputs, or the config alone when they cannot be found (it does not compile yet). */
async function watchedFiles(configFile: string, logger: Logger): Promise<string[]> {
  try {
    const { configInputFiles } = await import('../config/compile-config.js');
    const files = await configInputFiles(configFile);
    return files.filter((f) => !f.split(path.sep).includes('node_modules') && !OWN_CODE.some((d) => f.startsWith(d)));
  } catch (err) {
    logger.debug({ err }, 'the config does not compile: watching the config file alone');
    return [path.resolve(configFile)];
  }
}

/**
 * The Node flags of the server `dev` runs: this process's runtime and loader flags (tsx under a
 * checkout), not the debugger's (the child would fight this process for the inspector port), and
 * source maps on, so stack traces name the config's TypeScript files and lines (its inline map).
 */
export function devServerNodeFlags(execArgv: readonly string[]): string[] {
  const flags = execArgv.filter((a) => !/^--inspect/.test(a));
  if (!flags.includes('--enable-source-maps')) flags.push('--enable-source-maps');
  return flags;
}

export async function runDev(options: DevOptions): Promise<void> {
  const { logger } = options;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopping = false;
  let restarting: Promise<void> = Promise.resolve();

  const startChild = () => {
    const c = spawn(process.execPath, [...devServerNodeFlags(process.execArgv), process.argv[1], 'start', ...options.startArgs], { stdio: 'inherit' });
    child = c;
    exited = new Promise((resolve) =>
      c.on('exit', (code, signal) => {
        if (child === c) child = undefined;
        // a server that stopped on its own (a config that does not load): the watch goes on
        if (!asked.has(c)) logger.warn({ code, signal }, `the server exited (${code ?? signal}): save a config file to start it again`);
        resolve();
      }),
    );
  };

  const asked = new WeakSet<ChildProcess>();
  const stopChild = async () => {
    const c = child;
    if (c && c.exitCode === null && c.signalCode === null) {
      asked.add(c);
      c.kill('SIGTERM');
    }
    await exited;
  };

  const watchConfig = async () => {
    for (const w of watchers) w.close();
    const files = new Set(await watchedFiles(options.configFile, logger));
    const dirs = new Set([...files].map((f) => path.dirname(f)));
    watchers = [...dirs].map((dir) =>
      watch(dir, (_event, name) => {
        const changed = name ? path.join(dir, name.toString()) : undefined;
        if (changed === undefined || !files.has(changed)) return;
        clearTimeout(timer);
        timer = setTimeout(() => void restart(changed), SETTLE_MS);
      }),
    );
    logger.debug({ files: [...files] }, `watching ${files.size} config file(s)`);
  };

  const restart = (changed: string) =>
    (restarting = restarting.then(async () => {
      if (stopping) return;
      logger.info({ file: changed }, `${path.relative(process.cwd(), changed) || changed} changed: restarting the server`);
      await stopChild();
      if (stopping) return;
      startChild();
      // the config may import other files now
      await watchConfig();
    }));

  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    clearTimeout(timer);
    for (const w of watchers) w.close();
    void stopChild().then(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);

  startChild();
  await watchConfig();
}
