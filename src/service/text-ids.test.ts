/**
 * A service whose effects have text ids (UUIDs) is judged as one with
 * INTEGER ids is: the answer's `{"id":"<uuid>"}` is read by default, and the
 * checks that compare ids (id-exists, tenant-isolation) judge it — before,
 * the default resultId read numbers only, and a 201 naming a UUID nobody
 * stored passed for want of an id to check.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServiceDefinition } from './definition.js';
import { runServiceCampaign } from './campaign.js';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { uuidOrders } from './fixtures/uuid-orders.js';
import { runScenario } from '../scenario/run.js';
import { parseScenario } from '../scenario/load.js';
import { SCENARIO_FORMAT } from '../scenario/schema.js';
import { ServiceError } from './errors.js';
import { fc, replayable, runServiceCase, serviceCases, test } from '../vitest.js';

const tmp = tempDirs();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const fixture = (bug?: string) => `src/service/fixtures/uuid-orders${bug === undefined ? '' : `-${bug}`}.ts`;

/** `check --service MODULE --json`, parsed, with its exit code. */
async function check(module: string, found: string, extra: string[] = []): Promise<{ code: number; json: Record<string, unknown>; err: string }> {
  const r = await runMain(['check', '--service', module, '--runs', '300', '--seed', '1', '--found', found, '--json', ...extra]);
  return { code: r.code, json: JSON.parse(r.out) as Record<string, unknown>, err: r.err };
}

describe('a UUID-keyed service, checked end to end', () => {
  it('the correct one holds under lost answers, crashes, kills and concurrent duplicates (every situation of its fault space reached)', async () => {
    const r = await check(fixture(), tmp('rs-uuid-'));
    expect(r.code, r.err).toBe(0);
    expect(r.json).toMatchObject({ verdict: 'holds', runs: 300, neverReached: [] });
    const reached = Object.fromEntries((r.json.coverage as { rows: Array<{ id: string; runs: number }> }).rows.map((x) => [x.id, x.runs]));
    for (const id of ['lose-after-commit', 'answer-lost', 'crash@before-write', 'kill@write', 'kill@answer', 'overlap:2', 'overlap:3', 'replay', 'recovery:resubmitted']) {
      expect(reached[id], id).toBeGreaterThan(0);
    }
  });

  it('answering a replayed key with a fresh randomUUID() fails id-exists — 1 op, 1 worker, a lost answer — and the file replays (exit 0, same verdict)', async () => {
    const found = tmp('rs-uuid-');
    const r = await check(fixture('fresh-id-on-replay'), found, ['--html', join(found, 'pages')]);
    expect(r.code, r.err).toBe(1);
    expect(r.json).toMatchObject({ verdict: 'fails', violations: ['id-exists'], preemptionsMinimal: true, shrunkSize: { operations: 1, workers: 1, faults: 1, preemptions: 0 } });
    const file = r.json.counterexample as string;
    const replay = await runMain(['replay', '--service', fixture('fresh-id-on-replay'), file, '--json']);
    expect(replay.code, replay.err).toBe(0);
    const out = JSON.parse(replay.out) as { violations: Array<{ invariant: string; detail: string }> };
    expect(out.violations.map((v) => v.invariant)).toEqual(['id-exists']);
    // The id is named as the text it is, quoted as keys and tenants are.
    const id = /was given order id '([^']+)', which does not exist$/.exec(out.violations[0]!.detail)?.[1];
    expect(id).toMatch(UUID);
    // The trace and the attempts list of `replay --trace` carry the id as text.
    const text = await runMain(['replay', '--service', fixture('fresh-id-on-replay'), file, '--trace']);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(`op1.w0         result success {"calls":1,"orderId":"${id}","replay":true}`);
    expect(text.out).toMatch(new RegExp(`call-1#2 t=[\\d.]+→[\\d.]+ ms key=run-1:call-1 HTTP 201 order_id=${id} \\(replay\\)`));
    // The stepper page shows the text id, and pins the violation on the answer that carried it (not "the end state").
    const pages = join(found, 'pages');
    const page = readFileSync(join(pages, readdirSync(pages).find((f) => f.startsWith('uuid-orders-fresh-id-on-replay-id-exists-'))!), 'utf8');
    expect(page).toContain(`op1's client is handed order '${id}' here`);
    expect(page).toContain(`answers 201 {\\"id\\":\\"${id}\\"}`);
  });

  it("answering another tenant's order (a lookup by ref without the tenant) fails tenant-isolation, and the file replays", async () => {
    const found = tmp('rs-uuid-');
    const r = await check(fixture('other-tenant-id'), found, ['--html', join(found, 'pages')]);
    expect(r.code, r.err).toBe(1);
    expect(r.json).toMatchObject({ verdict: 'fails', violations: ['tenant-isolation'], shrunkSize: { operations: 2, faults: 0, preemptions: 0 } });
    const replay = await runMain(['replay', '--service', fixture('other-tenant-id'), r.json.counterexample as string, '--json']);
    expect(replay.code, replay.err).toBe(0);
    const v = (JSON.parse(replay.out) as { violations: Array<{ invariant: string; detail: string }> }).violations;
    expect(v.map((x) => x.invariant)).toEqual(['tenant-isolation']);
    expect(v[0]!.detail).toMatch(/^tenant 'globex' received order '[0-9a-f-]{36}' of tenant 'default'$/);
    const pages = join(found, 'pages');
    const page = readFileSync(join(pages, readdirSync(pages).find((f) => f.includes('-tenant-isolation-'))!), 'utf8');
    expect(page).toMatch(/'s client is handed order '[0-9a-f-]{36}' here/);
  });

  it('check-then-act fails exactly-one as its INTEGER-keyed twin does: the same run, the same minimal case, the ids quoted', async () => {
    const text = await runServiceCampaign({ def: uuidOrders({ bug: 'check-then-act' }), runs: 300, seed: 1, foundDir: tmp('rs-uuid-') });
    const integer = await runServiceCampaign({ def: uuidOrders({ bug: 'check-then-act', ids: 'integer' }), runs: 300, seed: 1, foundDir: tmp('rs-uuid-') });
    expect(text.verdict).toBe('fails');
    expect(integer.verdict).toBe('fails');
    expect(text.firstFailureRun).toBe(integer.firstFailureRun);
    expect(text.counterexample!.size).toEqual(integer.counterexample!.size);
    expect(text.counterexample!.size).toMatchObject({ operations: 1, workers: 2, faults: 0, preemptions: 1 });
    expect(text.counterexample!.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(integer.counterexample!.violations.map((v) => v.detail)).toEqual(['2 orders (ids 1, 2) for one logical operation']);
    expect(text.counterexample!.violations[0]!.detail).toMatch(/^2 orders \(ids '[0-9a-f-]{36}', '[0-9a-f-]{36}'\) for one logical operation$/);
  });
});

