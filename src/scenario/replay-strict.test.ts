/**
 * Regression replays are contracts: each way a recorded file can stop
 * describing its run is caught — a changed candidate label, a changed
 * `expect.violations`, a recorded decision the run never reaches, and a
 * missing schedule — and the trace hash covers every field of every message.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadScenario, parseScenario } from './load.js';
import { matchesExpect, runScenario } from './run.js';
import { ReplayDivergenceError } from '../sim/choice/replay.js';
import type { Scenario } from './schema.js';

const root = join(import.meta.dirname, '..', '..');
/** The found file whose run makes decisions (two tenants racing on one raw key). */
const withDecisions = () => loadScenario(join(root, 'scenarios', 'found', 'key_atomic_unscoped-tenant-isolation-ee4f2a30.json'));

async function divergence(s: Scenario, strictReplay = false): Promise<ReplayDivergenceError> {
  try {
    await runScenario(s, { strictReplay });
  } catch (e) {
    if (e instanceof ReplayDivergenceError) return e;
    throw e;
  }
  throw new Error('the replay did not diverge');
}

describe('strict replay of scenario files', () => {
  it('the unmodified file replays to its expect (the baseline the cases below change one thing of)', async () => {
    const s = withDecisions();
    expect(s.schedule.length).toBeGreaterThan(0);
    expect(matchesExpect(s, await runScenario(s, { strictReplay: true })).problems).toEqual([]);
  });

  it('a changed candidate label (same number of candidates) is divergence of kind candidates', async () => {
    const s = withDecisions();
    const [first, ...rest] = s.schedule;
    const of = [...first!.of];
    of[of.length - 1] = of[of.length - 1]!.replace(/:[a-z]+$/, ':finish');
    expect(of).not.toEqual(first!.of);
    const e = await divergence({ ...s, schedule: [{ ...first!, of }, ...rest] });
    expect(e.kind).toBe('candidates');
    expect(e.index).toBe(0);
    expect(e.toJSON()).toMatchObject({ index: 0, kind: 'candidates' });
  });

  it('a changed expect.violations is reported as an unmet expect', async () => {
    const s = withDecisions();
    expect(s.expect.violations).toEqual(['exactly-one', 'tenant-isolation']);
    const run = await runScenario(s);
    for (const violations of [[], ['tenant-isolation'], ['exactly-one', 'tenant-isolation', 'progress']] as Scenario['expect']['violations'][]) {
      const m = matchesExpect({ ...s, expect: { ...s.expect, violations } }, run);
      expect(m.ok).toBe(false);
      expect(m.problems.join(' ')).toMatch(/expected violations/);
    }
  });

  it('a recorded decision the run never reaches is divergence of kind unused-decisions', async () => {
    const s = withDecisions();
    const last = s.schedule[s.schedule.length - 1]!;
    const e = await divergence({ ...s, schedule: [...s.schedule, { ...last, t: last.t + 1 }] });
    expect(e.kind).toBe('unused-decisions');
    expect(e.index).toBe(s.schedule.length);
  });

  it('a missing schedule (decisions made, none recorded) is divergence of kind extra-decision under strictReplay', async () => {
    const s = { ...withDecisions(), schedule: [] };
    const e = await divergence(s, true);
    expect(e.kind).toBe('extra-decision');
    expect(e.index).toBe(0);
  });
});

describe('the trace hash covers every field of every message', () => {
  const base = (over: Record<string, unknown>) => parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'one lost answer', seed: 1,
    service: { variant: 'key_atomic' }, client: { keySource: 'tool_call', maxAttempts: 2 },
    faults: { loseResponseAfterCommit: 1 },
    operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails' }],
    expect: {}, ...over,
  }));

  it('two runs that differ only in a body, a key or a tenant header hash differently (they used to share a hash)', async () => {
    const a = await runScenario(base({}));
    const hashes = [a.result.traceHash];
    const variants = [
      base({ operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', steps: 'press Pay' }] }), // body
      base({ client: { keySource: 'business', maxAttempts: 2 } }), // key
      base({ operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', tenant: 'globex' }] }), // header
    ];
    for (const s of variants) {
      const r = await runScenario(s);
      // Same visible timeline: same events, same statuses, same report ids...
      expect(r.reports).toEqual(a.reports);
      expect(r.violations).toEqual(a.violations);
      hashes.push(r.result.traceHash);
    }
    // ...but every message field is in the hash.
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it('the hash is still the same for the same run', async () => {
    expect((await runScenario(base({}))).result.traceHash).toBe((await runScenario(base({}))).result.traceHash);
  });
});
