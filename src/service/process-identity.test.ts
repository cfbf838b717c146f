// Each simulated process has its own identity: `os.hostname()` is its
// instance's name and `process.pid` a pid of its own, new at each restart
// (src/sim/process-identity.ts). Until 2026-12 every instance read the one
// Node process's pid and hostname, and a correct service whose lock owner
// is `${hostname()}:${process.pid}` failed exactly-one at run 2 on "2
// instances" (each took the other's lock for its own): a false alarm.
import { createRequire } from 'node:module';
import os, { hostname as namedHostname } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from './campaign.js';
import { loadService } from './load.js';
import type { ServiceDefinition } from './definition.js';
import { appService } from '../app/define.js';
import { pidLockApp } from '../app/fixtures/pid-lock-app.js';
import type { AppDescriptor } from '../app/descriptor.js';

const requireOs = createRequire(import.meta.url)('os') as typeof os;
const DIR = 'src/service/fixtures/identity';
const AT_LOAD = 'src/app/fixtures/pid-owner-at-load-app.ts';

/** The real pid and hostname, read where no dispatcher is installed: a worker thread has its own `process` and `os`. */
function realIdentity(): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const w = new Worker("require('node:worker_threads').parentPort.postMessage([process.pid, require('node:os').hostname()])", { eval: true });
    w.once('message', (m: [number, string]) => void w.terminate().then(() => resolve(m)));
    w.once('error', reject);
  });
}

interface Seen { instance: string; named: string; viaDefault: string; viaRequire: string; pid: number; ppid: number; timerPid: number; startPid: number }

/** A service that records, per request, who its code says it is: three ways to the hostname, the pid in the handler, in a timer callback and in memory(). */
function whoAmI(seen: Seen[]): ServiceDefinition<{ startPid: number }> {
  return {
    name: 'who-am-i',
    tables: ['orders'],
    setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT NOT NULL, tenant TEXT NOT NULL)'),
    memory: () => ({ startPid: process.pid }),
    steps: ['work'],
    operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }) },
    effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
    async handle(req, sim) {
      await sim.step('work');
      const timerPid = await new Promise<number>((r) => setTimeout(() => r(process.pid), 5)); // real-time: allowed (user code: the kernel's clock)
      seen.push({ instance: sim.instance, named: namedHostname(), viaDefault: os.hostname(), viaRequire: requireOs.hostname(), pid: process.pid, ppid: process.ppid, timerPid, startPid: sim.memory.startPid });
      const id = Number(sim.db.prepare('INSERT INTO orders (ref, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { ref: string }).ref, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
      return { status: 201, body: JSON.stringify({ id, by: `${namedHostname()}:${process.pid}` }) };
    },
  };
}

/** Two instances, three operations; s0 dies as its first answer leaves and restarts 500 ms later, so the retry and later requests meet both instances and a restarted s0. */
const killed = parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'who am i', seed: 3, service: { module: 'who-am-i', instances: 2 },
  client: { keySource: 'tool_call', maxAttempts: 6 },
  faults: { kill: { instance: 0, atAnswer: 1, restartAfterMs: 500 } },
  operations: ['op1', 'op2', 'op3', 'op4'].map((id, i) => ({ id, runId: `r${i}`, module: 'm', title: 't', workers: 1, startMs: i * 1500 })), expect: {},
}));

