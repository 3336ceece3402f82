/**
 * docs/public-surface.txt lists every name `eventloom` and `eventloom/testing` export. It is checked in,
 * so a change to the public API shows as a diff of that file and gets reviewed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderPublicSurface, SURFACE_FILE } from '../../scripts/public-surface.js';

describe('public surface', () => {
  it('docs/public-surface.txt lists the current exports of the entry points', () => {
    const current = renderPublicSurface();
    const stored = readFileSync(SURFACE_FILE, 'utf8');
    expect(stored === current, 'docs/public-surface.txt is stale: run `npm run surface`, then review the change to the public API before committing it').toBe(true);
    expect(stored).toBe(current);
  }, 120_000);
});
