import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDirs } from '../../testing/temp-dirs.js';
import { parseScenario } from '../../scenario/load.js';
import { runClientScenario, type RetryClient } from '../../client/run.js';
import { observeRun } from './stepper-data.js';
import type { StepperData } from './stepper-types.js';
import { runMain } from '../../testing/cli.js';
import type { ServiceDefinition } from '../../service/definition.js';
import { hammerClient } from '../../client/fixtures/hammer-client.js';

/**
 * Pages for a user's retry client: `check --client … --html DIR` and
 * `replay --client … FILE --html OUT` draw the client's own run (its
 * requests, its waits on virtual time, the answers, the faults and the
 * client check it breaks), not the built-in harness's.
 */

const tmp = tempDirs();
const CLIENT = 'examples/fetch-retry-client/client.ts';

const cli = (...args: string[]) => runMain(args);
afterEach(() => vi.restoreAllMocks());

function dataOf(file: string): StepperData {
  const m = /<script type="application\/json" id="retrysim-data">(.*?)<\/script>/s.exec(readFileSync(file, 'utf8'));
  return JSON.parse(m![1]!) as StepperData;
}

describe('stepper pages for a user retry client', () => {
  it('check --client --html draws the buggy client\'s run: its waits, its keys, stable-key pinned to the retry that changed the key; replay --html draws the same run', async () => {
    const found = tmp('rs-cpage-found-');
    const dir = tmp('rs-cpage-html-');
    const r = await cli('check', '--client', CLIENT, '--service', 'examples/correct-with-progress/service.ts', '--runs', '50', '--found', found, '--html', dir, '--expect', 'fails', '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { counterexample: string; violations: string[] };
    expect(j.violations).toContain('stable-key');
    const page = readdirSync(dir).find((f) => f !== 'index.html')!;
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).toContain(`href="${encodeURIComponent(page)}"`);
    const d = dataOf(join(dir, page));
    // The client's own words: its name, the service's noun and path; no harness plumbing, no tracker vocabulary.
    expect(d.keySource).toBe("retry client 'fetch-retry-client'");
    expect(d.noun).toBe('order');
    expect(d.steps.some((s) => /^(clients|.+\.fetch\d+)$/.test(s.actor))).toBe(false);
    expect(d.steps.filter((s) => s.kind === 'request').every((s) => s.text.includes('POST /orders'))).toBe(true);
    expect(JSON.stringify(d)).not.toMatch(/report_id|tool call/);
    // The call starts, waits on virtual time between attempts, and settles.
    const mine = d.steps.filter((s) => s.actor === 'op1.w0' && s.kind === 'worker');
    expect(mine[0]!.text).toBe("op1.w0 starts: client 'fetch-retry-client' runs the operation");
    expect(mine.some((s) => /^op1\.w0 waits [\d.]+ m?s on virtual time after its previous request ended in .+, then sends again$/.test(s.text))).toBe(true);
    expect(mine[mine.length - 1]!.text).toMatch(/^op1\.w0: the client's call (resolves|rejects .*) after \d+ requests?, /);
    // Every step in time order.
    expect(d.steps.every((s, i) => i === 0 || s.t >= d.steps[i - 1]!.t)).toBe(true);
    // stable-key breaks at the request that carries the second key.
    const v = d.violations.find((x) => x.invariant === 'stable-key')!;
    const at = d.steps[v.step]!;
    expect(at.kind).toBe('request');
    const firstKey = /key (\S+)$/.exec(d.steps.find((s) => s.kind === 'request')!.text)![1];
    expect(at.text).not.toContain(firstKey);
    expect(v.why).toMatch(/^op1\.w0 retries here with Idempotency-Key \S+, not the \S+ it sent first/);
    expect(d.summary[1]).toBe(`stable-key breaks at step ${v.step + 1}: ${v.why}.`);
    // replay --client --html: the same run (trace hash) as the page check wrote and as the replay prints.
    const out = join(tmp('rs-cpage-replay-'), 'run.html');
    const rep = await cli('replay', j.counterexample, '--html', out, '--json');
    expect(rep.code).toBe(0);
    const rj = JSON.parse(rep.out) as { traceHash: string; expectMet: boolean };
    expect(rj.expectMet).toBe(true);
    expect(dataOf(out).traceHash).toBe(rj.traceHash);
    expect(d.traceHash).toBe(rj.traceHash);
    // The page's reproduce line names both modules, as the replay's first line does (a file's modules run only from inside this directory).
    expect(dataOf(out).replay).toBe(`retrysim replay --client ${CLIENT} --service examples/correct-with-progress/service.ts ${j.counterexample} --trace`);
  }, 30_000);

  it('a client that retries a 422 breaks non-retryable at its second request; the wait says what answer it waited after', async () => {
    const retryAll: RetryClient = {
      name: 'retry-everything',
      deadlineMs: 12_000,
      async run(fetch, op) {
        const key = 'k-1';
        for (let attempt = 1; attempt <= 3; attempt++) {
          const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body });
          if (res.ok) return res.status;
          await new Promise((r) => setTimeout(r, 250));
        }
        throw new Error('gave up');
      },
    };
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'front end answers 422', seed: 1,
      service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
      network: { answer: { status: 422, count: 1 } },
      operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
      expect: {},
    }));
    const { data, run } = await observeRun(s, {}, undefined, (observe) => runClientScenario(s, retryAll, { observe }), { name: retryAll.name, workers: (r) => r.workers });
    expect(run.violations.map((v) => v.invariant)).toEqual(['non-retryable']);
    const v = data.violations[0]!;
    const second = run.workers[0]!.sent[1]!;
    expect(data.steps[v.step]).toMatchObject({ kind: 'request', t: second.atMs });
    expect(data.steps[v.step]!.text).toMatch(/^#2 POST /);
    expect(v.why).toBe('op1.w0 sends the operation again here, after an answer that says retrying cannot help');
    expect(data.steps[v.step - 1]!.text).toMatch(/^op1\.w0 waits 2\d\d(\.\d)? ms on virtual time after its previous request ended in HTTP 422, then sends again$/);
    // Observing changes nothing: the same trace as an unobserved run.
    expect(data.traceHash).toBe((await runClientScenario(s, retryAll)).result.traceHash);
  });

  it('backoff is pinned to the last retry sent without waiting, after a step that says it waited 0 ms', async () => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'front end answers 503 three times', seed: 1,
      service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
      network: { answer: { status: 503, count: 3 } },
      operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
      expect: {},
    }));
    const { data, run } = await observeRun(s, {}, undefined, (observe) => runClientScenario(s, hammerClient, { observe }), { name: hammerClient.name, workers: (r) => r.workers });
    expect(run.violations.map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after 503 answers without waiting: attempts at t=2, 4, 6 ms']);
    const v = data.violations[0]!;
    expect(data.steps[v.step]).toMatchObject({ kind: 'request', t: run.workers[0]!.sent[3]!.atMs });
    expect(data.steps[v.step]!.text).toMatch(/^#4 POST /);
    expect(v.why).toBe('op1.w0 retries here at the instant its previous attempt failed, again without waiting: 3 retries, none backed off');
    expect(data.steps[v.step - 1]!.text).toBe('op1.w0 waits 0 ms on virtual time after its previous request ended in HTTP 503, then sends again');
  });

  it('retry-after on an HTTP-date is pinned to the request sent too early, not to the end (its detail names the date\'s instant last)', async () => {
    // A service that sheds the first request with `Retry-After: <HTTP-date>` 3 s ahead; a client that reads only numbers.
    const shedding: ServiceDefinition = {
      name: 'shedding', tables: ['orders'],
      setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT NOT NULL)'),
      steps: ['work'],
      operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }) },
      effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ?').pluck().all(op.runId) as number[] },
      async handle(req, sim) {
        await sim.step('work');
        if ((sim.db.prepare('SELECT count(*) FROM orders').pluck().get() as number) === 0 && req.headers['x-first'] === '1') {
          return { status: 503, headers: { 'retry-after': new Date(sim.now() + 3000).toUTCString() }, body: '{}' }; // real-time: allowed (the service's Date, on the kernel clock)
        }
        const id = Number(sim.db.prepare('INSERT INTO orders (ref) VALUES (?)').run((JSON.parse(req.body) as { ref: string }).ref).lastInsertRowid);
        return { status: 201, body: JSON.stringify({ id }) };
      },
    };
    const numbersOnly: RetryClient = {
      name: 'numbers-only', deadlineMs: 12_000,
      async run(fetch, op) {
        for (let attempt = 1; attempt <= 2; attempt++) {
          const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': 'k-1', 'x-first': String(attempt) }, body: op.body });
          if (res.ok) return res.status;
          const ra = Number(res.headers.get('retry-after'));
          await new Promise((r) => setTimeout(r, ra > 0 ? ra * 1000 : 100));
        }
        throw new Error('gave up');
      },
    };
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'shed with a date', seed: 1,
      service: { module: 'shedding' }, client: { keySource: 'tool_call' },
      operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
      expect: {},
    }));
    const { data, run } = await observeRun(s, {}, shedding, (observe) => runClientScenario(s, numbersOnly, { observe, service: shedding }), { name: numbersOnly.name, workers: (r) => r.workers });
    expect(run.violations.map((v) => v.invariant)).toEqual(['retry-after']);
    const v = data.violations[0]!;
    expect(data.steps[v.step]).toMatchObject({ kind: 'request', t: run.workers[0]!.sent[1]!.atMs });
    expect(v.why).toBe('op1.w0 sends again here, before the wait Retry-After asked for is over');
  });
});
