import { describe, expect, it } from 'vitest';
import { checkedSimplifications, minimiseCounterexample, notShownMinimal, pairsOf, simplifications, type MinimisableRun } from './minimise.js';
import { parseScenario } from '../scenario/load.js';
import type { Scenario } from '../scenario/schema.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import type { ChoiceRecord } from '../sim/choice/source.js';

/**
 * The minimiser's parts on their own: the one-step simplifications it tries
 * (each dimension, in order, and the scenario each gives), the pairs, and
 * the pass itself on a model small enough to know every answer — a
 * "service" whose failure needs named parts of the scenario and a
 * preemption at a named decision, so what must stay, what must go and the
 * fewest preemptions are all known in advance.
 */

const base = {
  format: 'retrysim.scenario/2', name: 'big', seed: 1,
  service: { module: 'svc' },
  client: { keySource: 'tool_call' },
  expect: {},
};
const scenario = (x: Record<string, unknown> = {}): Scenario => parseScenario(JSON.stringify({ ...base, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }], ...x }));

/** Every dimension at once: three operations (one borrowing another's key, one with two workers), every fault, two skewed instances. */
const everything = (client: Record<string, unknown> = {}) => scenario({
  service: { module: 'svc', instances: 2, clockOffsetMs: [0, 40] },
  client: { keySource: 'tool_call', maxAttempts: 3, model: { resubmits: 1 }, keyReuseProbe: true, ...client },
  network: { latencyMeanMs: 1, latencySdMs: 0, loseResponses: 2, throttle: { count: 2, retryAfterS: 1 }, answer: { status: 503, count: 1 } },
  faults: { loseResponseAfterCommit: 2, crashMidRequest: 1, slowMs: 100, pause: { atStep: 'a', ms: 300 }, kill: { instance: 0, atMs: 5 } },
  operations: [
    { id: 'op1', runId: 'r1', module: 'm', title: 't' },
    { id: 'op2', runId: 'r2', module: 'm', title: 't', keyFrom: 'op1', workers: 2 },
    { id: 'op3', runId: 'r3', module: 'm', title: 't', keyFrom: 'op1' },
  ],
});