/** One operation, one worker, its first answer lost after the commit: the retry is a replay. */
const lostOnce = (module: string) => parseScenario(JSON.stringify({
  format: SCENARIO_FORMAT, name: 'lost-once', seed: 7, service: { module, instances: 2 },
  client: { keySource: 'tool_call', maxAttempts: 3, timeoutMs: 2000 },
  faults: { loseResponseAfterCommit: 1 },
  operations: [{ id: 'op1', runId: 'run-1', module: 'm', title: 't', steps: '', workers: 2 }], expect: {},
}));

describe("a service's randomUUID() in a run is the run's seed", () => {
  it('the same scenario gives the same UUIDs and trace twice; the ids are v4-shaped and distinct', async () => {
    const def = uuidOrders();
    const a = await runScenario(lostOnce(def.name), { service: def, keepTrace: true });
    const b = await runScenario(lostOnce(def.name), { service: def, keepTrace: true });
    expect(a.violations).toEqual([]);
    expect(a.result.traceHash).toBe(b.result.traceHash);
    const ids = (r: typeof a) => r.operations.flatMap((o) => o.attempts.flatMap((x) => (x.reportId === undefined ? [] : [x.reportId])));
    expect(ids(a)).toEqual(ids(b));
    expect(ids(a).length).toBeGreaterThan(0);
    for (const id of ids(a)) expect(id).toMatch(UUID);
  });
});

