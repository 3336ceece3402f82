/**
 * Keyset paging of `GET /workflows/executions` and `GET /agents/:id/history`: following
 * `nextCursor` visits every row once, in order, while new rows arrive between pages; `offset` and
 * `page` answer as before; a malformed cursor is a 400 naming the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoWorkflow } from '../../examples/workflows/echo.workflow.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { RecordSeq, agentRun } from '../observability/records.js';

let t: TestServer;
const execute = async (text: string) => {
  const res = await api(`${t.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text } } });
  expect(res.status).toBe(200);
};

beforeAll(async () => {
  t = await startTestServer({ workflows: [echoWorkflow], agents: [assistantAgent] });
});
afterAll(async () => {
  await t.close();
});

describe('executions list cursor', () => {
  it('visits every execution exactly once, newest first, while executions are added between pages', async () => {
    for (let i = 0; i < 23; i++) await execute(`before ${i}`);
    const all = (await api(`${t.url}/workflows/executions?limit=100`)).body;
    expect(all.total).toBe(23);
    const expected = all.data.map((e: any) => e.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = (await api(`${t.url}/workflows/executions?limit=5${cursor ? `&cursor=${cursor}` : ''}`)).body;
      expect(page.success).toBe(true);
      seen.push(...page.data.map((e: any) => e.id));
      cursor = page.nextCursor;
      await execute(`during ${pages++}`);
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen).toEqual(expected);
  });

  it('pages a status filter by cursor and keeps total, and answers offset pages as before', async () => {
    const full = (await api(`${t.url}/workflows/executions?status=completed&limit=1000`)).body;
    const ids = full.data.map((e: any) => e.id);
    const first = (await api(`${t.url}/workflows/executions?status=completed&limit=7`)).body;
    const second = (await api(`${t.url}/workflows/executions?status=completed&limit=7&cursor=${first.nextCursor}`)).body;
    expect(second.total).toBe(full.total);
    expect(second.data.map((e: any) => e.id)).toEqual(ids.slice(7, 14));
    const half = Math.floor(full.total / 2);
    const byOffset = (await api(`${t.url}/workflows/executions?status=completed&limit=7&offset=${half}`)).body;
    expect(byOffset).toMatchObject({ total: full.total, limit: 7, offset: half });
    expect(byOffset.data.map((e: any) => e.id)).toEqual(ids.slice(half, half + 7));
    const last = (await api(`${t.url}/workflows/executions?status=completed&limit=1000`)).body;
    expect(last.nextCursor).toBeUndefined();
  });

  it('answers a malformed cursor with a 400 naming it', async () => {
    for (const bad of ['not*base64', Buffer.from('hello').toString('base64url')]) {
      const res = await api(`${t.url}/workflows/executions?cursor=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('cursor');
    }
  });

  it('shows cursor and nextCursor in the OpenAPI document', async () => {
    const doc = (await api(`${t.url}/doc`)).body;
    const op = doc.paths['/workflows/executions'].get;
    expect(op.parameters.map((p: any) => p.name)).toContain('cursor');
    expect(Object.keys(op.responses['200'].content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['nextCursor', 'total']));
  });
});

describe('agent history cursor', () => {
  it('visits every run once, newest first, while runs are added between pages, and keeps page paging', async () => {
    const r = new RecordSeq(Date.now());
    const add = async (id: string) => {
      for (const rec of agentRun(r, id, 'assistant')) await t.server.log.append(rec.stream, [{ type: rec.type, data: rec.data, at: rec.at }]);
    };
    for (let i = 0; i < 11; i++) await add(`h${i}`);
    const url = `${t.url}/agents/assistant/history`;
    const all = (await api(`${url}?limit=100`)).body.data;
    expect(all.pagination.total).toBe(11);
    const seen: unknown[] = [];
    let cursor: string | undefined;
    let n = 0;
    do {
      const page = (await api(`${url}?limit=3${cursor ? `&cursor=${cursor}` : ''}`)).body.data;
      seen.push(...page.entries);
      cursor = page.nextCursor;
      await add(`later${n++}`);
    } while (cursor);
    expect(seen).toEqual(all.entries);
    const byPage = (await api(`${url}?limit=3&page=1`)).body.data;
    expect(byPage.pagination).toEqual({ page: 1, limit: 3, total: 11 + n, totalPages: Math.ceil((11 + n) / 3) });
    expect((await api(`${url}?cursor=abc`)).status).toBe(400);
  });
});
