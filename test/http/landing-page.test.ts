/** The landing page counts what the server hosts in correct English: "1 agent", "2 tools", "0 workflows". */
import { describe, expect, it } from 'vitest';
import { docsRoutes } from '../../src/http/routes/docs.routes.js';
import type { RouteResult } from '../../src/contract/routes.js';

async function landing(counts: { agents: number; workflows: number; tools: number }): Promise<string> {
  const route = docsRoutes({ version: '0.0.0', routes: () => [], port: () => 0, counts: () => counts, enableUi: false }).find((r) => r.path === '/')!;
  const result = (await route.handler({} as never)) as RouteResult & { body?: unknown };
  return String((result as { body: unknown }).body);
}

describe('landing page', () => {
  it('uses the singular for one and the plural otherwise', async () => {
    const one = await landing({ agents: 1, workflows: 1, tools: 1 });
    expect(one).toContain('<strong>1</strong> agent<');
    expect(one).toContain('<strong>1</strong> workflow<');
    expect(one).toContain('<strong>1</strong> tool<');
    const many = await landing({ agents: 2, workflows: 0, tools: 7 });
    expect(many).toContain('<strong>2</strong> agents<');
    expect(many).toContain('<strong>0</strong> workflows<');
    expect(many).toContain('<strong>7</strong> tools<');
  });
});
