/**
 * The OpenAPI document as a person using the explorer needs it: `servers` is the address the request
 * used (X-Forwarded-* behind a proxy), Agents and Workflows come first, path ids list the registered
 * agents, workflows and tools, request bodies have examples a person would send, and a bearer scheme
 * appears when JWT auth is on. A validator accepts the document in both modes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import exampleConfig from '../../examples/eventloom.config.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

describe('GET /doc for the explorer', () => {
  let t: TestServer;
  let jwt: TestServer;
  beforeAll(async () => {
    t = await startTestServer(exampleConfig);
    jwt = await startTestServer(exampleConfig, { env: { NODE_ENV: 'test', JWT_SECRET: 'a-secret-of-enough-length-for-hs256!!' } });
  });
  afterAll(async () => {
    await t.close();
    await jwt.close();
  });

  it('names the origin the client used as the server, proxies included', async () => {
    expect((await api(`${t.url}/doc`)).body.servers).toEqual([{ url: t.url }]);
    const proxied = await api(`${t.url}/doc`, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' } });
    expect(proxied.body.servers).toEqual([{ url: 'https://api.example.com' }]);
  });

  it('lists Agents and Workflows first', async () => {
    const tags = (await api(`${t.url}/doc`)).body.tags.map((x: { name: string }) => x.name);
    expect(tags.slice(0, 2)).toEqual(['Agents', 'Workflows']);
    expect(tags).toContain('Tools');
    expect(new Set(tags).size).toBe(tags.length);
  });

  it('offers the registered ids for path ids', async () => {
    const doc = (await api(`${t.url}/doc`)).body;
    const idOf = (p: string, method: string, name: string) => doc.paths[p][method].parameters.find((x: { name: string }) => x.name === name);
    expect(idOf('/agents/{id}/text', 'post', 'id')).toMatchObject({ schema: { type: 'string', enum: ['assistant'] }, example: 'assistant' });
    expect(idOf('/workflows/{id}/execute', 'post', 'id')).toMatchObject({ schema: { enum: ['echo', 'order-approval', 'weather-brief', 'checkout', 'payment-reminder'] } });
    expect(idOf('/tools/{name}/execute', 'post', 'name')).toMatchObject({ schema: { enum: ['getWeather', 'issueRefund'] } });
    // an execution id is not enumerable
    expect(idOf('/workflows/{id}/executions/{executionId}/resume', 'post', 'executionId').schema).toEqual({ type: 'string' });
  });

  it('gives request bodies examples a person would send, which the server accepts', async () => {
    const doc = (await api(`${t.url}/doc`)).body;
    const examples = (p: string) => doc.paths[p].post.requestBody.content['application/json'].examples;
    const text = examples('/agents/{id}/text');
    expect(text.question.value).toEqual({ input: 'Hello! What can you do?' });
    expect(JSON.stringify(text)).not.toContain('maxOutputTokens');
    const exec = examples('/workflows/{id}/execute');
    expect(exec['order-approval'].value).toEqual({
      input: {
        items: [
          { price: 60, qty: 2 },
          { price: 4.5, qty: 3 },
        ],
      },
    });
    expect(exec.echo.value).toEqual({ input: { text: 'Hello, eventloom!' } });
    expect(examples('/workflows/{id}/executions/{executionId}/resume')['order-approval'].value).toEqual({ resumeData: { approved: true } });
    expect(examples('/tools/{name}/execute').getWeather.value).toEqual({ input: { city: 'Paris' } });

    // the examples work as they are
    const run = await api(`${t.url}/workflows/order-approval/execute`, { method: 'POST', json: exec['order-approval'].value });
    expect(run.body.data.status).toBe('suspended');
    const resumed = await api(`${t.url}/workflows/order-approval/executions/${run.body.data.executionId}/resume`, {
      method: 'POST',
      json: examples('/workflows/{id}/executions/{executionId}/resume')['order-approval'].value,
    });
    expect(resumed.body.data.status).toBe('completed');
    expect((await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: text.question.value })).status).toBe(200);
    expect((await api(`${t.url}/tools/getWeather/execute`, { method: 'POST', json: examples('/tools/{name}/execute').getWeather.value })).status).toBe(200);
  });

  it('offers a bearer scheme only when JWT auth is on, and validates in both modes', async () => {
    const open = (await api(`${t.url}/doc`)).body;
    expect(open.components?.securitySchemes).toBeUndefined();
    const secured = (await api(`${jwt.url}/doc`)).body;
    expect(secured.components.securitySchemes).toEqual({ bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } });
    expect(secured.security).toEqual([{}, { bearerAuth: [] }]);
    for (const doc of [open, secured]) {
      const res = await new Validator().validate(doc);
      expect(res.errors ?? []).toEqual([]);
      expect(res.valid).toBe(true);
    }
  });
});
