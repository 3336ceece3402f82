/**
 * Property test of durable retries over the pure pieces the engine runs them with: the execution
 * machine (xstate `transition()`) and the decisions of decide.ts. A two-step workflow whose first
 * step has a random `retry` policy meets a random sequence of attempt outcomes (success, a failure,
 * a NonRetryableError), with random recoveries (an attempt interrupted, or the backoff interrupted)
 * and timer firings that come too early, twice, or for an attempt already started. Whatever the
 * sequence: a step never runs more attempts than `attempts`, each retryAt is its failure time plus
 * the policy's backoff (jitter only shortens it, maxMs caps it), the next attempt starts only by
 * its retry's timer, once, and the run ends as the outcomes say.
 */
import { expect, it } from 'vitest';
import fc from 'fast-check';
import { initialTransition, transition } from 'xstate';
import { workflowExecutionMachine, type ExecutionEvent, type ExecutionInput } from '../../machines/workflow-execution.machine.js';
import type { ExecSnapshot } from '../../src/workflows/engine.js';
import { nextStepEvent, outcomeEvent } from '../../src/workflows/decide.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { backoffDelay, type RetryPolicy } from '../../src/workflows/retry-policy.js';
import type { StepOutcome } from '../../src/workflows/step-runner.js';

type Outcome = 'ok' | 'fail' | 'fatal';

const policyArb: fc.Arbitrary<RetryPolicy> = fc.record({
  attempts: fc.integer({ min: 1, max: 6 }),
  backoff: fc.record(
    {
      initialMs: fc.integer({ min: 0, max: 10_000 }),
      factor: fc.double({ min: 1, max: 4, noNaN: true }),
      maxMs: fc.integer({ min: 0, max: 60_000 }),
      jitter: fc.oneof(fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true })),
    },
    { requiredKeys: [] },
  ),
});

const stepArb = fc.record({
  outcome: fc.constantFrom<Outcome>('ok', 'fail', 'fail', 'fail', 'fatal'),
  /** the attempt is interrupted (a crash) and recovered before its outcome */
  interrupted: fc.boolean(),
  /** the backoff is interrupted (a crash) and the run recovered before its timer fires */
  recoverInBackoff: fc.boolean(),
  /** a timer fires before retryAt (the engine's advance after recovery must not start the step) */
  early: fc.boolean(),
  random: fc.double({ min: 0, max: 0.999999, noNaN: true }),
  /** ms the attempt takes */
  ran: fc.integer({ min: 0, max: 5_000 }),
});

const input = (): ExecutionInput => ({ executionId: 'x', workflowId: 'w', workflowName: 'w', stepIds: ['call', 'next'], input: 0, context: {}, workflowState: {}, metadata: {}, createdAt: 0 });

const outcomeOf = (o: Outcome): StepOutcome =>
  o === 'ok'
    ? { kind: 'completed', output: 'ok' }
    : o === 'fail'
      ? { kind: 'failed', error: { message: 'boom', name: 'Error', stepId: 'call' } }
      : { kind: 'failed', error: { message: 'fatal', name: 'NonRetryableError', stepId: 'call' }, retryable: false };