describe('the one-step simplifications', () => {
  it('every dimension, in order', () => {
    expect(simplifications(everything()).map((c) => c.what)).toEqual([
      'operation op1', 'operation op2', 'operation op3',
      'key reuse by op2', 'key reuse by op3',
      'worker of op2 (2 → 1)',
      'loseResponseAfterCommit 2 → 1', 'crashMidRequest 1 → 0', 'slowMs', 'pause', 'kill',
      'pause merged into slowMs', 'slowMs merged into pause',
      'network.throttle 2 → 1', 'network.answer', 'network.loseResponses 2 → 1',
      'model resubmits 1 → 0',
      'instances 2 → 1', 'clock skew', 'keyReuseProbe', 'maxAttempts 3 → 2',
    ]);
  });

  it('each changes exactly what it says', () => {
    const s = everything();
    const by = new Map(simplifications(s).map((c) => [c.what, c.scenario]));
    const get = (what: string) => by.get(what)!;
    // Dropping the operation whose key others borrow gives them their own keys back.
    expect(get('operation op1').operations).toEqual([
      { ...s.operations[1], keyFrom: undefined },
      { ...s.operations[2], keyFrom: undefined },
    ].map(({ keyFrom: _k, ...o }) => o));
    expect(get('operation op2').operations.map((o) => o.id)).toEqual(['op1', 'op3']);
    expect(get('operation op2').operations[1]!.keyFrom).toBe('op1');
    expect(get('key reuse by op3').operations.map((o) => o.keyFrom)).toEqual([undefined, 'op1', undefined]);
    expect('keyFrom' in get('key reuse by op3').operations[2]!).toBe(false);
    expect(get('worker of op2 (2 → 1)').operations.map((o) => o.workers)).toEqual([1, 1, 1]);
    expect(get('loseResponseAfterCommit 2 → 1').faults).toEqual({ ...s.faults, loseResponseAfterCommit: 1 });
    expect(get('crashMidRequest 1 → 0').faults).toEqual({ ...s.faults, crashMidRequest: 0 });
    expect(get('slowMs').faults).toEqual({ ...s.faults, slowMs: 0 });
    const { pause, kill, ...rest } = s.faults;
    expect(get('pause').faults).toEqual({ ...rest, kill });
    expect(get('kill').faults).toEqual({ ...rest, pause });
    expect(get('pause merged into slowMs').faults).toEqual({ ...rest, kill, slowMs: 400 });
    expect(get('slowMs merged into pause').faults).toEqual({ ...s.faults, slowMs: 0, pause: { ...pause!, ms: 400 } });
    expect(get('network.throttle 2 → 1').network).toEqual({ ...s.network, throttle: { count: 1, retryAfterS: 1 } });
    const { answer: _a, ...net } = s.network;
    expect(get('network.answer').network).toEqual(net);
    expect(get('network.loseResponses 2 → 1').network).toEqual({ ...s.network, loseResponses: 1 });
    expect(get('model resubmits 1 → 0').client).toEqual({ ...s.client, model: { resubmits: 0, reword: false } });
    expect(get('instances 2 → 1').service).toEqual({ ...s.service, instances: 1, clockOffsetMs: [0] });
    expect(get('clock skew').service).toEqual({ ...s.service, clockOffsetMs: [] });
    expect(get('keyReuseProbe').client.keyReuseProbe).toBeUndefined();
    expect(get('maxAttempts 3 → 2').client).toEqual({ ...s.client, maxAttempts: 2 });
    // The original is never edited in place.
    expect(s).toEqual(everything());
  });

  it('a user\'s client has no harness knobs to lower (attempts, model resubmits, the key-reuse probe)', () => {
    expect(checkedSimplifications(everything()).valid.map((c) => c.what)).toContain('maxAttempts 3 → 2');
    expect(checkedSimplifications(everything(), true).valid.map((c) => c.what)).not.toContain('maxAttempts 3 → 2');
    const whats = simplifications(everything(), true).map((c) => c.what);
    for (const w of ['model resubmits 1 → 0', 'keyReuseProbe', 'maxAttempts 3 → 2']) expect(whats).not.toContain(w);
    expect(whats).toContain('instances 2 → 1');
  });

  it('the last of a counted fault is removed outright; nothing is offered for what is already minimal', () => {
    const one = scenario({ network: { throttle: { count: 1, retryAfterS: 1 }, answer: { status: 503, count: 2 } }, faults: { slowMs: 100, pause: { atStep: 'a', ms: 5 } } });
    const whats = simplifications(one).map((c) => c.what);
    expect(whats).toEqual(['slowMs', 'pause', 'pause merged into slowMs', 'slowMs merged into pause', 'network.throttle', 'network.answer 2 → 1', 'maxAttempts 4 → 3']);
    expect(simplifications(one).find((c) => c.what === 'network.throttle')!.scenario.network.throttle).toBeUndefined();
    // One operation, one worker, no faults, one instance, one attempt: nothing left to try.
    expect(simplifications(scenario({ client: { keySource: 'tool_call', maxAttempts: 1 } }))).toEqual([]);
    // Zero offsets are no skew.
    expect(simplifications(scenario({ service: { module: 'svc', instances: 2, clockOffsetMs: [0, 0] }, client: { keySource: 'tool_call', maxAttempts: 1 } })).map((c) => c.what)).toEqual(['instances 2 → 1']);
  });

  it('no "instances → 1" while a kill names a later instance (the file would not load)', () => {
    const s = scenario({ service: { module: 'svc', instances: 2 }, faults: { kill: { instance: 1, atMs: 5 } }, client: { keySource: 'tool_call', maxAttempts: 1 } });
    expect(simplifications(s).map((c) => c.what)).toEqual(['kill']);
  });

  it('a candidate the loader refuses is no simplification (dropped); one that cannot even be built is listed as errored, with the first line of why', () => {
    // key_atomic's lease (5 s) must outlast timeout (2 s) + processing: 4 s + 2 s of pause merged into slowMs does not.
    const s = parseScenario(JSON.stringify({ ...base, service: { variant: 'key_atomic' }, faults: { slowMs: 2000, pause: { atStep: 'process', ms: 2000 } }, client: { keySource: 'tool_call', maxAttempts: 1 }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }] }));
    const c = checkedSimplifications(s);
    expect(c.valid.map((x) => x.what)).toEqual(['slowMs', 'pause', 'slowMs merged into pause']);
    expect(c.errored).toEqual([]);
    // A value JSON cannot write makes every candidate unloadable — not a ScenarioError, so each is named.
    const poisoned = (thrown: unknown) => ({ ...scenario({ faults: { slowMs: 5 }, client: { keySource: 'tool_call', maxAttempts: 1 } }), description: { toJSON: () => { throw thrown; } } as unknown as string });
    expect(checkedSimplifications(poisoned(new Error('no JSON here\nsecond line')))).toEqual({ valid: [], errored: ['slowMs (the candidate could not be loaded: no JSON here)'] });
    expect(checkedSimplifications(poisoned('a string')).errored).toEqual(['slowMs (the candidate could not be loaded: a string)']);
  });

  it('pairs: each two steps in a row once, in a fixed order, named "a + b"', () => {
    const s = scenario({ faults: { crashMidRequest: 1, slowMs: 5 }, client: { keySource: 'tool_call', maxAttempts: 1 } });
    const pairs = pairsOf(s);
    expect(pairs.map((p) => p.what)).toEqual(['crashMidRequest 1 → 0 + slowMs']);
    expect(pairs[0]!.scenario.faults).toMatchObject({ crashMidRequest: 0, slowMs: 0 });
    const user = scenario({ faults: { crashMidRequest: 1 }, client: { keySource: 'tool_call', maxAttempts: 2 } });
    expect(pairsOf(user).map((p) => p.what)).toEqual(['crashMidRequest 1 → 0 + maxAttempts 2 → 1']);
    expect(pairsOf(user, true)).toEqual([]);
  });

  it("pairs, given the service's steps: each step with a kill or a pause at a step moved to an earlier reach of its own, or to another step's first", () => {
    const s = scenario({
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }],
      faults: { kill: { instance: 0, atStep: 'parse', nth: 2, restartAfterMs: 0 }, pause: { atStep: 'book', ms: 100 } },
      client: { keySource: 'tool_call', maxAttempts: 1 },
    });
    const moved = pairsOf(s, false, ['parse', 'claim', 'book']).map((p) => p.what).filter((w) => w.startsWith('worker of op1') && / moved to /.test(w));
    expect(moved).toEqual([
      'worker of op1 (2 → 1) + kill moved to the 1st reach of parse', 'worker of op1 (2 → 1) + kill moved to the 1st reach of claim', 'worker of op1 (2 → 1) + kill moved to the 1st reach of book',
      'worker of op1 (2 → 1) + pause moved to the 1st reach of parse', 'worker of op1 (2 → 1) + pause moved to the 1st reach of claim',
    ]);
    const p = pairsOf(s, false, ['parse', 'claim', 'book']).find((x) => x.what === 'worker of op1 (2 → 1) + kill moved to the 1st reach of book')!;
    expect(p.scenario.operations[0]!.workers).toBe(1);
    expect(p.scenario.faults.kill).toEqual({ instance: 0, atStep: 'book', restartAfterMs: 0 });
    // Without the steps, a kill only goes to an earlier reach of its own step.
    expect(pairsOf(s).filter((x) => / moved to /.test(x.what) && x.what.startsWith('worker')).map((x) => x.what)).toEqual(['worker of op1 (2 → 1) + kill moved to the 1st reach of parse']);
  });
});

describe('notShownMinimal', () => {
  it('nothing when everything was shown; otherwise each open point in words', () => {
    expect(notShownMinimal({ preemptions: 2, preemptionsMinimal: true, undecided: [], errored: [] })).toEqual([]);
    expect(notShownMinimal({ preemptions: 2, preemptionsMinimal: false, undecided: ['slowMs'], errored: ['kill (boom)'] })).toEqual([
      'preemptions 2: not every schedule with fewer preemptions was run without error (search cut short or a run threw)',
      'not shown necessary (search ran out of runs): slowMs',
      'not shown necessary (could not be tried): kill (boom)',
    ]);
  });
});

/** A run of the model: the scenario it ran and its decisions. */
interface ModelRun extends MinimisableRun {
  s: Scenario;
  chosen: number[];
}

/**
 * A model with `decisions` two-way decisions, each one where the running
 * task could continue (so any 1 is a preemption) except those listed in
 * `free` (the running task cannot continue: a free choice, no preemption).
 * `hit` decides from the scenario and the choices whether the run shows the
 * failure. Every call is counted.
 */
