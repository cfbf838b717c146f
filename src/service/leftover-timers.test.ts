// Timers a handler arms and never awaits (a lease renewed by setInterval, a
// cache evicted by setTimeout) are the kernel's, like every timer of the
// service. Two ways they went wrong (found by an outside user's ticket
// service): a killed process's interval kept firing and writing to the
// database, and an interval nobody cleared ran virtual time on to the
// kernel's one-hour limit ("the inputs are too large to run", exit 1, no
// verdict).
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import type { ServiceDb, ServiceDefinition } from './definition.js';
import { ServiceError } from './errors.js';

/** Books one item, then renews a lease row every 100 ms with setInterval; `clear` says whether it stops the interval before answering. */
function renewer(clear: boolean): ServiceDefinition {
  return {
    name: clear ? 'renew-cleared' : 'renew-leaked',
    tables: ['items', 'beats'],
    setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT); CREATE TABLE beats (id INTEGER PRIMARY KEY, instance TEXT, restarts INTEGER, at INTEGER)'),
    steps: ['write', 'finish'],
    memory: () => ({ born: Date.now() }), // real-time: allowed (virtual: which process a beat came from)
    operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId, title: op.title }) },
    effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
    async handle(req, sim) {
      await sim.step('write');
      const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(JSON.parse(req.body).run, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
      const born = (sim.memory as { born: number }).born;
      const renew = setInterval(() => { // real-time: allowed (a virtual interval under test)
        sim.db.prepare('INSERT INTO beats (instance, restarts, at) VALUES (?, ?, ?)').run(sim.instance, born, Date.now()); // real-time: allowed (virtual)
      }, 100);
      await sim.step('finish');
      await sim.sleep(1_000); // the lease is renewed while the request finishes its work
      if (clear) clearInterval(renew);
      return { status: 201, body: JSON.stringify({ id }) };
    },
  };
}

function scenario(def: ServiceDefinition, faults: Record<string, unknown> = {}) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'timers', seed: 3, service: { module: def.name },
    client: { keySource: 'tool_call', timeoutMs: 5_000 }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], faults, expect: {},
  }));
}

async function beats(def: ServiceDefinition, faults: Record<string, unknown> = {}) {
  let rows: Array<{ instance: string; restarts: number; at: number }> = [];
  const r = await runScenario(scenario(def, faults), { service: def, keepTrace: true, inspect: (db: ServiceDb) => { rows = db.prepare('SELECT instance, restarts, at FROM beats ORDER BY id').all() as typeof rows; } });
  return { r, rows };
}