/** A minimal service on text ids; `tweak` replaces parts of its definition. */
function tiny(tweak: (d: ServiceDefinition) => ServiceDefinition, answer = (id: string) => JSON.stringify({ id })): ServiceDefinition {
  const base: ServiceDefinition = {
    name: 'tiny-text',
    tables: ['things'],
    setup: (db) => db.exec('CREATE TABLE things (id TEXT PRIMARY KEY, ref TEXT NOT NULL, tenant TEXT NOT NULL)'),
    steps: ['write'],
    operation: { path: '/things', body: (op) => JSON.stringify({ ref: op.runId, title: op.title }) },
    effects: {
      noun: 'thing',
      of: (db, op) => db.prepare('SELECT id FROM things WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as string[],
      owner: (db, id) => db.prepare('SELECT ref AS runId, tenant FROM things WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    },
    async handle(req, sim) {
      await sim.step('write');
      const ref = (JSON.parse(req.body) as { ref: string }).ref;
      const id = `thing_${ref}`;
      sim.db.prepare('INSERT OR IGNORE INTO things (id, ref, tenant) VALUES (?, ?, ?)').run(id, ref, req.headers['x-tenant'] ?? 'default');
      return { status: 201, body: answer(id) };
    },
  };
  return tweak(base);
}

const once = (def: ServiceDefinition) => runScenario(parseScenario(JSON.stringify({
  format: SCENARIO_FORMAT, name: 'once', seed: 1, service: { module: def.name },
  client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 2000 },
  operations: [{ id: 'op1', runId: 'run-1', module: 'm', title: 't', steps: '', workers: 1 }], expect: {},
})), { service: def });

async function serviceError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError) return e.message;
    throw e;
  }
  throw new Error('no ServiceError');
}

