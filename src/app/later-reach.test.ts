import { describe, expect, it } from 'vitest';
import { parseScenario, ScenarioError } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from '../service/campaign.js';
import type { ServiceDefinition } from '../service/definition.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

/**
 * A hand-written idempotency layer that frees the key when the request
 * fails: claim (`SET NX`), then the order (`INCR`, `SET`), then the stored
 * answer (`SET`). The bug: an error after the order was written — the
 * answer to its `SET` lost on the way back from the store — deletes the
 * claim, and the retry makes a second order. Only the request's *second*
 * `SET` shows it: striking the first (the claim) is harmless.
 */
const freesKeyOnError = (free = true): AppDescriptor => ({
  name: 'frees-key-on-error',
  app: ({ redis }) => async (req, res) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const order = (JSON.parse(body) as { order: string }).order;
    const tenant = String(req.headers['x-tenant'] ?? 'default');
    const slot = `idem:${tenant}:${String(req.headers['idempotency-key'])}`;
    // A duplicate (its claim refused) frees nothing: freeing the first request's claim on a lost answer at its GET is another bug, which a campaign finds at a first reach.
    let duplicate = false;
    try {
      if ((await redis.set(slot, 'pending', { NX: true })) === null) {
        duplicate = true;
        const v = await redis.get(slot);
        res.statusCode = v === 'pending' ? 409 : 201;
        res.end(v === 'pending' ? '{"error":"in progress"}' : v);
        return;
      }
      const id = await redis.incr('seq');
      await redis.set(`order:${id}`, JSON.stringify([tenant, order]));
      const answer = JSON.stringify({ id });
      await redis.set(slot, answer);
      res.statusCode = 201;
      res.end(answer);
    } catch {
      if (free && !duplicate) await redis.del(slot);
      res.statusCode = 500;
      res.end('{"error":"internal"}');
    }
  },
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
  effects: { noun: 'order', of: (kv, op) => kv.scan('order:').filter(([, v]) => v === JSON.stringify([op.tenant, op.runId])).map(([k]) => Number(k.slice('order:'.length))) },
});

function lostAnswerAt(nth: number | undefined): ReturnType<typeof parseScenario> {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'lost answer', seed: 1, service: { module: 'frees-key-on-error', instances: 1 },
    client: { keySource: 'tool_call', maxAttempts: 3 },
    faults: { crashMidRequest: 1, crashAt: 'kv.set: answer lost', ...(nth === undefined ? {} : { crashAtNth: nth }) },
    operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
  }));
}