describe("timers a handler leaves running", () => {
  it("a killed process's setInterval dies with it: no beat of the dead process after the kill", async () => {
    const def = renewer(true);
    const { r, rows } = await beats(def, { kill: { atMs: 500, restartAfterMs: 200 } });
    const killAt = r.trace.map((l) => /^\s*([\d.]+) ms\s+s0\s+kill\b/.exec(l)).find((m) => m !== null);
    expect(killAt, r.trace.join('\n')).toBeDefined();
    const firstBorn = Math.min(...rows.map((x) => x.restarts), Number.POSITIVE_INFINITY);
    const mine = rows.filter((x) => x.restarts === firstBorn);
    expect(mine.length).toBeGreaterThanOrEqual(4); // it renewed until the kill (at 500 ms, mid-request)
    expect(mine.filter((x) => x.at > Number(killAt![1]))).toEqual([]);
  });

  it('an interval nobody clears ends with the run instead of running virtual time to the limit', async () => {
    const { r, rows } = await beats(renewer(false));
    expect(r.violations).toEqual([]);
    expect(rows.length).toBeGreaterThanOrEqual(9); // it did renew while the request worked
    expect(r.result.timeMs).toBeLessThan(60_000);
  });

  it("what a timer's callback writes is shown on a trace line of its own, not on the step before it (the stepper reads the database per entry)", async () => {
    const def = renewer(true);
    const seen: Array<{ event: string; t: number; beats: number }> = [];
    await runScenario(scenario(def), {
      service: def,
      keepTrace: true,
      observe: { entry: (e, db) => seen.push({ event: e.event, t: e.t, beats: db.prepare('SELECT count(*) FROM beats').pluck().get() as number }) },
    });
    // Entry i reads the database as entry i-1's step left it: only a timer writes beats, so each increase must follow a timer's line.
    const grew = seen.slice(1).map((x, i) => ({ by: seen[i]!, grew: x.beats > seen[i]!.beats })).filter((x) => x.grew).map((x) => `${x.by.event} at ${x.by.t}`);
    expect(grew.length).toBeGreaterThanOrEqual(9);
    expect(grew.filter((x) => !x.startsWith('setInterval callback'))).toEqual([]);
  });

  it('work deferred past the answer with setTimeout still happens, and a setTimeout that re-arms itself ends with the run', async () => {
    const deferred: ServiceDefinition = {
      ...renewer(true),
      name: 'deferred',
      async handle(req, sim) {
        await sim.step('write');
        const beat = () => {
          sim.db.prepare('INSERT INTO beats (instance, restarts, at) VALUES (?, 0, ?)').run(sim.instance, Date.now()); // real-time: allowed (virtual)
          setTimeout(beat, 100); // real-time: allowed (a self-re-arming virtual timer under test)
        };
        setTimeout(() => { // real-time: allowed (virtual: the insert deferred past the answer)
          sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(JSON.parse(req.body).run, req.headers['x-tenant'] ?? 'default');
          beat();
        }, 50);
        return { status: 202, body: '{}' };
      },
    };
    const { r, rows } = await beats(deferred);
    expect(r.reports).toEqual({ op1: 1 });
    // The first beat ran in the deferred callback, after the run was over; the timer it armed is one link of a chain (it
    // fires: finite work armed after the end finishes); the beat it runs re-arms itself, a loop, and that stops with the run.
    expect(rows.length).toBe(2);
    expect(r.result.timeMs).toBeLessThan(60_000);
  });

  it("a handler that waits past the kernel's hour is named as the service's doing (exit 2), not as inputs too large", async () => {
    const sleepy: ServiceDefinition = {
      ...renewer(true),
      name: 'sleepy',
      async handle(req, sim) {
        await sim.step('write');
        await new Promise((r) => setTimeout(r, 5 * 3_600_000)); // real-time: allowed (a virtual 5 hours: the mistake under test)
        return { status: 201, body: '{}' };
      },
    };
    const run = runScenario(scenario(sleepy), { service: sleepy });
    await expect(run).rejects.toBeInstanceOf(ServiceError);
    await expect(runScenario(scenario(sleepy), { service: sleepy })).rejects.toThrow(/service 'sleepy': a run did not end within the simulation's limit of one virtual hour .*requests s0\/op1\.w0#1, .* still unanswered: a handler waits past it/);
  });

  it('a cleared interval stops when the request clears it', async () => {
    const { rows } = await beats(renewer(true));
    expect(rows.length).toBeGreaterThanOrEqual(9);
    expect(rows.length).toBeLessThanOrEqual(11);
  });
});

/**
 * Claims a key in one transaction, makes the order in a second; a stale
 * claim (a crash between the two) is freed by a sweeper interval the first
 * request of the process starts — not on read. Correct and live: the
 * process goes on sweeping after the main run, so the recovery phase's
 * resubmission finds the claim gone and makes the order.
 */
function swept(o: { clearOnRead: boolean; claimMs: number; settleMs: number; sweepMs?: number }): ServiceDefinition<{ sweeper: ReturnType<typeof setInterval> | undefined; sweeps: number }> {
  return {
    name: 'swept',
    tables: ['orders', 'claims'],
    setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT); CREATE TABLE claims (key TEXT PRIMARY KEY, done TEXT, expires INTEGER)'),
    steps: ['claim', 'work'],
    crashPoints: ['after-claim'],
    memory: () => ({ sweeper: undefined, sweeps: 0 }),
    operation: { path: '/orders', body: (op) => JSON.stringify({ run: op.runId, title: op.title }) },
    effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
    progress: {
      settleMs: o.settleMs,
      leased: true,
      query: (op) => ({ path: `/orders?run=${op.runId}` }),
      found: (status, body) => status === 200 && (JSON.parse(body) as number[]).length > 0,
    },
    async handle(req, sim) {
      const db = sim.db;
      const mem = sim.memory;
      mem.sweeper ??= setInterval(() => { // real-time: allowed (a virtual interval under test)
        mem.sweeps++;
        db.prepare('DELETE FROM claims WHERE done IS NULL AND expires <= ?').run(Date.now()); // real-time: allowed (virtual)
      }, o.sweepMs ?? 250);
      const tenant = req.headers['x-tenant'] ?? 'default';
      if (req.method === 'GET') {
        // The test's handle on the carried interval: a read stops it (clearInterval with the handle the main run's request kept).
        if (o.clearOnRead) clearInterval(mem.sweeper);
        return { status: 200, body: JSON.stringify(db.prepare('SELECT id FROM orders WHERE run = ? AND tenant = ?').pluck().all(new URLSearchParams(req.path.split('?')[1]).get('run'), tenant)) };
      }
      const key = `${tenant}/${req.headers['idempotency-key']}`;
      await sim.step('claim');
      const row = db.prepare('SELECT done FROM claims WHERE key = ?').get(key) as { done: string | null } | undefined;
      if (row?.done != null) return { status: 201, body: row.done };
      if (row !== undefined) return { status: 409, body: '{"error":"in progress"}' };
      db.prepare('INSERT INTO claims (key, expires) VALUES (?, ?)').run(key, Date.now() + o.claimMs); // real-time: allowed (virtual)
      await sim.step('work');
      sim.crashPoint('after-claim');
      const id = Number(db.prepare('INSERT INTO orders (run, tenant) VALUES (?, ?)').run(JSON.parse(req.body).run, tenant).lastInsertRowid);
      db.prepare('UPDATE claims SET done = ? WHERE key = ?').run(JSON.stringify({ id }), key);
      return { status: 201, body: JSON.stringify({ id }) };
    },
  } as ServiceDefinition<{ sweeper: ReturnType<typeof setInterval> | undefined; sweeps: number }>;
}