function model(decisions: number, hit: (s: Scenario, chosen: number[]) => boolean, opts: { throws?: (s: Scenario, chosen: number[]) => string | undefined; free?: readonly number[] } = {}) {
  const calls: ModelRun[] = [];
  const run = async (s: Scenario, src: ChoiceSource): Promise<ModelRun> => {
    const chosen: number[] = [];
    const choices: ChoiceRecord[] = [];
    for (let i = 0; i < decisions; i++) {
      const continuing = !(opts.free ?? []).includes(i);
      const c = src.choose(['a', 'b'], i, i, continuing);
      chosen.push(c);
      choices.push({ t: i, chosen: c, of: ['a', 'b'], preempted: continuing && c !== 0 });
    }
    const r: ModelRun = { s, chosen, result: { timeMs: 0, lastEventMs: 0, events: 0, steps: 0, choices, traceHash: '' } };
    calls.push(r);
    const why = opts.throws?.(s, chosen);
    if (why !== undefined) throw new Error(why);
    return r;
  };
  return { run, calls, isHit: (r: ModelRun) => hit(r.s, r.chosen) };
}

/** The failure needs a crash, operation op2, and a preemption at decision 2. */
const needs = (s: Scenario, c: number[]) => s.faults.crashMidRequest > 0 && s.operations.some((o) => o.id === 'op2') && c[2] === 1;

const three = (faults: Record<string, unknown> = { crashMidRequest: 2, slowMs: 30 }) => scenario({
  client: { keySource: 'tool_call', maxAttempts: 1 },
  faults,
  operations: [
    { id: 'op1', runId: 'r1', module: 'm', title: 't' },
    { id: 'op2', runId: 'r2', module: 'm', title: 't' },
  ],
});

