// The flakiness lab sends a user's service its own operation, in its own
// words, in every lane. It sent the tracker's bug report ('Pay button does
// nothing', call 'toolu_1') whatever the service: found from the packed
// tarball with a refunds service that validates its note as "refund <n>" —
// every request in every lane answered 500, and the lab said the service
// kept every invariant ("exactly one refund each time", with none made).
import { describe, expect, it } from 'vitest';
import { labScenario, runVirtualTime } from './flaky.js';
import { runCli } from './child.js';
import { registerService } from '../service/registry.js';
import type { ServiceDefinition } from '../service/definition.js';

/** Correct (one transaction claims and writes), but it refuses by throwing a note that is not "refund <n>". */
const refunds: ServiceDefinition = {
  name: 'refunds-strict-note',
  tables: ['refunds', 'keys'],
  setup: (db) => db.exec('CREATE TABLE refunds (id INTEGER PRIMARY KEY, ref TEXT, tenant TEXT); CREATE TABLE keys (k TEXT PRIMARY KEY, answer TEXT)'),
  steps: ['write'],
  operation: { path: '/refunds', body: (op) => JSON.stringify({ ref: op.runId, note: op.title }) },
  effects: { noun: 'refund', of: (db, op) => db.prepare('SELECT id FROM refunds WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(req, sim) {
    const b = JSON.parse(req.body) as { ref: string; note: string };
    if (!/^refund \d+$/.test(b.note)) throw new TypeError(`malformed refund note: ${b.note}`);
    await sim.step('write');
    const k = `${req.headers['x-tenant'] ?? 'default'}/${req.headers['idempotency-key']}`;
    return sim.db.transaction(() => {
      const seen = sim.db.prepare('SELECT answer FROM keys WHERE k = ?').pluck().get(k) as string | undefined;
      if (seen !== undefined) return { status: 201, headers: { 'idempotent-replay': 'true' }, body: seen };
      const id = Number(sim.db.prepare('INSERT INTO refunds (ref, tenant) VALUES (?, ?)').run(b.ref, 'default').lastInsertRowid);
      sim.db.prepare('INSERT INTO keys (k, answer) VALUES (?, ?)').run(k, JSON.stringify({ id }));
      return { status: 201, body: JSON.stringify({ id }) };
    }).immediate();
  },
};

const o = { runs: 3, variant: 'key_split' as const, slowMs: 2, staggerMaxMs: 4, seed: 1, schedulesMax: 50, service: { def: refunds, module: './refunds-strict-note.ts' } };

describe('the flakiness lab speaks the service\'s words', () => {
  it('the simulation lane\'s scenario carries the service\'s operation, "<noun> 1"', () => {
    const op = labScenario(o, 0).operations[0]!;
    expect({ module: op.module, title: op.title }).toEqual({ module: 'refund', title: 'refund 1' });
  });

  it('the virtual-time lane sends it too: every run makes its one refund', async () => {
    registerService(o.service.module, refunds);
    const v = await runVirtualTime(o);
    expect(v.perRun.map((r) => r.reports)).toEqual([1, 1, 1]);
    expect(v.failures).toBe(0);
  });
});

// The closing sentence said "(exactly one effect each time)" whatever the
// schedules left: for a service whose every request threw (0 effects in
// every schedule) too. It now says what they left.
describe('the lab\'s closing sentence says what the schedules left', () => {
  it('a service that throws on every request: none made, not "exactly one each time"', async () => {
    const r = await runCli(['flaky', '--service', 'src/real/fixtures/throws.ts', '--runs', '2', '--stagger-max-ms', '2', '--schedules-max', '20']);
    expect(r.stdout).not.toMatch(/exactly one effect each time/);
    expect(r.stdout).toMatch(/No schedule fails: throws keeps .* on every interleaving explored \(effects left per schedule: 0; where none was made, keeping them says nothing\)\./);
  }, 60_000);
});
