/**
 * Finds Debian's Chromium for browser tests, installing it with apt-get when it is missing (the test
 * machines run as root with Debian's package archive reachable).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export function ensureChromium(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found) return found;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env, timeout: 300_000 });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'ignore', env, timeout: 600_000 });
  const installed = CANDIDATES.find((p) => existsSync(p));
  if (!installed) throw new Error('Chromium could not be installed with apt-get');
  return installed;
}

/** Flags that keep headless Chromium off the network and quiet on a closed machine. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