describe('minimiseCounterexample on a model with known answers', () => {
  it('a case that does not fail is refused', async () => {
    const m = model(3, needs);
    await expect(minimiseCounterexample(three(), [0, 0, 0], { isHit: m.isHit, run: m.run })).rejects.toThrow('minimiseCounterexample: the given case does not fail');
  });

  it('removes everything the failure does not need, one step at a time, and keeps the one preemption it does', async () => {
    // Once something was removed, the original case is never run again (its own search is for a case already minimal).
    const orig = three();
    let runsOfOrig = 0;
    const m = model(3, needs, { throws: (s) => (s === orig && ++runsOfOrig > 1 ? 'the original ran again' : undefined) });
    const r = await minimiseCounterexample(orig, [1, 1, 1, 0], { isHit: m.isHit, run: m.run });
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs']);
    expect(r.scenario.operations.map((o) => o.id)).toEqual(['op2']);
    expect(r.scenario.faults).toMatchObject({ crashMidRequest: 1, slowMs: 0 });
    expect(r.choices).toEqual([0, 0, 1]);
    expect(r).toMatchObject({ preemptions: 1, decisions: 1, preemptionsMinimal: true, undecided: [], errored: [] });
    expect(notShownMinimal(r)).toEqual([]);
    // The runs it reports are the runs it made.
    expect(r.runs).toBe(m.calls.length);
    // Its schedule came from a complete search: the result's scenario is not searched again at the end.
    expect(m.calls.at(-1)!.s).not.toBe(r.scenario);
  });

  it('op2 left alone is renumbered op1 when the renamed scenario still fails; its own search, its own schedule', async () => {
    // The same failure, whatever the operation is called (the test above needs op2 by name: there the ids stay).
    const second = (s: Scenario, c: number[]) => s.faults.crashMidRequest > 0 && s.operations.some((o) => o.runId === 'r2') && c[2] === 1;
    const m = model(3, second);
    const r = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m.isHit, run: m.run });
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs', 'renumbered op2 → op1']);
    expect(r.scenario.operations.map((o) => [o.id, o.runId])).toEqual([['op1', 'r2']]);
    expect(r).toMatchObject({ choices: [0, 0, 1], preemptions: 1, preemptionsMinimal: true, undecided: [], errored: [] });
    // The renamed scenario was run (a search of its own), and judged afresh: its crash is still necessary.
    expect(m.calls.some((c) => c.s === r.scenario)).toBe(true);
    expect(r.runs).toBe(m.calls.length);
  });

  it('a case already minimal: its own schedules are searched below the one in hand (trailing zeros dropped)', async () => {
    const m = model(3, needs);
    const minimal = scenario({ client: { keySource: 'tool_call', maxAttempts: 1 }, faults: { crashMidRequest: 1 }, operations: [{ id: 'op2', runId: 'r2', module: 'm', title: 't' }] });
    const r = await minimiseCounterexample(minimal, [1, 0, 1, 0, 0], { isHit: m.isHit, run: m.run });
    expect(r).toMatchObject({ removed: [], choices: [0, 0, 1], preemptions: 1, decisions: 1, preemptionsMinimal: true, undecided: [], errored: [] });
    expect(r.runs).toBe(m.calls.length);
    // Already the fewest: the schedule in hand is kept as given, less its trailing zeros.
    const m2 = model(3, needs);
    const r2 = await minimiseCounterexample(minimal, [0, 0, 1, 0], { isHit: m2.isHit, run: m2.run });
    expect(r2).toMatchObject({ removed: [], choices: [0, 0, 1], preemptions: 1, decisions: 1, preemptionsMinimal: true });
    // The case itself runs twice: as given, and once in its own search (bound 0 only: the case in hand is optimal above it).
    expect(m2.calls.filter((c) => c.s === minimal)).toHaveLength(2);
    expect(r2.runs).toBe(m2.calls.length);
  });

  it('a simplification taken from a search cut short, with a preemption, is not claimed minimal in preemptions', async () => {
    // Decision 0 is a free choice (no preemption), decision 2 a preemption; the failure needs both (and op2, a crash).
    const calls: ModelRun[] = [];
    const run = async (sc: Scenario, src: ChoiceSource): Promise<ModelRun> => {
      const chosen = [0, 1, 2].map((i) => src.choose(['a', 'b'], i, i, i !== 0));
      const r: ModelRun = { s: sc, chosen, result: { timeMs: 0, lastEventMs: 0, events: 0, steps: 0, choices: chosen.map((c, i) => ({ t: i, chosen: c, of: ['a', 'b'], preempted: i !== 0 && c !== 0 })), traceHash: '' } };
      calls.push(r);
      return r;
    };
    const isHit = (r: ModelRun) => needs(r.s, r.chosen) && r.chosen[0] === 1;
    // 7 runs: bound 0's two schedules, then bound 1 up to [1, 0, 1] — the hit — and no further.
    const r = await minimiseCounterexample(three({ crashMidRequest: 1 }), [1, 1, 1], { isHit, run, searchRunsMax: 7 });
    expect(r).toMatchObject({ removed: ['operation op1'], choices: [1, 0, 1], preemptions: 1, decisions: 2, preemptionsMinimal: false });
    expect(notShownMinimal(r)[0]).toMatch(/^preemptions 1: not every schedule/);
  });

  it('a failure that needs no preemption at all is minimal at 0, whatever the search budget', async () => {
    const m = model(3, (s) => s.faults.crashMidRequest > 0);
    const r = await minimiseCounterexample(scenario({ client: { keySource: 'tool_call', maxAttempts: 1 }, faults: { crashMidRequest: 1 } }), [1, 1], { isHit: m.isHit, run: m.run, searchRunsMax: 1 });
    expect(r).toMatchObject({ choices: [], preemptions: 0, decisions: 0, preemptionsMinimal: true });
  });

  it('two parts that hold each other up go together, as a pair, once no single step is left', async () => {
    // Fails with a crash and op1 when the kill and op3 are both there or both gone: neither alone can go.
    const has = (s: Scenario, id: string) => s.operations.some((o) => o.id === id);
    const m = model(1, (s) => s.faults.crashMidRequest > 0 && has(s, 'op1') && (s.faults.kill === undefined) === !has(s, 'op3'));
    const s = scenario({
      client: { keySource: 'tool_call', maxAttempts: 1 },
      faults: { crashMidRequest: 1, kill: { atMs: 5 } },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }, { id: 'op3', runId: 'r3', module: 'm', title: 't' }],
    });
    const r = await minimiseCounterexample(s, [], { isHit: m.isHit, run: m.run });
    expect(r.removed).toEqual(['operation op3 + kill']);
    expect(r.scenario.operations.map((o) => o.id)).toEqual(['op1']);
    expect(r.scenario.faults.kill).toBeUndefined();
    expect(r.undecided).toEqual([]);
  });

  it('a spent budget: no search runs; each single step gets one run of the schedule in hand, and one it does not fail on is undecided (pairs are not tried)', async () => {
    const m = model(3, needs);
    const r = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m.isHit, run: m.run, runsMax: 1, finalRunsMax: 0 });
    // The schedule in hand still fails without op1, with one crash fewer and without slowMs: those go.
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs']);
    // Without the crash it cannot fail, but no search ran to show it: undecided, never "necessary".
    expect(r.undecided).toEqual(['crashMidRequest 1 → 0']);
    // Its schedule came from the case, not from a search: not claimed minimal in preemptions.
    expect(r).toMatchObject({ choices: [1, 1, 1], preemptions: 3, decisions: 3, preemptionsMinimal: false });
    // The case; op1, crash 2 → 1; op2? no (one operation left), crash 2 → 1 gone, then crash 1 → 0 and
    // slowMs; then crash 1 → 0 again; and the own-schedule search's one run.
    expect(r.runs).toBe(m.calls.length);
    expect(r.runs).toBe(1 + 1 + 1 + 2 + 1 + 1);
    expect(notShownMinimal(r)).toEqual([expect.stringMatching(/^preemptions 3: not every schedule/), 'not shown necessary (search ran out of runs): crashMidRequest 1 → 0']);
  });

  it('the scenario the rounds end at gets a reserve of its own: what the spent budget left undecided there is searched, and shown necessary', async () => {
    const m = model(3, needs);
    const r = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m.isHit, run: m.run, runsMax: 1 });
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs']);
    // Without the crash it cannot fail: the reserve's complete search shows it (finalRunsMax: 0 leaves it undecided, above).
    expect(r.undecided).toEqual([]);
    expect(notShownMinimal(r).filter((x) => x.startsWith('not shown necessary'))).toEqual([]);
    expect(r.runs).toBe(m.calls.length);
    // A reserve of one run cannot complete that search: undecided again, never "necessary".
    const short = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m.isHit, run: m.run, runsMax: 1, finalRunsMax: 1 });
    expect(short.undecided).toEqual(['crashMidRequest 1 → 0']);
  });

  it('the reserve finds what the schedule in hand could not carry over: the last scenario is simplified further, as with a full budget', async () => {
    // The failing schedule shifts once anything goes (c[0] flips), so no transfer run hits: only a search does.
    const original = three();
    const shifted = (sc: Scenario, c: number[]) => needs(sc, c) && (sc === original ? c[0] === 1 : c[0] === 0);
    const m = model(3, shifted);
    const r = await minimiseCounterexample(original, [1, 1, 1], { isHit: m.isHit, run: m.run, runsMax: 1 });
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs']);
    expect(r).toMatchObject({ choices: [0, 0, 1], preemptions: 1, undecided: [], errored: [] });
    expect(r.runs).toBe(m.calls.length);
    // A budget that cut the first search short (not only none at all) leaves that step to the reserve too.
    const cut = model(3, shifted);
    const c = await minimiseCounterexample(original, [1, 1, 1], { isHit: cut.isHit, run: cut.run, runsMax: 3 });
    expect(c.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs']);
    expect(c.undecided).toEqual([]);
  });

  it('the reserve is a limit: its runs are counted down across the steps it searches, and none run past it', async () => {
    const original = three();
    const shifted = (sc: Scenario, c: number[]) => needs(sc, c) && (sc === original ? c[0] === 1 : c[0] === 0);
    const none = await minimiseCounterexample(original, [1, 1, 1], { ...model(3, shifted), runsMax: 1, finalRunsMax: 0 });
    const m = model(3, shifted);
    const two = await minimiseCounterexample(original, [1, 1, 1], { isHit: m.isHit, run: m.run, runsMax: 1, finalRunsMax: 2 });
    expect(two.runs - none.runs).toBeGreaterThan(0);
    expect(two.runs - none.runs).toBeLessThanOrEqual(2);
    expect(two.undecided.length).toBeGreaterThan(0);
  });

  it('the schedule in hand runs on at most transferRunsMax candidates in a pass; its hits keep their own count of decisions', async () => {
    const m = model(3, needs);
    const r = await minimiseCounterexample(three(), [1, 0, 1], { isHit: m.isHit, run: m.run, runsMax: 1, transferRunsMax: 2, finalRunsMax: 0 });
    // Two runs of the schedule in hand: op1 goes, then one crash; then the limit, and the rest is undecided.
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1']);
    expect(r.undecided).toEqual(['crashMidRequest 1 → 0', 'slowMs']);
    expect(r).toMatchObject({ choices: [1, 0, 1], preemptions: 2, decisions: 2 });
    expect(r.runs).toBe(1 + 2 + 1);
    expect(r.runs).toBe(m.calls.length);
  });

  it('a schedule in hand that fails on a candidate with more preemptions than the case has is not taken', async () => {
    // In the smaller scenario every decision counts as a preemption (4 of them), in the case only its non-zero ones (3).
    const original = three();
    const calls: ModelRun[] = [];
    const run = async (sc: Scenario, src: ChoiceSource): Promise<ModelRun> => {
      const chosen = [0, 1, 2, 3].map((i) => src.choose(['a', 'b'], i, i, true));
      const r: ModelRun = { s: sc, chosen, result: { timeMs: 0, lastEventMs: 0, events: 0, steps: 0, choices: chosen.map((c, i) => ({ t: i, chosen: c, of: ['a', 'b'], preempted: sc === original ? c !== 0 : true })), traceHash: '' } };
      calls.push(r);
      return r;
    };
    const r = await minimiseCounterexample(original, [1, 1, 1, 0], { isHit: (x: ModelRun) => needs(x.s, x.chosen), run, runsMax: 1, finalRunsMax: 0 });
    expect(r.removed).toEqual([]);
    expect(r.undecided).toEqual(['operation op1', 'operation op2', 'crashMidRequest 2 → 1', 'slowMs']);
    expect(r.preemptions).toBe(3);
  });

  it('a candidate the schedule in hand does not fail on stays undecided when the budget is spent', async () => {
    // The failing schedule shifts with the scenario (as a real one does when a task goes): only the case itself fails on [1, 1, 1].
    const original = three();
    const m = model(3, (s, c) => needs(s, c) && (s === original ? c[0] === 1 : c[0] === 0));
    const r = await minimiseCounterexample(original, [1, 1, 1], { isHit: m.isHit, run: m.run, runsMax: 1, finalRunsMax: 0 });
    expect(r.removed).toEqual([]);
    expect(r.undecided).toEqual(['operation op1', 'operation op2', 'crashMidRequest 2 → 1', 'slowMs']);
    // The case, one run of its schedule on each single step, the own search's one run.
    expect(r.runs).toBe(1 + 4 + 1);
    expect(r.runs).toBe(m.calls.length);
  });

  it('a search cut short by its per-search budget leaves that step undecided, not "does not fail"', async () => {
    // The failure needs op2 and a crash but only on a schedule no 2-run search reaches, and (as a
    // real schedule would) a schedule that shifts once anything goes: the case's own does not carry over.
    const original = three();
    const m = model(4, (s, c) => needs(s, c) && c[0] === 1 && c[1] === 1 && c[3] === (s === original ? 0 : 1));
    const r = await minimiseCounterexample(original, [1, 1, 1], { isHit: m.isHit, run: m.run, searchRunsMax: 2 });
    expect(r.removed).toEqual([]);
    // Dropping op2 can never fail, but two runs do not show it: undecided too.
    expect(r.undecided).toEqual(['operation op1', 'operation op2', 'crashMidRequest 2 → 1', 'slowMs']);
    expect(r.errored).toEqual([]);
    expect(r.runs).toBe(m.calls.length);
    // The budget did not cut these short, a search's own cap did, and it would again: the reserve runs none of them.
    const m0 = model(4, (s, c) => needs(s, c) && c[0] === 1 && c[1] === 1 && c[3] === (s === original ? 0 : 1));
    expect((await minimiseCounterexample(original, [1, 1, 1], { isHit: m0.isHit, run: m0.run, searchRunsMax: 2, finalRunsMax: 0 })).runs).toBe(r.runs);
  });

  it('a candidate whose runs throw is errored with the first message, never taken as passing; the rest are still judged', async () => {
    const m = model(3, needs, { throws: (s) => (s.faults.slowMs === 0 && s.operations.length === 2 ? 'the database is locked' : undefined) });
    const r = await minimiseCounterexample(three(), [1, 1, 1], { isHit: m.isHit, run: m.run });
    // op1 goes, then the crash count; removing slowMs would throw.
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs']);
    const m2 = model(3, needs, { throws: (s) => (s.faults.slowMs === 0 ? 'the database is locked' : undefined) });
    const r2 = await minimiseCounterexample(three(), [1, 1, 1], { isHit: m2.isHit, run: m2.run });
    expect(r2.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1']);
    expect(r2.errored).toEqual(['slowMs (the database is locked)']);
    expect(r2.undecided).toEqual([]);
    expect(notShownMinimal(r2)).toEqual(['not shown necessary (could not be tried): slowMs (the database is locked)']);
  });

  it('the search of the case itself throwing: said, and its preemptions not claimed minimal', async () => {
    const minimal = scenario({ client: { keySource: 'tool_call', maxAttempts: 1 }, faults: { crashMidRequest: 1 }, operations: [{ id: 'op2', runId: 'r2', module: 'm', title: 't' }] });
    let n = 0;
    // Each throw says which run it was: a search remembers the first.
    const m = model(3, needs, { throws: () => (n++ > 0 ? `boom ${n}\nat line 2` : undefined) });
    const r = await minimiseCounterexample(minimal, [1, 1, 1], { isHit: m.isHit, run: m.run });
    // Run i (from 1) throws `boom i`: the candidate's search met run 2 first, the own search its first run.
    const own = m.calls.findIndex((c, i) => i > 0 && c.s === minimal) + 1;
    expect(r.errored).toEqual(['crashMidRequest 1 → 0 (boom 2)', `the schedule search of the scenario itself (boom ${own})`]);
    expect(r.preemptionsMinimal).toBe(false);
    expect(r.preemptions).toBe(3);
  });

  it('a candidate that cannot be built is listed as errored in the result, too', async () => {
    const m = model(3, needs);
    const s = { ...three({ crashMidRequest: 1 }), description: { toJSON: () => { throw new Error('cannot write'); } } as unknown as string };
    const r = await minimiseCounterexample(s, [0, 0, 1], { isHit: m.isHit, run: m.run });
    expect(r.errored).toEqual(['operation op1 (the candidate could not be loaded: cannot write)', 'operation op2 (the candidate could not be loaded: cannot write)', 'crashMidRequest 1 → 0 (the candidate could not be loaded: cannot write)']);
    expect(r.removed).toEqual([]);
  });

  it('0 preemptions is minimal even when the search that found it was cut short', async () => {
    // Free choices (the running task cannot continue) cost no preemption; the failure needs decision 2 to pick 1.
    const free = (withSlow: boolean) => {
      const calls: MinimisableRun[] = [];
      const run = async (sc: Scenario, src: ChoiceSource): Promise<ModelRun> => {
        const chosen = [0, 1, 2].map((i) => src.choose(['a', 'b'], i, i, false));
        const r: ModelRun = { s: sc, chosen, result: { timeMs: 0, lastEventMs: 0, events: 0, steps: 0, choices: chosen.map((c, i) => ({ t: i, chosen: c, of: ['a', 'b'], preempted: false })), traceHash: '' } };
        calls.push(r);
        return r;
      };
      const sc = scenario({ client: { keySource: 'tool_call', maxAttempts: 1 }, faults: { slowMs: withSlow ? 5 : 0 } });
      return { run, sc };
    };
    const isHit = (r: ModelRun) => r.chosen[2] === 1;
    // The case itself (nothing to remove): its own search stops after 3 runs, with a hit of 0 preemptions in hand.
    const a = free(false);
    const ra = await minimiseCounterexample(a.sc, [1, 1, 1], { isHit, run: a.run, searchRunsMax: 3 });
    expect(ra).toMatchObject({ removed: [], choices: [0, 0, 1], preemptions: 0, decisions: 1, preemptionsMinimal: true });
    // A candidate (slowMs goes) whose search is cut short the same way.
    const b = free(true);
    const rb = await minimiseCounterexample(b.sc, [1, 1, 1], { isHit, run: b.run, searchRunsMax: 3 });
    expect(rb).toMatchObject({ removed: ['slowMs'], choices: [0, 0, 1], preemptions: 0, preemptionsMinimal: true });
  });

  it('by default, a search gets 1,000 runs and the whole pass 6,000', async () => {
    // 20 decisions: 1 + 20 + 190 + 1140 schedules within 3 preemptions, more than one search may run.
    // The failure needs a preemption at each of decisions 0, 5, 10, 15: only the case in hand shows it.
    // And it needs everything the case has, so the schedule in hand fails on no simplification either.
    const original = three({ crashMidRequest: 1, slowMs: 5, loseResponseAfterCommit: 3 });
    const deep = (s: Scenario, c: number[]) => s === original && [0, 5, 10, 15].every((i) => c[i] === 1);
    const m = model(20, deep);
    const given = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
    const r = await minimiseCounterexample(original, given, { isHit: m.isHit, run: m.run });
    // The case (1 run), five single steps cut short at 1000 runs each and then given the schedule in
    // hand (1 run each; undecided), the first pair the 994 runs left, and the case's own search the 1
    // run every search gets.
    expect(r.undecided).toEqual(['operation op1', 'operation op2', 'loseResponseAfterCommit 3 → 2', 'crashMidRequest 1 → 0', 'slowMs']);
    expect(r.runs).toBe(1 + 5 * (1000 + 1) + 994 + 1);
    expect(m.calls).toHaveLength(r.runs);
    expect(r.removed).toEqual([]);
  });

  it('a user\'s client: the harness\'s knobs are never tried', async () => {
    const m = model(3, needs);
    const s = scenario({ client: { keySource: 'tool_call', maxAttempts: 3 }, faults: { crashMidRequest: 1 }, operations: [{ id: 'op2', runId: 'r2', module: 'm', title: 't' }] });
    expect((await minimiseCounterexample(s, [0, 0, 1], { isHit: m.isHit, run: m.run })).removed).toEqual(['maxAttempts 3 → 2', 'maxAttempts 2 → 1']);
    const m2 = model(3, needs);
    expect((await minimiseCounterexample(s, [0, 0, 1], { isHit: m2.isHit, run: m2.run, userClient: true })).removed).toEqual([]);
  });
});