describe('what a definition returns for ids is checked, one line naming the function and the value', () => {
  it('a text id answered and stored holds; one it never stored fails id-exists with the id quoted', async () => {
    expect((await once(tiny((d) => d))).violations).toEqual([]);
    const phantom = await once(tiny((d) => d, () => '{"id":"thing_nowhere"}'));
    expect(phantom.violations).toEqual([{ invariant: 'id-exists', op: 'op1', detail: "op1.w0's attempt call-1#1 was given thing id 'thing_nowhere', which does not exist" }]);
  });

  it('an INTEGER key answered as a JSON string ({"id":"7"}) is the row it names, not a missing one', async () => {
    const numeric = tiny((d) => ({
      ...d,
      setup: (db) => db.exec('CREATE TABLE things (id INTEGER PRIMARY KEY, ref TEXT NOT NULL, tenant TEXT NOT NULL)'),
      effects: { ...d.effects, of: (db, op) => db.prepare('SELECT id FROM things WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
      async handle(req, sim) {
        await sim.step('write');
        const id = Number(sim.db.prepare('INSERT INTO things (ref, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { ref: string }).ref, 'default').lastInsertRowid);
        return { status: 201, body: JSON.stringify({ id: String(id) }) };
      },
    }));
    const r = await once(numeric);
    expect(r.operations[0]!.attempts[0]!.reportId).toBe('1');
    expect(r.violations).toEqual([]);
  });

  it('the default resultId reads no empty string: {"id":""} acknowledges nothing', async () => {
    const r = await once(tiny((d) => d, () => '{"id":""}'));
    expect(r.operations[0]!.attempts[0]!.reportId).toBeUndefined();
  });

  it('effects.of with a null among its ids', async () => {
    const m = await serviceError(once(tiny((d) => ({ ...d, effects: { ...d.effects, of: () => ['thing_run-1', null] as unknown as string[] } }))));
    expect(m).toBe(`service 'tiny-text': effects.of must return an array of ids (numbers or non-empty strings), got null at index 1 of ["thing_run-1",null] for operation run-1 of tenant 'default'`);
  });

  it('effects.of with rows instead of ids (a SELECT id … .all() without .pluck()) says so', async () => {
    // A newcomer's first effects.of: the rows, {id: …} each. The line named the value and stopped there.
    const m = await serviceError(once(tiny((d) => ({ ...d, effects: { ...d.effects, of: () => [{ id: 'thing_run-1' }] as unknown as string[] } }))));
    expect(m).toBe(`service 'tiny-text': effects.of must return an array of ids (numbers or non-empty strings), got {"id":"thing_run-1"} (a row, not its id: return the id itself, e.g. with better-sqlite3's .pluck()) at index 0 of [{"id":"thing_run-1"}] for operation run-1 of tenant 'default'`);
  });

  it('effects.of with a bigint (better-sqlite3 safeIntegers) says what to return instead', async () => {
    const m = await serviceError(once(tiny((d) => ({ ...d, effects: { ...d.effects, of: () => [1n] as unknown as number[] } }))));
    expect(m).toMatch(/^service 'tiny-text': effects\.of must return an array of ids \(numbers or non-empty strings\), got the bigint 1n \(a better-sqlite3 safeIntegers read: return Number\(id\) or String\(id\)\) at index 0/);
  });

  it('an async effects.of (a query builder awaited) says it must return the ids, not a Promise; a rejection of it is not left unhandled', async () => {
    // Until 2026-12: "got {}".
    const m = await serviceError(once(tiny((d) => ({ ...d, effects: { ...d.effects, of: async () => Promise.resolve(['thing_run-1']) } as unknown as typeof d.effects }))));
    expect(m).toBe(`service 'tiny-text': effects.of must return an array of ids (numbers or non-empty strings), got a Promise (an async function's result): it is called synchronously and must return the value itself — on the simulation's database (better-sqlite3) .prepare(…).all() and .get() are synchronous, where an async query builder's execute() is not`);
    const unhandled: unknown[] = [];
    const note = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', note);
    try {
      const r = await serviceError(once(tiny((d) => ({ ...d, effects: { ...d.effects, of: async () => Promise.reject(new Error('no such table')) } as unknown as typeof d.effects }))));
      expect(r).toContain('got a Promise');
      await new Promise((res) => setTimeout(res, 20)); // real-time: allowed (test: lets Node report an unhandled rejection)
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(unhandled).toEqual([]);
  });

  it('effects.owner returning something other than { runId, tenant }', async () => {
    const m = await serviceError(once(tiny((d) => ({ ...d, effects: { ...d.effects, owner: () => 'run-1' as unknown as undefined } }), () => '{"id":"thing_nowhere"}')));
    expect(m).toBe(`service 'tiny-text': effects.owner must return { runId, tenant } (strings) or undefined when no effect has the id, got "run-1" for id "thing_nowhere"`);
  });

  it('operation.resultId returning an object, or an empty string', async () => {
    const obj = await serviceError(once(tiny((d) => ({ ...d, operation: { ...d.operation, resultId: (b: string) => JSON.parse(b) as string } }))));
    expect(obj).toBe(`service 'tiny-text': operation.resultId must return the acknowledged effect's id (a number or a non-empty string) or undefined when the answer names none, got {"id":"thing_run-1"} for the answer "{\\"id\\":\\"thing_run-1\\"}" with headers {"x-instance":"s0"}`);
    const empty = await serviceError(once(tiny((d) => ({ ...d, operation: { ...d.operation, resultId: () => '' } }))));
    expect(empty).toMatch(/^service 'tiny-text': operation\.resultId must return .*, got an empty string for the answer/);
  });
});

describe('the vitest helper on the UUID service', () => {
  const correct = uuidOrders();
  const freshId = uuidOrders({ bug: 'fresh-id-on-replay' });

  // As the README's property is written, on the correct service: it holds.
  test.prop([serviceCases(correct, { module: fixture() })], { ...replayable(correct, { module: fixture(), foundDir: tmp('rs-uuid-vitest-') }), numRuns: 200, seed: 1 })(
    'every order of the UUID service is made exactly once and every answered id is its own',
    async (c) => {
      const run = await runServiceCase(correct, c);
      expect(run.violations).toEqual([]);
    },
    60_000,
  );

  it('on the fresh-id bug: one minimised counterexample on id-exists, written, naming the UUID, and its replay command exits 0', async () => {
    const found = tmp('rs-uuid-vitest-');
    const module = fixture('fresh-id-on-replay');
    const prop = fc.asyncProperty(serviceCases(freshId, { module }), async (c) => (await runServiceCase(freshId, c)).violations.length === 0);
    let msg = '';
    try {
      await fc.assert(prop, { ...replayable(freshId, { module, foundDir: found }), numRuns: 200, seed: 1 });
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg.match(/minimised counterexample/g)).toHaveLength(1);
    expect(msg).toMatch(/id-exists .*was given order id '[0-9a-f-]{36}', which does not exist/);
    expect(msg).toContain('1 op, 1 worker, 1 fault,');
    const cmd = /replay: (retrysim replay .*)$/m.exec(msg)![1]!;
    expect(cmd).toContain(`--service ${module} ${found}`);
    const r = await runMain([...cmd.split(' ').slice(1), '--json']);
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as { violations: Array<{ invariant: string }> }).violations.map((v) => v.invariant)).toEqual(['id-exists']);
  }, 60_000);
});