describe('faults at a later reach of a step in one request (crashAtNth, pause.nth, kill.nth)', () => {
  const def = appService(freesKeyOnError());

  it('the first reach of kv.set (the claim) is harmless; the second (the order) makes a second order', async () => {
    const first = await runScenario(lostAnswerAt(undefined), { service: def, keepTrace: true });
    expect(first.violations).toEqual([]);
    expect(first.reports.op1).toBe(1);
    const second = await runScenario(lostAnswerAt(2), { service: def, keepTrace: true });
    expect(second.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(second.reports.op1).toBe(2);
    expect(second.trace.join('\n')).toMatch(/crash at 'kv\.set: answer lost' \(its 2nd reach in this request\)/);
    // The third (the stored answer): the key is freed after the order, the same story.
    expect((await runScenario(lostAnswerAt(3), { service: def })).reports.op1).toBe(2);
  });

  it('the campaign finds it (it read "holds" when only first reaches were struck), with the fault in the file', async () => {
    // Lost answers only (a kill after the order frees nothing but still makes a second order: another path to the same failure).
    const r = await runServiceCampaign({ def, module: 'frees-key-on-error', runs: 300, seed: 1, faults: ['crash', 'loseResponse', 'concurrency'] });
    expect(r.verdict).toBe('fails');
    const cx = r.counterexample!;
    expect(cx.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(cx.scenario.faults.crashAtNth).toBeGreaterThan(1);
    // The same app keeping the claim on an error (its retries wait, nothing is made twice) holds, and its coverage counts the later reaches struck.
    const kept = await runServiceCampaign({ def: appService(freesKeyOnError(false)), module: 'frees-key-on-error', runs: 150, seed: 1 });
    expect(kept.verdict, JSON.stringify(kept.counterexample?.violations)).toBe('holds');
    expect(kept.coverage?.rows.find((x) => x.id === 'fault:later-reach')?.runs ?? 0).toBeGreaterThan(0);
  }, 120_000);

  it('pause.nth and kill.nth strike the n-th reach of their step', async () => {
    const twice: ServiceDefinition = {
      name: 'twice',
      tables: ['effects'],
      setup: (db) => db.exec('CREATE TABLE effects (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, tenant TEXT NOT NULL)'),
      steps: ['write'],
      operation: { path: '/e', body: (op) => JSON.stringify({ runId: op.runId }) },
      effects: { of: (db, op) => db.prepare('SELECT id FROM effects WHERE run_id = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
      async handle(req, sim) {
        await sim.step('write');
        await sim.step('write');
        const id = Number(sim.db.prepare('INSERT INTO effects (run_id, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { runId: string }).runId, 'default').lastInsertRowid);
        return { status: 201, body: JSON.stringify({ id }) };
      },
    };
    const file = (faults: object) => parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'twice', seed: 1, service: { module: 'twice', instances: 1 },
      client: { keySource: 'tool_call', maxAttempts: 1 }, faults,
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
    }));
    const pause = await runScenario(file({ pause: { atStep: 'write', ms: 50, nth: 2 } }), { service: twice, keepTrace: true });
    expect(pause.trace.join('\n')).toMatch(/paused 50 ms at step 'write' \(its 2nd reach in this request\)/);
    expect((await runScenario(file({ pause: { atStep: 'write', ms: 50, nth: 3 } }), { service: twice, keepTrace: true })).trace.join('\n')).not.toMatch(/paused/);
    const killAt = (nth: number) => runScenario(file({ kill: { atStep: 'write', nth, restartAfterMs: 5 } }), { service: twice, keepTrace: true });
    expect((await killAt(2)).trace.join('\n')).toMatch(/ kill /);
    expect((await killAt(3)).trace.join('\n')).not.toMatch(/ kill /);
  });

  it('a file with crashAtNth but no crashAt, or kill.nth without atStep, is refused by path', () => {
    const bad = (faults: object) => () => lostAnswerAtWith(faults);
    expect(bad({ crashMidRequest: 1, crashAtNth: 2 })).toThrow(/faults\.crashAtNth/);
    expect(bad({ kill: { atMs: 5, nth: 2 } })).toThrow(/faults\.kill\.nth/);
    expect(bad({ kill: { atMs: 5, nth: 2 } })).toThrow(ScenarioError);
  });
});

function lostAnswerAtWith(faults: object): void {
  const s = parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'x', seed: 1, service: { module: 'frees-key-on-error', instances: 1 },
    client: { keySource: 'tool_call' }, faults, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
  }));
  void s;
}

describe('bounded-exhaustive small scenarios of a hosted app', () => {
  it('include the answer lost at a store command\'s 2nd reach: --explore exhaustive finds the freed key', async () => {
    const r = await runServiceCampaign({ def: appService(freesKeyOnError()), module: 'frees-key-on-error', runs: 2000, seed: 1, faults: ['crash'], explore: 'exhaustive' });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.scenario.faults.crashAtNth).toBe(2);
    const kept = await runServiceCampaign({ def: appService(freesKeyOnError(false)), module: 'frees-key-on-error', runs: 2000, seed: 1, faults: ['crash'], explore: 'exhaustive' });
    expect(kept.verdict).toBe('holds');
  }, 120_000);
});
