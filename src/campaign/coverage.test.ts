import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { ServiceDefinition } from '../service/definition.js';
import { serviceCaseArbitrary, serviceFaults } from '../service/campaign.js';
import { registerService } from '../service/registry.js';
import { Reached } from '../service/reached.js';
import { ServiceError } from '../service/errors.js';
import { runScenario } from '../scenario/run.js';
import { ListChoice } from '../sim/choice/list.js';
import { caseAt } from './runs.js';
import { countRun, coverageOf, neverReached, situationsOf, type CoverageCounts } from './coverage.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const bin = join(import.meta.dirname, '..', '..', 'bin', 'retrysim.js');

/**
 * Stored answers replay for a day: beyond anything the standard fault space
 * reaches (runs of at most an hour of virtual time, clocks that disagree by
 * at most 6 hours).
 */
const TTL_MS = 86_400_000;

/** A keyed service declaring two situations of its own: a replay (reachable) and an expired stored answer (not). */
const ttlService: ServiceDefinition = {
  name: 'ttl-store',
  tables: ['answers', 'items'],
  setup: (db) => db.exec('CREATE TABLE answers (k TEXT PRIMARY KEY, body TEXT, at INTEGER); CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT)'),
  steps: ['write'],
  situations: ['replayed', 'ttl-expired'],
  operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId, title: op.title }) },
  effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(req, sim) {
    await sim.step('write');
    const tenant = req.headers['x-tenant'] ?? 'default';
    const k = `${tenant}/${req.headers['idempotency-key'] ?? ''}`;
    const old = sim.db.prepare('SELECT body, at FROM answers WHERE k = ?').get(k) as { body: string; at: number } | undefined;
    if (old !== undefined && sim.now() - old.at <= TTL_MS) {
      sim.reached('replayed');
      return { status: 201, headers: { 'idempotent-replay': 'true' }, body: old.body };
    }
    if (old !== undefined) sim.reached('ttl-expired');
    const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(JSON.parse(req.body).run, tenant).lastInsertRowid);
    const body = JSON.stringify({ id });
    sim.db.prepare('INSERT OR REPLACE INTO answers (k, body, at) VALUES (?, ?, ?)').run(k, body, sim.now());
    return { status: 201, body };
  },
};

