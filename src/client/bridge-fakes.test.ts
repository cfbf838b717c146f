import { describe, expect, it } from 'vitest';
import { runClientScenario, type RetryClient } from './run.js';
import { parseScenario } from '../scenario/load.js';
import { ClientError } from './load.js';

/**
 * What a client's code reads runs on the run's clock and seed, as a
 * service's does (src/sim/fake-timers.ts): the bridge used to fake only the
 * timers, Date, performance, Math.random and crypto.randomUUID. Found with
 * clients from the packed tarball:
 *  - a budget measured with process.hrtime.bigint() read real time (a few ms
 *    per run), so a client that gives up after 8 s never did, and failed
 *    `deadline` it keeps for real;
 *  - setImmediate stayed real, and a client that yields with it a few times
 *    (as queue and stream libraries do) was refused, exit 2, as "waiting on
 *    neither a timer nor a request";
 *  - crypto.subtle.digest (a key hashed with Web Crypto) answered from the
 *    thread pool, refused the same way;
 *  - crypto.getRandomValues (nanoid's source of bytes) drew real randomness:
 *    the same seed sent other keys.
 */
function scenario(faults: object, network: object = {}) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'bridge fakes', seed: 1,
    service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
    faults, network,
    operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
    expect: {},
  }));
}

/** Sends with `keyOf()`'s key (made once), `before()` awaited ahead of each attempt; retries every `waitMs` until `giveUp()` says so. */
function client(name: string, o: { keyOf?: () => Promise<string> | string; before?: () => Promise<void>; giveUp?: () => boolean; waitMs?: number; deadlineMs?: number } = {}): RetryClient {
  return {
    name, deadlineMs: o.deadlineMs ?? 12_000,
    async run(fetch, op) {
      const key = await (o.keyOf ?? (() => crypto.randomUUID()))();
      for (let attempt = 1; attempt <= 20; attempt++) {
        await o.before?.();
        try {
          const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(2000) });
          if (res.ok) return await res.json();
          if (res.status !== 409 && res.status < 500) throw new Error(`HTTP ${res.status}`);
        } catch (e) {
          if ((e as Error).message.startsWith('HTTP')) throw e;
        }
        if (o.giveUp?.()) throw new Error('budget spent');
        await new Promise((r) => setTimeout(r, o.waitMs ?? 100));
      }
      throw new Error('20 attempts');
    },
  };
}

const lost = scenario({ loseResponseAfterCommit: 1 });

describe('a client\'s clock and randomness are the run\'s', () => {
  it('process.hrtime.bigint() and process.hrtime() measure virtual time: a client that gives up after 8 s settles within its 12 s deadline', async () => {
    for (const read of [() => process.hrtime.bigint(), () => { const [s, ns] = process.hrtime(); return BigInt(s) * 1_000_000_000n + BigInt(ns); }]) {
      let start = 0n;
      const c = client('hrtime-budget', { keyOf: () => { start = read(); return crypto.randomUUID(); }, giveUp: () => read() - start > 8_000_000_000n, waitMs: 1000 });
      // Every answer is lost: each attempt fails, a retry every second, until 8 s of virtual time are spent.
      const r = await runClientScenario(scenario({}, { loseResponses: 100 }), c);
      expect(r.workers[0]!.outcome).toBe('rejected');
      expect(r.workers[0]!.error).toBe('Error: budget spent');
      expect(r.workers[0]!.endMs).toBeGreaterThan(8000);
      expect(r.workers[0]!.endMs).toBeLessThanOrEqual(12_000);
      expect(r.violations.map((v) => v.invariant)).not.toContain('deadline');
    }
  });

  it('a client that yields with setImmediate before each attempt runs, and holds', async () => {
    const tick = () => new Promise<void>((r) => setImmediate(r));
    const r = await runClientScenario(lost, client('yields', { before: async () => { for (let i = 0; i < 5; i++) await tick(); } }));
    expect(r.workers[0]!.sent).toHaveLength(2);
    expect(r.violations).toEqual([]);
  });

  it('a key hashed with crypto.subtle.digest runs, and holds', async () => {
    // Hashed ten times over (a key stretched, or a body and a secret hashed in turn): each digest a thread-pool round trip when real.
    const keyOf = async () => {
      let h: ArrayBuffer = new TextEncoder().encode('order-1').buffer as ArrayBuffer;
      for (let i = 0; i < 10; i++) h = await crypto.subtle.digest('SHA-256', h);
      return Buffer.from(h).toString('hex').slice(0, 32);
    };
    const r = await runClientScenario(lost, client('subtle-key', { keyOf }));
    expect(r.workers[0]!.sent.map((q) => q.key)).toEqual(Array(2).fill((await keyOf()) as string));
    expect(r.violations).toEqual([]);
  });

  it('a key from crypto.getRandomValues is drawn from the run\'s seed: the same scenario sends the same key', async () => {
    const keyOf = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex');
    const keys = async () => (await runClientScenario(lost, client('grv-key', { keyOf }))).workers[0]!.sent.map((q) => q.key);
    const a = await keys();
    expect(a).toHaveLength(2);
    expect(await keys()).toEqual(a);
  });

  it('a client waiting on a promise nobody resolves is still refused in one line', async () => {
    await expect(runClientScenario(lost, client('never', { before: () => new Promise(() => {}) }))).rejects.toThrow(ClientError);
  });
});