it('never runs a step more than its attempts, spaces them by the backoff and ends as the outcomes say', () => {
  const seen = { retried: 0, exhausted: 0, fatal: 0, recovered: 0, completed: 0 };
  fc.assert(
    fc.property(policyArb, fc.array(stepArb, { minLength: 1, maxLength: 8 }), (policy, script) => {
      const def = createWorkflow({ id: 'w' }, andThen({ id: 'call', retry: policy, execute: () => 0 }), andThen({ id: 'next', execute: () => 1 }));
      const step = def.steps[0];
      let [snap] = initialTransition(workflowExecutionMachine, input()) as unknown as [ExecSnapshot];
      const apply = (e: ExecutionEvent) => {
        expect(snap.can(e), `${e.type} is accepted`).toBe(true);
        [snap] = transition(workflowExecutionMachine, snap, e as never) as unknown as [ExecSnapshot];
      };
      let now = 1_000_000;
      const starts: number[] = [];
      const retryAts: Array<{ failed: number; at: number; failedAt: number; random: number }> = [];
      let k = 0;
      // the run's first start
      apply(nextStepEvent(def, snap.context)!);
      starts.push(snap.context.current!.stepAttempt ?? 1);
      for (;;) {
        const s = script[Math.min(k, script.length - 1)];
        const cur = snap.context.current!;
        if (s.interrupted && k < script.length) {
          // a crash mid-attempt: recovered, the same attempt runs again (it did not fail)
          apply({ type: 'execution.recovered', resumeStepIndex: cur.index, input: 0, workflowName: 'w' });
          const again = nextStepEvent(def, snap.context)!;
          expect(again.type).toBe('step.started');
          expect((again as { stepAttempt?: number }).stepAttempt ?? 1).toBe(cur.stepAttempt ?? 1);
          apply(again);
          seen.recovered++;
        }
        now += s.ran;
        const o = outcomeOf(s.outcome);
        const ev = outcomeEvent('w', step, snap.context.current!, o, { now, random: s.random });
        apply(ev);
        k++;
        if (ev.type !== 'step.retrying') break;
        retryAts.push({ failed: ev.stepAttempt!, at: ev.retryAt, failedAt: now, random: s.random });
        // between attempts nothing is decided but by the retry's timer
        expect(nextStepEvent(def, snap.context)).toBeUndefined();
        if (s.recoverInBackoff) {
          apply({ type: 'execution.recovered', resumeStepIndex: 0, input: 0, workflowName: 'w' });
          expect(nextStepEvent(def, snap.context)).toBeUndefined();
          expect(snap.context.retry?.at).toBe(ev.retryAt);
        }
        if (s.early) {
          // a start decided without the timer (the advance after a recovery) is no start
          const stray = { ...(nextStepEvent(def, snap.context, undefined, { retryDue: true }) as object), stepAttempt: ev.stepAttempt! + 2 } as ExecutionEvent;
          expect(snap.can(stray)).toBe(false);
        }
        now = Math.max(now, snap.context.retry!.at);
        const start = nextStepEvent(def, snap.context, undefined, { retryDue: true })!;
        apply(start);
        // the timer firing twice: the second start is refused
        expect(snap.can({ ...start, attempt: snap.context.attempts + 1 } as ExecutionEvent)).toBe(false);
        starts.push(snap.context.current!.stepAttempt ?? 1);
      }
      // attempts are numbered 1.. in order and never exceed the policy
      expect(starts).toEqual(starts.map((_, i) => i + 1));
      expect(starts.length).toBeLessThanOrEqual(policy.attempts);
      // each retryAt is the failure time plus the backoff, shortened by the jitter only, capped by maxMs
      const maxMs = policy.backoff?.maxMs ?? 300_000;
      for (const r of retryAts) {
        const d = backoffDelay(policy, r.failed);
        expect(d).toBeLessThanOrEqual(maxMs);
        expect(r.at - r.failedAt).toBeLessThanOrEqual(d);
        const j = policy.backoff?.jitter === true ? 0.5 : typeof policy.backoff?.jitter === 'number' ? policy.backoff.jitter : 0;
        expect(r.at - r.failedAt).toBeGreaterThanOrEqual(Math.floor(d * (1 - j)));
        if (r.failed > 1) expect(d).toBeGreaterThanOrEqual(backoffDelay(policy, r.failed - 1));
      }
      // the terminal outcome is the script's: the first success, else the first fatal error, else the attempts run out
      const used = script.slice(0, starts.length).map((s) => s.outcome);
      while (used.length < starts.length) used.push(script[script.length - 1].outcome);
      const last = used[used.length - 1];
      const c = snap.context;
      if (last === 'ok') {
        expect(snap.value).toBe('running');
        expect(c.nextIndex).toBe(1);
        expect(used.slice(0, -1).every((o) => o === 'fail')).toBe(true);
        seen.completed++;
      } else {
        expect(snap.value).toBe('error');
        expect(c.retry ?? null).toBeNull();
        if (last === 'fatal') seen.fatal++;
        else {
          expect(starts.length).toBe(policy.attempts);
          seen.exhausted++;
        }
        expect(c.error?.message).toBe(last === 'fatal' ? 'fatal' : 'boom');
      }
      if (retryAts.length > 0) seen.retried++;
    }),
    { numRuns: 300 },
  );
  // the runs reached what they check
  expect(Object.values(seen).every((n) => n > 0)).toBe(true);
});