describe('each simulated process has its own hostname and pid', () => {
  it("inside a process's code: its instance's name, a pid of its own (new after a restart), ppid 1; outside: the real ones", async () => {
    const [pid, host] = await realIdentity();
    const seen: Seen[] = [];
    const r = await runScenario(killed, { service: whoAmI(seen), keepTrace: true });
    const text = r.trace.join('\n');
    expect(text).toMatch(/ kill\b/);
    expect(text).toMatch(/ restart\b/);
    for (const s of seen) {
      expect([s.named, s.viaDefault, s.viaRequire], JSON.stringify(s)).toEqual([s.instance, s.instance, s.instance]);
      expect(s.ppid).toBe(1);
      expect(s.timerPid).toBe(s.pid); // a timer callback runs in its request's process
      expect(s.startPid).toBe(s.pid); // memory() is that process's start-up
    }
    const pids = (instance: string) => [...new Set(seen.filter((s) => s.instance === instance).map((s) => s.pid))];
    expect(pids('s1')).toEqual([20000]);
    // s0's first process answered once before it was killed; its successor is a new process.
    expect(pids('s0')).toEqual([10000, 10001]);
    expect(seen.find((s) => s.pid === 10001), text).toBeDefined();
    // Host code after the run (and this test's own code) reads the real process.
    expect(process.pid).toBe(pid);
    expect(os.hostname()).toBe(host);
    expect(namedHostname()).toBe(host);
    expect(requireOs.hostname()).toBe(host);
    expect(`${os.hostname}`).toBe(host); // Node's own coerces to the name (a deprecated use): so does the dispatcher
  });

  it('runs of the same seed see the same identities (nothing carried from one run to the next, nothing of the machine)', async () => {
    const a: Seen[] = [];
    const b: Seen[] = [];
    const ra = await runScenario(killed, { service: whoAmI(a) });
    const rb = await runScenario(killed, { service: whoAmI(b) });
    expect(b).toEqual(a);
    expect(rb.result.traceHash).toBe(ra.result.traceHash);
  });

  it('a correct lock owned by `${hostname()}:${process.pid}` holds under instances and kills; with its owner check planted out it fails exactly-one', async () => {
    const faults = ['instances', 'kill', 'concurrency', 'loseResponse', 'slow', 'pause'] as const;
    for (const path of [`${DIR}/pid-lock.ts`, 'src/service/fixtures/cjs/pid-lock-memory.cjs']) {
      const def = await loadService(path);
      const r = await runServiceCampaign({ def, module: path, runs: 300, seed: 1, faults: [...faults] });
      expect(r.counterexample?.violations, path).toBeUndefined();
      expect(r.verdict, path).toBe('holds');
      const runs = (id: string) => r.coverage!.rows.find((x) => x.id === id)?.runs ?? 0;
      expect(runs('instance:second'), path).toBeGreaterThan(0);
      expect(runs('kill@work') + runs('kill@answer'), path).toBeGreaterThan(0);
    }
    const bug = `${DIR}/pid-lock-any-owner.ts`;
    const r = await runServiceCampaign({ def: await loadService(bug), module: bug, runs: 300, seed: 1, faults: [...faults] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 60_000);

  it("a hosted app's process has its own identity in app(), its requests and its timers after the answer", async () => {
    const seen: Array<{ where: string; host: string; pid: number }> = [];
    const me = (where: string) => seen.push({ where, host: os.hostname(), pid: process.pid });
    const app: AppDescriptor = {
      name: 'who-am-i-app',
      app: ({ redis }) => {
        me('app()');
        return async (req, res) => {
          for await (const _ of req) void _;
          me('request');
          const id = await redis.incr('seq');
          await redis.set(`order:${id}`, String(req.headers['idempotency-key']));
          setTimeout(() => me('timer'), 50); // real-time: allowed (user code: the instance's clock), fires after the answer
          res.statusCode = 201;
          res.end(JSON.stringify({ id }));
        };
      },
      operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
      effects: { noun: 'order', of: () => [] },
    };
    const r = await runScenario({ ...killed, service: { ...killed.service, module: 'who-am-i-app' } }, { service: appService(app), keepTrace: true });
    const text = r.trace.join('\n');
    const byPid = new Map<number, Set<string>>();
    for (const s of seen) {
      expect(s.host, text).toBe(s.pid < 20000 ? 's0' : 's1');
      byPid.set(s.pid, (byPid.get(s.pid) ?? new Set()).add(s.where));
    }
    // Both of s0's processes and s1's: each booted (app()) and served as itself, and ran its timer as
    // itself — but s0's first, killed as its answer left: a dead process's timers never fire.
    expect([...byPid.keys()].sort(), text).toEqual([10000, 10001, 20000]);
    for (const [pid, where] of byPid) expect([...where].sort(), `pid ${pid}`).toEqual(pid === 10000 ? ['app()', 'request'] : ['app()', 'request', 'timer']);
  });

  it("a hosted app's pid lock (its owner named in app()) holds under instances and kills; planted out, it fails", async () => {
    // (Not 'slow': two requests of one process awaiting a third's promise while it sleeps are refused as "kept working for 20000 turns" on main too, whatever they read.)
    const ok = await runServiceCampaign({ def: appService(pidLockApp(false)), module: 'pid-lock-app', runs: 100, seed: 1, faults: ['instances', 'kill', 'concurrency', 'loseResponse'] });
    expect(ok.counterexample?.violations).toBeUndefined();
    expect(ok.verdict).toBe('holds');
    // Its canary on the faults that find it soonest (two instances at once): shrinking with kills in the space takes seconds more.
    const bug = await runServiceCampaign({ def: appService(pidLockApp(true)), module: 'pid-lock-app-any-owner', runs: 100, seed: 1, faults: ['instances', 'concurrency'] });
    expect(bug.verdict).toBe('fails');
    expect(bug.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 60_000);

  it("loaded once per simulated process, an app module's top level runs as that process: an owner named there holds", async () => {
    const def = await loadService(AT_LOAD, { perProcess: true });
    const r = await runServiceCampaign({ def, module: AT_LOAD, runs: 150, seed: 1, faults: ['instances', 'concurrency'] });
    expect(r.counterexample?.violations).toBeUndefined();
    expect(r.verdict).toBe('holds');
  }, 60_000);
});