/**
 * The reserve (`finalRunsMax`) one decision at a time (issue 21: each of
 * its guards and counts has a test that goes red when it is changed). The
 * scenario is one operation (op2) with a crash and a slow step, so its
 * single steps are "crashMidRequest 1 → 0" (never removable here: every
 * failure needs the crash) and "slowMs".
 */
describe('the reserve of the scenario the rounds end at', () => {
  const crashAndSlow = () => scenario({
    client: { keySource: 'tool_call', maxAttempts: 1 },
    faults: { crashMidRequest: 1, slowMs: 30 },
    operations: [{ id: 'op2', runId: 'r2', module: 'm', title: 't' }],
  });

  it('goes to the scenario the rounds end at, not to one they pass through: a reserve of exactly one complete search decides the last step', async () => {
    // As in "the scenario the rounds end at gets a reserve" above: the schedule in hand takes op1, one
    // crash and slowMs; "crashMidRequest 1 → 0" is left undecided twice — in the round that
    // takes slowMs and in the last. Only the last is searched: its complete search (bounds 0–3 over
    // three decisions: 1 + 4 + 7 + 8 runs) is the whole reserve.
    const m = model(3, needs);
    const r = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m.isHit, run: m.run, runsMax: 1, finalRunsMax: 20 });
    expect(r.removed).toEqual(['operation op1', 'crashMidRequest 2 → 1', 'slowMs']);
    expect(r.undecided).toEqual([]);
    // The case, five runs of the schedule in hand (op1; crash 2 → 1; crash 1 → 0, slowMs; crash 1 → 0),
    // the reserve's search, and the case's own search (its one run).
    expect(r.runs).toBe(1 + 5 + 20 + 1);
    expect(r.runs).toBe(m.calls.length);
    // One run less and that search cannot finish: the step stays undecided.
    const less = model(3, needs);
    expect((await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: less.isHit, run: less.run, runsMax: 1, finalRunsMax: 19 })).undecided).toEqual(['crashMidRequest 1 → 0']);
  });

  it('searches each open step on its own scenario, and counts down only the runs it made: a reserve exactly enough for every search decides every step', async () => {
    // The case fails on its own schedule only; without slowMs the failure needs decisions 1 and 2 (two
    // preemptions) and decision 0 left alone, so the schedule in hand carries over to nothing.
    const original = crashAndSlow();
    const m = model(3, (s, c) => needs(s, c) && (s === original ? c[0] === 1 : c[0] === 0 && c[1] === 1));
    // The reserve: "crashMidRequest 1 → 0" searched completely (bounds 0–3: 1 + 4 + 7 + 8 runs), slowMs
    // to its hit [0, 1, 1] (bounds 0–2: 1 + 4 + 4), then in the last round, now within 2 preemptions,
    // "crashMidRequest 1 → 0" again (bounds 0–2: 1 + 4 + 7).
    const reserve = 20 + 9 + 12;
    const r = await minimiseCounterexample(original, [1, 1, 1], { isHit: m.isHit, run: m.run, runsMax: 1, finalRunsMax: reserve });
    expect(r).toMatchObject({ removed: ['slowMs'], choices: [0, 1, 1], preemptions: 2, decisions: 2, undecided: [], errored: [] });
    // Its schedule came from the reserve's complete search: minimal in preemptions, though the spent
    // budget would not let the end search its own schedules (one run).
    expect(r.preemptionsMinimal).toBe(true);
    expect(notShownMinimal(r)).toEqual([]);
    // The case, two runs of the schedule in hand, the reserve's 29, one more of the schedule in hand, the last 12.
    expect(r.runs).toBe(1 + 2 + reserve + 1);
    expect(r.runs).toBe(m.calls.length);
    // One run less: the last search cannot finish.
    const less = model(3, (s, c) => needs(s, c) && (s === original ? c[0] === 1 : c[0] === 0 && c[1] === 1));
    expect((await minimiseCounterexample(original, [1, 1, 1], { isHit: less.isHit, run: less.run, runsMax: 1, finalRunsMax: reserve - 1 })).undecided).toEqual(['crashMidRequest 1 → 0']);
  });

  it('a step is starved when the budget left could not pay a whole search; one whose search got its full cap is not, and the reserve is kept for the starved', async () => {
    // Both steps necessary (the failure needs the crash and slowMs): the case's round is the last.
    // Every search of either, complete, is 5 runs (bounds 0–1 over three decisions).
    const both = (s: Scenario, c: number[]) => s.faults.crashMidRequest > 0 && s.faults.slowMs > 0 && c[2] === 1;
    // 5 runs allowed in all: the first search gets the 4 left (less than a search's 5) and is cut
    // short; the second none. Both starved, both searched from the reserve and shown necessary.
    const a = model(3, both);
    const ra = await minimiseCounterexample(crashAndSlow(), [0, 0, 1], { isHit: a.isHit, run: a.run, searchRunsMax: 5, runsMax: 5 });
    expect(ra).toMatchObject({ removed: [], undecided: [], errored: [], preemptionsMinimal: true });
    // The case, 4 of the first search, two runs of the schedule in hand, the reserve's 5 + 5, the case's own search's 1.
    expect(ra.runs).toBe(1 + 4 + 2 + 10 + 1);
    expect(ra.runs).toBe(a.calls.length);

    // A search's cap of 4 and exactly 4 runs left: the first search is stopped by its own cap, which
    // would stop it again — not starved. Here slowMs can go (its search finds [0, 0, 1] in 3 runs,
    // the schedule in hand [0, 1, 1] does not carry over), and the reserve of 3 runs is just enough
    // for it: spent on the capped search first, nothing would be left.
    const original = crashAndSlow();
    const b = model(3, (s, c) => s.faults.crashMidRequest > 0 && c[2] === 1 && (s === original ? c[1] === 1 : c[1] === 0));
    const rb = await minimiseCounterexample(original, [0, 1, 1], { isHit: b.isHit, run: b.run, searchRunsMax: 4, runsMax: 5, finalRunsMax: 3 });
    expect(rb.removed).toEqual(['slowMs']);
    expect(rb.choices).toEqual([0, 0, 1]);
    // The crash step was never shown necessary: cut short by its cap, then by the spent reserve.
    expect(rb.undecided).toEqual(['crashMidRequest 1 → 0']);
    expect(rb.runs).toBe(b.calls.length);
  });

  it('a reserve search whose runs throw: the step is errored with the first message (not undecided, not taken), and the next step is still searched', async () => {
    // Both steps necessary; every run without the crash throws.
    const m = model(3, (s, c) => s.faults.crashMidRequest > 0 && s.faults.slowMs > 0 && c[2] === 1, { throws: (s) => (s.faults.crashMidRequest === 0 ? 'the database is locked\nat line 2' : undefined) });
    const r = await minimiseCounterexample(crashAndSlow(), [0, 0, 1], { isHit: m.isHit, run: m.run, runsMax: 1 });
    expect(r).toMatchObject({ removed: [], undecided: [], errored: ['crashMidRequest 1 → 0 (the database is locked)'], preemptionsMinimal: true });
    expect(notShownMinimal(r)).toEqual(['not shown necessary (could not be tried): crashMidRequest 1 → 0 (the database is locked)']);
    // The case, two runs of the schedule in hand (the first throws: undecided, starved), the reserve's
    // two searches of 5 runs each (the first throwing at every run), the case's own search's one run.
    expect(r.runs).toBe(1 + 2 + 5 + 5 + 1);
    expect(r.runs).toBe(m.calls.length);
  });

  it('a reserve hit from a search a throw left incomplete is not claimed minimal in preemptions: the end searches it again, and says what threw', async () => {
    // Without slowMs the failure needs decision 2 alone, but the schedule with no preemption at all throws.
    const original = crashAndSlow();
    const zeros = (s: Scenario, c: number[]) => s.faults.crashMidRequest > 0 && s.faults.slowMs === 0 && c.every((x) => x === 0);
    const m = model(3, (s, c) => needs(s, c) && (s === original ? c[0] === 1 : c[0] === 0), { throws: (s, c) => (zeros(s, c) ? 'no schedule' : undefined) });
    const r = await minimiseCounterexample(original, [1, 1, 1], { isHit: m.isHit, run: m.run, runsMax: 1 });
    expect(r).toMatchObject({ removed: ['slowMs'], choices: [0, 0, 1], preemptions: 1, undecided: [] });
    expect(r.preemptionsMinimal).toBe(false);
    expect(r.errored).toEqual(['the schedule search of the scenario itself (no schedule)']);
    expect(r.runs).toBe(m.calls.length);
  });

  it('a hit of the schedule in hand with no preemption is minimal as it stands: the end runs nothing more (a throw there would be a false "not shown")', async () => {
    // Decision 0 is a free choice, and the failure needs it; without slowMs the schedule of all defaults throws.
    const zeros = (s: Scenario, c: number[]) => s.faults.crashMidRequest > 0 && s.faults.slowMs === 0 && c.every((x) => x === 0);
    const m = model(3, (s, c) => s.faults.crashMidRequest > 0 && c[0] === 1, { free: [0], throws: (s, c) => (zeros(s, c) ? 'no schedule' : undefined) });
    const r = await minimiseCounterexample(crashAndSlow(), [1], { isHit: m.isHit, run: m.run, runsMax: 1 });
    expect(r).toMatchObject({ removed: ['slowMs'], choices: [1], preemptions: 0, decisions: 1, preemptionsMinimal: true, undecided: [], errored: [] });
    // The case, two runs of the schedule in hand (the crash: no hit; slowMs: the hit), one more (the crash), its reserve search (bound 0: 2 runs).
    expect(r.runs).toBe(1 + 2 + 1 + 2);
    expect(r.runs).toBe(m.calls.length);
  });
});

