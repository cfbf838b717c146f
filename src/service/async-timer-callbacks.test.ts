// A timer callback that is `async` (`setInterval(async () => { await
// renewLease(); … })`) ran only its first synchronous stretch in its
// owner's scope: the kernel clock fired it inside `enter(owner)` …
// `leave()`, so everything after its first `await` ran in later microtasks
// outside every scope. It read the machine's Date.now() and Math.random(),
// its timers were real ones, and two replays of one file differed (DESIGN
// invariant 1). Such a callback's continuation now runs as kernel work of
// its own, in its owner's scope (src/sim/timer-firing.ts); a sleep it arms
// after the run ended stops with the run like any late timer (an async
// heartbeat loop must not run virtual time to the kernel's limit), and the
// recovery phase resumes it.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { LATE_CHAIN_MAX } from '../sim/fake-timers.js';
import type { ServiceDefinition } from './definition.js';

const EPOCH = SIM_EPOCH_MS;

/** What the callbacks saw, in order. */
let seen: Array<{ at: string; now: number; random: number }> = [];
const record = (at: string) => seen.push({ at, now: Date.now(), random: Math.random() }); // real-time: allowed (virtual: what is under test)

type How = 'microtask' | 'sleep' | 'late' | 'long' | 'rejects' | 'paused' | 'concurrent';

/** Writes one item, then arms a 100 ms timer whose async callback records what it reads before and after an await. */
function service(how: How): ServiceDefinition {
  return {
    name: `async-timer-${how}`,
    tables: ['items'],
    setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT)'),
    steps: ['write', 'finish'],
    operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId }) },
    effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
    async handle(req, sim) {
      await sim.step('write');
      const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(JSON.parse(req.body).run, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
      setTimeout(async () => { // real-time: allowed (a virtual timer under test)
        record('before');
        if (how === 'sleep' || how === 'late' || how === 'paused') await sleep(50);
        else if (how === 'long') for (let i = 0; i <= LATE_CHAIN_MAX; i++) await sleep(50); // one link more than a run's end lets through
        else await Promise.resolve();
        record('after');
        if (how === 'rejects') throw new Error('flush refused');
      }, 100);
      // Its own wait ends at the timer's instant: the kernel has the request to resume there too.
      if (how === 'concurrent') await sim.sleep(100);
      // The request is still at work while the callback sleeps.
      if (how === 'sleep') await sim.sleep(200);
      if (how === 'paused') {
        // At 121 ms, inside the callback's sleep (101 to 151 ms), the pause fault may stall the process here.
        await sim.sleep(120);
        await sim.step('finish');
      }
      return { status: 201, body: JSON.stringify({ id }) };
    },
  };
}

/** Arms a 1 s interval in memory() whose async callback records before and after an await of 50 ms. */
const memoryService: ServiceDefinition = {
  name: 'async-memory-interval',
  tables: ['items'],
  setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT)'),
  steps: ['write'],
  memory: () => {
    setInterval(async () => { // real-time: allowed (a virtual interval under test)
      record('before');
      await sleep(50);
      record('after');
    }, 1000);
    return {};
  },
  operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId }) },
  effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(req, sim) {
    await sim.step('write');
    await sim.sleep(2_500); // the process lives through two sweeps
    const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(JSON.parse(req.body).run, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
    return { status: 201, body: JSON.stringify({ id }) };
  },
};

/** memory() starts a heartbeat loop from a timer: `for (;;) { await sleep(500); beat }`. */
const loopService: ServiceDefinition = {
  ...memoryService,
  name: 'async-memory-loop',
  memory: () => {
    setTimeout(async () => { // real-time: allowed (a virtual timer under test)
      for (;;) {
        await sleep(500);
        record('beat');
      }
    }, 0);
    return {};
  },
};

function scenario(def: ServiceDefinition, faults: Record<string, unknown> = {}) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'async timer callbacks', seed: 7, service: { module: def.name, epochMs: EPOCH },
    client: { keySource: 'tool_call', timeoutMs: 10_000, maxAttempts: 1 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
    faults, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
  }));
}

async function run(def: ServiceDefinition, faults: Record<string, unknown> = {}) {
  seen = [];
  const r = await runScenario(scenario(def, faults), { service: def, keepTrace: true });
  return { r, seen };
}