describe('the recovery phase resumes the timers the main run ended with (the process lives on)', () => {
  const crashed = (def: ServiceDefinition, service: Record<string, unknown> = {}) => parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'swept', seed: 1, service: { module: def.name, ...service },
    client: { keySource: 'tool_call', timeoutMs: 1_000, maxAttempts: 1 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
    faults: { crashMidRequest: 1, crashAt: 'after-claim' },
    operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
  }));

  it('a sweeper interval frees the claim a crash left, and the resubmission makes the one order (no false "no progress")', async () => {
    // A 10 s claim, and the phase starts once it has expired and been swept (10 s + one sweep).
    const def = swept({ clearOnRead: false, claimMs: 10_000, settleMs: 10_250 }) as ServiceDefinition;
    let orders = -1;
    const r = await runScenario(crashed(def), { service: def, keepTrace: true, inspect: (db: ServiceDb) => { orders = db.prepare('SELECT count(*) FROM orders').pluck().get() as number; } });
    expect(r.trace.join('\n')).toMatch(/answer 500 .*after-claim/);
    expect(r.reports).toEqual({ op1: 0 }); // the main run ends with the claim left behind and no order
    expect(r.recovery.get('op1')?.kind).toBe('success');
    expect(r.violations).toEqual([]);
    expect(orders).toBe(1);
  });

  it('a sweeper of 100 ms waiting out six hours of clock skew is a long run, not a runaway: the phase\'s event budget grows with it', async () => {
    // The phase starts once the slow clock has seen the claim expire: 6 h of sweeps (216,000) before it, more than the phase's own 200,000 events.
    const def = swept({ clearOnRead: false, claimMs: 10_000, settleMs: 10_100, sweepMs: 100 }) as ServiceDefinition;
    const r = await runScenario(crashed(def, { instances: 2, clockOffsetMs: [0, -6 * 3_600_000] }), { service: def });
    expect(r.recovery.get('op1')?.kind).toBe('success');
  });

  it('the handle the service kept still clears the carried interval there', async () => {
    // The phase starts (1 s) before the 3 s claim expires: only a sweep inside the phase can free it.
    const go = async (clearOnRead: boolean) => {
      const def = swept({ clearOnRead, claimMs: 3_000, settleMs: 1_000 }) as ServiceDefinition;
      return (await runScenario(crashed(def), { service: def })).recovery.get('op1')?.kind;
    };
    expect(await go(false)).toBe('success');
    // The phase asks first (GET), which clears the sweeper with the handle the main run's request kept: the claim stays, 409 to the end.
    expect(await go(true)).toBe('gave_up');
  });
});
