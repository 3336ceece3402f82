/**
 * `echo`: returns its input text, optionally after waiting `delayMs` (capped at 30 s). The wait is
 * abortable by the step's signal, so a running execution can be suspended or cancelled mid-step.
 */
import { z } from 'zod';
import { andThen, createWorkflow } from 'eventloom';

export const ECHO_MAX_DELAY_MS = 30_000;

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export const echoWorkflow = createWorkflow(
  {
    id: 'echo',
    name: 'Echo',
    purpose: 'Returns its input text, optionally after a delay',
    // examples show in the API explorer as the body to try
    input: z.object({ text: z.string(), delayMs: z.number().int().min(0).optional() }).meta({ examples: [{ text: 'Hello, eventloom!' }] }),
    result: z.object({ text: z.string() }),
  },
  andThen({
    id: 'echo',
    name: 'Echo',
    purpose: 'Wait delayMs (at most 30 s), then return the text',
    outputSchema: z.object({ text: z.string() }),
    execute: async ({ data, signal }: { data: { text: string; delayMs?: number }; signal: AbortSignal }) => {
      const delay = Math.min(data.delayMs ?? 0, ECHO_MAX_DELAY_MS);
      if (delay > 0) await sleep(delay, signal);
      return { text: data.text };
    },
  }),
);
