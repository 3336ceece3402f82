/**
 * The dotenv writer of POST /setup-observability: keys are updated in place or appended, other lines are kept,
 * and a value can never inject a second line.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setEnvValues, writeEnvValues } from '../../src/observability/env-file.js';

describe('setEnvValues', () => {
  it('replaces existing lines in place (export prefix kept) and appends missing keys', () => {
    const text = '# comment\nexport SERVICE_PUBLIC_KEY=old\nOTHER=1\n';
    expect(setEnvValues(text, { SERVICE_PUBLIC_KEY: 'pk', SERVICE_SECRET_KEY: 'sk' })).toBe('# comment\nexport SERVICE_PUBLIC_KEY=pk\nOTHER=1\nSERVICE_SECRET_KEY=sk\n');
  });

  it('creates content for an empty file and keeps CRLF line endings of an existing one', () => {
    expect(setEnvValues('', { A: '1' })).toBe('A=1\n');
    expect(setEnvValues('X=1\r\nA=0\r\n', { A: '2' })).toBe('X=1\r\nA=2\r\n');
    expect(setEnvValues('X=1', { A: '2' })).toBe('X=1\nA=2\n');
  });

  it('quotes values that are not plain tokens so they cannot add lines', () => {
    const out = setEnvValues('', { A: 'evil\nINJECTED=1', B: 'has space "q"' });
    expect(out).toBe('A="evil\\nINJECTED=1"\nB="has space \\"q\\""\n');
    expect(out.split('\n').filter(Boolean)).toHaveLength(2);
  });
});

describe('writeEnvValues', () => {
  it('writes a new file and rewrites an existing one keeping its other lines', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'envfile-'));
    const file = path.join(dir, '.env');
    await writeEnvValues(file, { SERVICE_PUBLIC_KEY: 'a' });
    expect(readFileSync(file, 'utf8')).toBe('SERVICE_PUBLIC_KEY=a\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'KEEP=me\nSERVICE_PUBLIC_KEY=a\n', { mode: 0o640 });
    await writeEnvValues(file, { SERVICE_PUBLIC_KEY: 'b', SERVICE_SECRET_KEY: 'c' });
    expect(readFileSync(file, 'utf8')).toBe('KEEP=me\nSERVICE_PUBLIC_KEY=b\nSERVICE_SECRET_KEY=c\n');
  });

  it('fails when the directory does not exist', async () => {
    await expect(writeEnvValues('/nonexistent-dir-for-test/.env', { A: '1' })).rejects.toThrow();
  });
});
