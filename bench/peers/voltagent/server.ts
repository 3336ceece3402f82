/**
 * VoltAgent (`@voltagent/core` + `@voltagent/server-hono`) serving the same fixture as eventloom's
 * examples/: agent `assistant` (scripted mock model, tool `getWeather`, in-memory conversation memory
 * with conversation-scoped markdown working memory) and workflows `echo` and `order-approval`
 * built with VoltAgent's workflow API. The peer of `npm run bench:peers`.
 *
 * Usage: node dist/server.js --port <n> [--host 127.0.0.1] (dist/ is transpiled by the benchmark)
 * Offline by construction: network-guard refuses non-loopback connections, the dependency check is
 * off, and no VoltOps keys are set (the bench runs it with NODE_ENV=production, which also turns off
 * the provider-registry refresh). Stops on SIGTERM/SIGINT (VoltAgent's own shutdown handlers).
 */
import './network-guard.js';
import { Agent, InMemoryStorageAdapter, Memory, VoltAgent, andThen, createTool, createWorkflow, createWorkflowChain } from '@voltagent/core';
import { createPinoLogger } from '@voltagent/logger';
import { honoServer } from '@voltagent/server-hono';
import { z } from 'zod';
import { createDemoModel } from './demo-model.js';

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`missing --${name}`);
  return value;
}

const port = Number(arg('port'));
const host = arg('host', '127.0.0.1');
const ECHO_MAX_DELAY_MS = 30_000;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const logLevel = LOG_LEVELS.find((l) => l === process.env.LOG_LEVEL) ?? 'warn';

/** Resolves after `ms`, or rejects as soon as `signal` aborts (as examples/workflows/echo.workflow.ts). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const getWeather = createTool({
  name: 'getWeather',
  description: 'Get the current weather for a city',
  parameters: z.object({ city: z.string().min(1).describe('The city, e.g. Paris') }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});

const assistant = new Agent({
  id: 'assistant',
  name: 'Assistant',
  purpose: 'A helpful assistant that can look up the weather',
  instructions: 'You are a helpful assistant. Use the getWeather tool when the user asks about the weather, and answer briefly.',
  model: createDemoModel(),
  tools: [getWeather],
  memory: new Memory({
    storage: new InMemoryStorageAdapter(),
    workingMemory: { enabled: true, scope: 'conversation', template: '# Notes\n' },
  }),
});

const echo = createWorkflow(
  {
    id: 'echo',
    name: 'Echo',
    purpose: 'Returns its input text, optionally after a delay',
    input: z.object({ text: z.string(), delayMs: z.number().int().min(0).optional() }),
    result: z.object({ text: z.string() }),
  },
  andThen({
    id: 'echo',
    name: 'Echo',
    purpose: 'Wait delayMs (at most 30 s), then return the text',
    outputSchema: z.object({ text: z.string() }),
    execute: async ({ data, state }) => {
      const delay = Math.min(data.delayMs ?? 0, ECHO_MAX_DELAY_MS);
      if (delay > 0) await sleep(delay, state.signal);
      return { text: data.text };
    },
  }),
);

type Totalled = { total: number; approved?: boolean };

const orderApproval = createWorkflowChain({
  id: 'order-approval',
  name: 'Order Approval',
  purpose: 'Approve orders, asking a manager when the total is over 100',
  input: z.object({ items: z.array(z.object({ price: z.number(), qty: z.number() })) }),
  result: z.object({ status: z.string(), total: z.number() }),
  suspendSchema: z.object({ total: z.number() }),
  resumeSchema: z.object({ approved: z.boolean() }),
})
  .andThen({
    id: 'compute-total',
    name: 'Compute total',
    purpose: 'Sum price × quantity',
    execute: async ({ data }): Promise<Totalled> => ({ total: data.items.reduce((sum, i) => sum + i.price * i.qty, 0) }),
  })
  .andWhen({
    id: 'approval-gate',
    name: 'Approval gate',
    purpose: 'Orders over 100 need a manager',
    condition: async ({ data }) => data.total > 100,
    step: andThen({
      id: 'manager-approval',
      name: 'Manager approval',
      suspendSchema: z.object({ total: z.number() }),
      resumeSchema: z.object({ approved: z.boolean() }),
      execute: async ({ data, resumeData, suspend }): Promise<Totalled> => {
        const { total } = data as Totalled;
        if (resumeData === undefined) await suspend('manager approval', { total });
        return { total, approved: (resumeData as { approved: boolean }).approved };
      },
    }),
  })
  .andAll({
    id: 'parallel-checks',
    name: 'Parallel checks',
    steps: [
      andThen({ id: 'check-stock', execute: async ({ data }) => ({ check: 'stock', ok: true, total: (data as Totalled).total }) }),
      andThen({ id: 'check-fraud', execute: async ({ data }) => ({ check: 'fraud', ok: (data as Totalled).total < 1_000_000 }) }),
    ],
  })
  .andTap({
    id: 'log-checks',
    name: 'Log checks',
    execute: async ({ data, logger }) => logger.info('order checks done', { checks: data }),
  })
  .andRace({
    id: 'route-race',
    name: 'Route race',
    steps: [
      // `any` input: VoltAgent 2.10's d.ts types a race step's INPUT as the step tuple itself
      andThen<any, unknown, { route: string }>({ id: 'fast-route', execute: async () => ({ route: 'fast' }) }),
      andThen<any, unknown, { route: string }>({
        id: 'slow-route',
        execute: async ({ state }) => {
          await sleep(1_000, state.signal);
          return { route: 'slow' };
        },
      }),
    ],
  })
  .andThen({
    id: 'finalise',
    name: 'Finalise',
    execute: async ({ getStepData }) => {
      const gate = getStepData('approval-gate')?.output as Totalled | undefined;
      const computed = getStepData('compute-total')!.output as Totalled;
      return { status: gate?.approved === false ? 'rejected' : 'approved', total: computed.total };
    },
  });

new VoltAgent({
  agents: { assistant },
  workflows: { echo, orderApproval },
  logger: createPinoLogger({ name: 'voltagent-peer', level: logLevel }),
  checkDependencies: false,
  server: honoServer({ port, hostname: host }),
});