describe('an async timer callback runs on in its scope after an await', () => {
  it.each([
    ['a microtask', 'microtask', 0],
    ["node:timers/promises' setTimeout", 'sleep', 50],
    ['a microtask, while its request resumes at the same instant', 'concurrent', 0],
  ] as const)("a request's setTimeout whose callback awaits %s: virtual time and the seeded stream after the await, alike in two runs", async (_what, how, waited) => {
    const a = await run(service(how));
    expect(a.r.violations).toEqual([]);
    // The step at 1 ms, the timer 100 ms later.
    expect(a.seen.map((s) => [s.at, s.now])).toEqual([['before', EPOCH + 101], ['after', EPOCH + 101 + waited]]);
    const b = await run(service(how));
    expect(b.seen).toEqual(a.seen);
    expect(b.r.result.traceHash).toBe(a.r.result.traceHash);
  });

  it("a sleep it arms after the run ended (every request and client done) still ends: finite work runs to its end, as in the process (it stopped with the run until 2026-12)", async () => {
    const a = await run(service('late'));
    expect(a.r.violations).toEqual([]);
    expect(a.seen.map((s) => [s.at, s.now])).toEqual([['before', EPOCH + 101], ['after', EPOCH + 151]]);
  });

  it('the recovery phase resumes a chain of sleeps the run\'s end stopped (the process lives on): the callback runs on in its scope there', async () => {
    const late = service('long');
    const def: ServiceDefinition = {
      ...late,
      name: 'async-timer-recovery',
      progress: { settleMs: 100, leased: false, query: (op) => ({ path: `/items/${op.runId}` }), found: (status) => status === 200 },
      async handle(req, sim) {
        if (req.method === 'GET') return { status: 404, body: '{}' };
        const res = await late.handle(req, sim);
        await sim.sleep(60); // past the client's 50 ms: the operation ends unknown, and recovery resubmits it
        return res;
      },
    };
    const s = JSON.parse(JSON.stringify(scenario(def)));
    const impatient = parseScenario(JSON.stringify({ ...s, client: { ...s.client, timeoutMs: 50 } }));
    const go = async () => {
      seen = [];
      const r = await runScenario(impatient, { service: def, keepTrace: true });
      return { r, seen };
    };
    const a = await go();
    expect(a.r.recovery.size).toBe(1);
    // The main run stopped the chain of sleeps the callback armed from 101 ms on (every task had ended) after LATE_CHAIN_MAX
    // links; the recovery phase resumes it, and the callback runs on to its end there.
    expect(a.seen.map((x) => x.at).slice(0, 2), a.r.recoveryTrace.join('\n')).toEqual(['before', 'after']);
    expect(a.seen[0]!.now).toBe(EPOCH + 101);
    expect(a.seen[1]!.now).toBeGreaterThanOrEqual(EPOCH + 101 + 50 * (LATE_CHAIN_MAX + 1));
    expect(a.r.recoveryTrace.some((l) => /setTimeout callback/.test(l)), a.r.recoveryTrace.join('\n')).toBe(true);
    const b = await go();
    expect(b.seen).toEqual(a.seen);
  });

  it('an async heartbeat loop started from a timer in memory() beats while the run lives, and does not run it to the kernel\'s limit', async () => {
    const a = await run(loopService);
    expect(a.r.violations).toEqual([]);
    // The timer fires at 1 ms (Node's least delay); the client is done at 2502 ms: the sleep armed at 2501 ms still ends,
    // and the loop beats LATE_CHAIN_MAX times more (it cannot be told from finite work), then stops with the run.
    expect(a.seen.map((s) => s.now - EPOCH)).toEqual(Array.from({ length: 6 + LATE_CHAIN_MAX }, (_, i) => 501 + 500 * i));
    expect(a.r.result.timeMs).toBe(3501 + 500 * LATE_CHAIN_MAX); // the instant of the sleep that stopped with the run (popped, doing nothing): far from the one-day limit
  });

  it('a setInterval armed in memory() that awaits a sleep: each firing reads the kernel clock after it', async () => {
    const a = await run(memoryService);
    expect(a.r.violations).toEqual([]);
    expect(a.seen.map((s) => [s.at, s.now])).toEqual([
      ['before', EPOCH + 1000], ['after', EPOCH + 1050],
      ['before', EPOCH + 2000], ['after', EPOCH + 2050],
      // Once more after the run's last task (the process's interval, as a request's: src/service/interval-last-tick.test.ts).
      ['before', EPOCH + 3000], ['after', EPOCH + 3050],
    ]);
    const b = await run(memoryService);
    expect(b.seen).toEqual(a.seen);
  });

  it('a pause of the process stalls the callback after its await', async () => {
    // Paused for 3 s at the step (1 ms): the memory() interval's first firing is the pause's end; its sleep then runs on.
    const a = await run(memoryService, { pause: { atStep: 'write', ms: 3000, count: 1 } });
    expect(a.seen.slice(0, 2).map((s) => [s.at, s.now])).toEqual([['before', EPOCH + 3001], ['after', EPOCH + 3051]]);
  });

  it("a pause of the process that begins inside the callback's await stalls it until the pause ends", async () => {
    const a = await run(service('paused'), { pause: { atStep: 'finish', ms: 300, count: 1 } });
    expect(a.seen.map((s) => [s.at, s.now])).toEqual([['before', EPOCH + 101], ['after', EPOCH + 421]]);
  });

  it('a kill of the process drops what the callback had left to do after its await', async () => {
    // Killed at 1020 ms, inside the first firing's 50 ms sleep (the request dies with it, and the run ends: no retry).
    const a = await run(memoryService, { kill: { atMs: 1020, restartAfterMs: 200 } });
    expect(a.r.trace.some((l) => /\bs0\s+kill\b/.test(l)), a.r.trace.join('\n')).toBe(true);
    // The restarted process (at 1220 ms) arms its interval again in memory(): it ticks once more after the run.
    expect(a.seen.map((s) => [s.at, s.now])).toEqual([['before', EPOCH + 1000], ['before', EPOCH + 2220], ['after', EPOCH + 2270]]);
  });

  it('a rejection after the await is an uncaught error of its process: the process crashes', async () => {
    const { r } = await run(service('rejects'));
    expect(r.trace.some((l) => /process crashed: .*flush refused/.test(l)), r.trace.join('\n')).toBe(true);
  });
});
