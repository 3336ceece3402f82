/**
 * Replay-point resolution on random definitions (andThen, andWhen, andAll, andRace and sub-workflows
 * nested in each other, ids unique among siblings only): every step resolves by id to the top-level
 * step that contains it unless the id is ambiguous, and by path always; unknown ids never resolve.
 * The oracle walks the generated spec, not the definition.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { andAll, andRace, andThen, andWhen, andWorkflow, createWorkflow } from '../../src/workflows/builder.js';
import { locateSteps, resolveReplayPoint } from '../../src/workflows/replay-point.js';
import type { WorkflowStep } from '../../src/workflows/types.js';

type Spec = { kind: 'then'; id: string } | { kind: 'when'; id: string; child: Spec } | { kind: 'all' | 'race' | 'sub'; id: string; children: Spec[] };

const IDS = ['a', 'b', 'c', 'd', 'e'];
const id = fc.constantFrom(...IDS);
const siblings = (spec: fc.Arbitrary<Spec>) => fc.uniqueArray(spec, { minLength: 1, maxLength: 3, selector: (s) => s.id });

const { step } = fc.letrec<{ step: Spec }>((tie) => ({
  step: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('then' as const), id }),
    fc.record({ kind: fc.constant('when' as const), id, child: tie('step') }),
    fc.record({ kind: fc.constantFrom('all' as const, 'race' as const, 'sub' as const), id, children: siblings(tie('step')) }),
  ),
}));

let subCount = 0;
function build(s: Spec): WorkflowStep {
  switch (s.kind) {
    case 'then':
      return andThen({ id: s.id, execute: () => 1 });
    case 'when':
      return andWhen({ id: s.id, condition: () => true, step: build(s.child) });
    case 'all':
      return andAll({ id: s.id, steps: s.children.map(build) });
    case 'race':
      return andRace({ id: s.id, steps: s.children.map(build) });
    case 'sub':
      return andWorkflow({ id: s.id, workflow: createWorkflow({ id: `sub-${subCount++}` }, ...s.children.map(build)) });
  }
}

/** Every path of the spec, from its top-level step down. */
function paths(s: Spec, prefix: string[] = []): string[][] {
  const here = [...prefix, s.id];
  const kids = s.kind === 'then' ? [] : s.kind === 'when' ? [s.child] : s.children;
  return [here, ...kids.flatMap((k) => paths(k, here))];
}

describe('replay points', () => {
  it('resolve every step by id to its top-level step (ambiguous only across top-level steps) and by path always', () => {
    fc.assert(
      fc.property(siblings(step), fc.constantFrom(...IDS, 'zz'), (specs, probe) => {
        const def = createWorkflow({ id: 'w' }, ...specs.map(build));
        const all = specs.flatMap((s, i) => paths(s).map((p) => ({ path: p, top: i })));

        // the definition's own listing agrees with the spec
        expect(locateSteps(def).map((l) => [l.path.join('/'), l.topIndex])).toEqual(all.map((p) => [p.path.join('/'), p.top]));

        // by path: always the step itself
        for (const p of all) {
          const r = resolveReplayPoint(def, p.path.join('/'));
          expect(r.ok).toBe(true);
          if (r.ok) {
            expect(r.point.topIndex).toBe(p.top);
            expect(r.point.topStepId).toBe(specs[p.top].id);
            expect(r.point.path).toEqual(p.path);
          }
        }

        // by id: a top-level id wins; a nested id resolves when all its places share one top-level step
        const r = resolveReplayPoint(def, probe);
        const topIndex = specs.findIndex((s) => s.id === probe);
        const tops = new Set(all.filter((p) => p.path[p.path.length - 1] === probe).map((p) => p.top));
        if (topIndex >= 0) expect(r).toMatchObject({ ok: true, point: { topIndex, path: [probe] } });
        else if (tops.size === 0) expect(r).toEqual({ ok: false, reason: 'unknown' });
        else if (tops.size === 1) expect(r).toMatchObject({ ok: true, point: { stepId: probe, topIndex: [...tops][0] } });
        else {
          expect(r.ok).toBe(false);
          if (!r.ok && r.reason === 'ambiguous') expect(new Set(r.candidates.map((c) => c.topIndex))).toEqual(tops);
          else expect.fail('expected an ambiguous id');
        }
      }),
      { numRuns: 300 },
    );
  });
});