/**
 * The time limit (`timeLimit`, the CLI's `--shrink-budget`): a fake clock
 * that jumps a second per run, so when it expires is a count of runs, never
 * a question of machine speed.
 */
describe('a time limit on the pass', () => {
  /** A clock that moves 1 s per run of `m`, and the limit `ms` on it; `asked` counts the reads. */
  const jumping = (m: ReturnType<typeof model>, ms: number) => {
    const limit = { asked: 0, expiredAt: -1, expired: () => {
      limit.asked++;
      const over = m.calls.length * 1000 >= ms;
      if (over && limit.expiredAt < 0) limit.expiredAt = m.calls.length;
      return over;
    }, what: `shrink budget ${ms / 1000} s` };
    return limit;
  };

  it('stops where it expires: no run after it, the case in hand still fails, and it is said to be not known minimal, with the steps not tried', async () => {
    const m = model(3, needs);
    const limit = jumping(m, 5000);
    const r = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m.isHit, run: m.run, timeLimit: limit });
    // Five runs, then no more: the clock said 5 s after the fifth.
    expect(limit.expiredAt).toBe(5);
    expect(m.calls).toHaveLength(5);
    expect(r.runs).toBe(5);
    // What it had taken by then is kept, and still fails as written.
    expect(r.removed).toEqual(['operation op1']);
    const again = await m.run(r.scenario, { name: 'list', choose: (_l, i) => r.choices[i] ?? 0 });
    expect(m.isHit(again)).toBe(true);
    expect(r.stopped).toEqual({ by: 'shrink budget 5 s', untried: ['crashMidRequest 2 → 1', 'slowMs'] });
    expect(notShownMinimal(r)).toEqual([
      'shrinking stopped at its time limit (shrink budget 5 s): not known to be minimal',
      'not shown necessary (not tried before the time limit): crashMidRequest 2 → 1',
      'not shown necessary (not tried before the time limit): slowMs',
    ]);
  });

  it('expired before the first step: the case is the answer as given, every single step listed as not tried, its preemptions not claimed minimal', async () => {
    const m = model(3, needs);
    const r = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m.isHit, run: m.run, timeLimit: { expired: () => true, what: 'shrink budget 1 ms' } });
    // Only the run that checks the case fails at all.
    expect(m.calls).toHaveLength(1);
    expect(r).toMatchObject({ removed: [], choices: [1, 1, 1], preemptions: 3, preemptionsMinimal: false, undecided: [], errored: [], runs: 1 });
    expect(r.stopped).toEqual({ by: 'shrink budget 1 ms', untried: simplifications(three()).map((x) => x.what) });
    expect(notShownMinimal(r)[0]).toBe('shrinking stopped at its time limit (shrink budget 1 ms): not known to be minimal');
    expect(notShownMinimal(r)[1]).toMatch(/^preemptions 3: not every schedule/);
    // A case with no preemption is minimal in preemptions without its search: none is the fewest there is.
    const z = model(3, (sc) => sc.faults.crashMidRequest > 0);
    const r0 = await minimiseCounterexample(three(), [], { isHit: z.isHit, run: z.run, timeLimit: { expired: () => true, what: 'shrink budget 1 ms' } });
    expect(r0).toMatchObject({ preemptions: 0, preemptionsMinimal: true, runs: 1 });
    expect(notShownMinimal(r0).some((x) => x.startsWith('preemptions'))).toBe(false);
  });

  it('a limit it never reaches changes nothing: the same result, runs and note as without one (no `stopped`)', async () => {
    const m1 = model(3, needs);
    const without = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m1.isHit, run: m1.run });
    const m2 = model(3, needs);
    const limit = jumping(m2, 1e9);
    const within = await minimiseCounterexample(three(), [1, 1, 1, 0], { isHit: m2.isHit, run: m2.run, timeLimit: limit });
    expect(within).toEqual(without);
    expect('stopped' in within).toBe(false);
    expect(limit.asked).toBeGreaterThan(0);
    expect(m2.calls).toHaveLength(m1.calls.length);
  });

  it('the limit stops a schedule search in the middle, not after its runs: a search of 1,000 runs stops at the run the clock expires', async () => {
    // As in the default-budget test above: no simplification fails, so every single step's search would run 1,000 runs.
    const original = three({ crashMidRequest: 1, slowMs: 5, loseResponseAfterCommit: 3 });
    const deep = (s: Scenario, c: number[]) => s === original && [0, 5, 10, 15].every((i) => c[i] === 1);
    const m = model(20, deep);
    const limit = jumping(m, 30_000);
    const r = await minimiseCounterexample(original, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], { isHit: m.isHit, run: m.run, timeLimit: limit });
    expect(m.calls).toHaveLength(30);
    expect(r.runs).toBe(30);
    // The first step's search was cut short by the limit (not tried to the end); no step after it ran.
    expect(r.stopped?.untried).toEqual(['operation op1', 'operation op2', 'loseResponseAfterCommit 3 → 2', 'crashMidRequest 1 → 0', 'slowMs']);
    expect(r.undecided).toEqual([]);
  });
});