describe('coverage: what a campaign reached (DESIGN invariant 9)', () => {
  it("a service's declared situation its fault space cannot reach is listed as never reached; one it reaches is counted", async () => {
    registerService('ttl-store.ts', ttlService);
    const arb = serviceCaseArbitrary(ttlService, 'ttl-store.ts');
    const counts: CoverageCounts = {};
    const runs = 150;
    for (let i = 0; i < runs; i++) {
      const c = caseAt(arb, 7, i).value;
      const reached = new Reached();
      await runScenario(c.scenario, { choices: new ListChoice(c.choices), service: ttlService, reached, hashTrace: false });
      countRun(counts, reached);
    }
    const table = coverageOf(situationsOf({ def: ttlService, faults: serviceFaults(ttlService), keySource: 'tool_call', slowAtAnyStep: true }), counts, runs);
    const row = (id: string) => table.rows.find((r) => r.id === id)!;
    expect(row('service:replayed').runs).toBeGreaterThan(0);
    expect(row('service:ttl-expired').runs).toBe(0);
    expect(neverReached(table).map((r) => r.id)).toContain('service:ttl-expired');
    expect(neverReached(table).map((r) => r.id)).not.toContain('service:replayed');
    // The service's own words in the table.
    expect(row('service:ttl-expired').what).toBe('ttl-expired (declared by the service)');
    expect(row('pause@write').what).toBe('a pause at write');
  });

  it('sim.reached with an undeclared label is a ServiceError naming it', async () => {
    const bad: ServiceDefinition = { ...ttlService, name: 'ttl-undeclared', situations: ['replayed'] };
    registerService('ttl-undeclared.ts', bad);
    const c = caseAt(serviceCaseArbitrary(bad, 'ttl-undeclared.ts', 'tool_call', ['loseResponse']), 1, 0).value;
    // Make sure an answer is stored and asked again: a lost answer after the commit, then the retry.
    const s = { ...c.scenario, faults: { ...c.scenario.faults, loseResponseAfterCommit: 1 }, service: { ...c.scenario.service, instances: 1 }, client: { ...c.scenario.client, maxAttempts: 3 } };
    const withExpiry: ServiceDefinition = { ...bad, async handle(req, sim) {
      const r = await ttlService.handle(req, sim);
      if (r.headers?.['idempotent-replay'] === 'true') sim.reached('ttl-expired');
      return r;
    } };
    await expect(runScenario(s, { choices: new ListChoice([]), service: withExpiry, reached: new Reached() })).rejects.toThrow(ServiceError);
    await expect(runScenario(s, { choices: new ListChoice([]), service: withExpiry })).rejects.toThrow(/sim\.reached\('ttl-expired'\), which is not declared in situations \[replayed\]/);
  });

  it('every holding built-in claim reaches every situation of its fault space at the main job\'s run count (npm start)', () => {
    const claims = ['key_atomic-tool_call-holds', 'key_atomic-business-holds', 'key_atomic_unfenced_finish-tool_call-holds'];
    const r = spawnSync(process.execPath, [bin, 'check', ...claims.flatMap((c) => ['--claim', c]), '--json', '--found', tmp('rs-cov-')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ claim: string; coverage: { runs: number; rows: Array<{ id: string; runs: number }> }; neverReached: string[]; bounded: { complete: boolean } }>;
    for (const row of rows) {
      expect(row.bounded.complete, row.claim).toBe(true);
      // Faults at each step, overlaps, preemptions at each step, replay, take-over, recovery, the three spans.
      const ids = row.coverage.rows.map((x) => x.id);
      for (const id of ['crash@after-process', 'pause@respond', 'kill@claim', 'overlap:3', 'preempt@finish', 'replay', 'service:lease-takeover', 'recovery:resubmitted', 'span:1s', 'span:1min', 'span:1h']) expect(ids, row.claim).toContain(id);
      expect(row.neverReached, row.claim).toEqual([]);
    }
  });
});

describe('check --service says what it covered', () => {
  it('a holding service campaign carries its coverage table: the unreachable declared situation is never reached, the reachable one is counted', async () => {
    const { runServiceCampaign } = await import('../service/campaign.js');
    // Its fault space without the key-reuse probe (the service keeps no fingerprint: that would fail, and this test is about coverage).
    const r = await runServiceCampaign({ def: ttlService, module: 'ttl-store.ts', runs: 150, seed: 7, faults: ['loseResponse', 'loseAllAnswers', 'concurrency', 'slow', 'pause', 'longSpans'] });
    expect(r.verdict).toBe('holds');
    expect(r.coverage?.runs).toBe(150);
    const row = (id: string) => r.coverage!.rows.find((x) => x.id === id);
    expect(row('service:replayed')!.runs).toBeGreaterThan(0);
    expect(row('service:ttl-expired')!.runs).toBe(0);
    expect(neverReached(r.coverage!).map((x) => x.id)).toContain('service:ttl-expired');
  }, 120_000);
});

describe('a stored answer replayed, as the service answers it', () => {
  /** ttlService without the `idempotent-replay` header: a service that replays its stored answer as it first sent it. */
  const plain: ServiceDefinition = {
    ...ttlService,
    name: 'ttl-store-plain',
    async handle(req, sim) {
      const r = await ttlService.handle(req, sim);
      return { status: r.status, body: r.body };
    },
  };
  /** Never replays: every request inserts and answers a new id (the naive service). */
  const naive: ServiceDefinition = {
    ...ttlService,
    name: 'ttl-store-naive',
    situations: [],
    async handle(req, sim) {
      await sim.step('write');
      const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(JSON.parse(req.body).run, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
      return { status: 201, body: JSON.stringify({ id }) };
    },
  };
  const count = async (def: ServiceDefinition, id: string) => {
    const arb = serviceCaseArbitrary(def, `${def.name}.ts`, 'tool_call', ['loseResponse', 'loseAllAnswers']);
    registerService(`${def.name}.ts`, def);
    const counts: CoverageCounts = {};
    for (let i = 0; i < 40; i++) {
      const c = caseAt(arb, 3, i).value;
      const reached = new Reached();
      await runScenario(c.scenario, { choices: new ListChoice(c.choices), service: def, reached, hashTrace: false });
      countRun(counts, reached);
    }
    return counts[id] ?? 0;
  };

  it("is counted without the idempotent-replay header: a later 2xx under the key equal to the first one is a replay", async () => {
    const replays = await count(plain, 'replay');
    expect(replays).toBeGreaterThan(0);
    expect(replays).toBe(await count(plain, 'service:replayed'));
  }, 60_000);

  it('is not counted for a service that answers every retry with a new id', async () => {
    expect(await count(naive, 'replay')).toBe(0);
  }, 60_000);
});

describe('a holding verdict on tenant isolation and key reuse says they were tried', () => {
  it('two tenants sending one raw key, and an answered key-reuse probe, are rows of the table, counted', async () => {
    const { runServiceCampaign } = await import('../service/campaign.js');
    const { default: atomic } = await import('../../examples/payments-atomic/service.js');
    const r = await runServiceCampaign({ def: atomic, module: 'examples/payments-atomic/service.ts', runs: 150, seed: 3, faults: ['loseResponse', 'tenants', 'keyReuseProbe'] });
    expect(r.verdict).toBe('holds');
    const row = (id: string) => r.coverage!.rows.find((x) => x.id === id);
    expect(row('tenants:same-key')?.what).toBe('two tenants sending one raw key');
    expect(row('tenants:same-key')!.runs).toBeGreaterThan(0);
    expect(row('key-reuse:probed')?.what).toBe('a key sent again with another body (answered)');
    expect(row('key-reuse:probed')!.runs).toBeGreaterThan(0);
    // Left out of the fault space, they are not rows: nothing to reach.
    const narrow = await runServiceCampaign({ def: atomic, module: 'examples/payments-atomic/service.ts', runs: 20, seed: 3, faults: ['loseResponse'] });
    expect(narrow.coverage!.rows.map((x) => x.id)).not.toContain('tenants:same-key');
    expect(narrow.coverage!.rows.map((x) => x.id)).not.toContain('key-reuse:probed');
  }, 60_000);
});
