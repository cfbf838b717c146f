// A user's retry client lives in the present, as its services and apps do:
// its Date reads client.epochMs (2026-01-01 for every newly found file) plus
// virtual time, its module's top level included; performance.now and
// process.hrtime stay relative. Before, Date.now() was 0 at t = 0: a client
// that tests a timestamp for truthiness (`if (!firstSentAt)`) took a send at
// t = 0 for none, and was judged on a clock no production client has.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { parseScenario } from '../scenario/load.js';
import { scenarioSchema } from '../scenario/schema.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { runClientScenario, type RetryClient } from './run.js';
import { clientCaseArbitrary, runClientCampaign } from './campaign.js';
import { clientSmallScenarios } from './small.js';
import { freshClientLoader, loadClient } from './load.js';
import { clientLabScenario } from '../real/flaky-client.js';
import * as broken from '../service/fixtures/broken.js';

const tmp = tempDirs();
afterEach(() => vi.unstubAllEnvs());

/** One payment, one lost answer after the commit: the retry must carry the same key. */
function lostAnswer(client: object = {}, service: object = { variant: 'key_atomic' }) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'one lost answer', seed: 1,
    service, client: { keySource: 'tool_call', ...client },
    faults: { loseResponseAfterCommit: 1 },
    operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
    expect: {},
  }));
}

/**
 * A key valid for a minute from its first send, as a lease: renewed when
 * there is none yet — `if (!firstSentAt)`, a timestamp tested for truth.
 * In production the first send's time is never 0, so every retry carries the
 * one key; on a 1970 clock a send at t = 0 reads as "none yet".
 */
const leased: RetryClient = {
  name: 'leased-key',
  deadlineMs: 20_000,
  async run(fetch, op) {
    let firstSentAt = 0;
    let key = '';
    for (let attempt = 1; ; attempt++) {
      const now = Date.now(); // real-time: allowed (user client code; the bridge's clock)
      if (!firstSentAt || now - firstSentAt > 60_000) {
        firstSentAt = now;
        key = crypto.randomUUID(); // real-time: allowed (seeded by the bridge)
      }
      try {
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(1000) });
        if (res.ok || attempt >= 4) return res.status;
      } catch (e) {
        if (attempt >= 4) throw e;
      }
      await new Promise((r) => setTimeout(r, 200)); // real-time: allowed (virtual time on the bridge)
    }
  },
};

/** What the client's clocks read: at its first send and 1.5 s (virtual) later. */
function clockReader(into: Array<Record<string, number | string>>): RetryClient {
  return {
    name: 'clock-reader',
    deadlineMs: 10_000,
    async run(fetch, op) {
      const read = () => ({ dateNow: Date.now(), newDate: new Date().getTime(), iso: new Date().toISOString(), perf: performance.now(), hr: process.hrtime()[0] }); // real-time: allowed (the reads under test)
      into.push(read());
      await new Promise((r) => setTimeout(r, 1500)); // real-time: allowed (virtual time on the bridge)
      into.push(read());
      return (await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': op.id }, body: op.body })).status;
    },
  };
}

describe("a retry client's clock reads client.epochMs plus virtual time", () => {
  it('Date.now() and new Date() read 2026-01-01 + t; performance.now and process.hrtime count from the start', async () => {
    const reads: Array<Record<string, number | string>> = [];
    await runClientScenario(lostAnswer({ epochMs: SIM_EPOCH_MS }), clockReader(reads));
    expect(reads[0]).toEqual({ dateNow: SIM_EPOCH_MS, newDate: SIM_EPOCH_MS, iso: '2026-01-01T00:00:00.000Z', perf: 0, hr: 0 });
    expect(reads[1]).toEqual({ dateNow: SIM_EPOCH_MS + 1500, newDate: SIM_EPOCH_MS + 1500, iso: '2026-01-01T00:00:01.500Z', perf: 1500, hr: 1 });
  });

  it('a file without client.epochMs replays on the 1970 clock it was found on', async () => {
    const reads: Array<Record<string, number | string>> = [];
    await runClientScenario(lostAnswer(), clockReader(reads));
    expect(reads.map((r) => r.dateNow)).toEqual([0, 1500]);
  });

  it('a key leased from its first send (`if (!firstSentAt)`) holds in the present, as in production; on the 1970 clock its send at t=0 read as none', async () => {
    const now = await runClientScenario(lostAnswer({ epochMs: SIM_EPOCH_MS }), leased);
    expect(now.violations).toEqual([]);
    expect(new Set(now.workers[0]!.sent.map((q) => q.key)).size).toBe(1);
    // The same file without the field: the false verdict every such client got before.
    const old = await runClientScenario(lostAnswer(), leased);
    expect(old.violations.map((v) => v.invariant)).toContain('stable-key');
  });

  it('check --client --explore exhaustive judges it so: every schedule of its small scenarios (which start at t=0) holds', async () => {
    const r = await runClientCampaign({ client: leased, runs: 4, seed: 3, faults: ['loseResponse'], explore: 'exhaustive' });
    expect(r.verdict).toBe('holds');
  }, 30_000);

  it("the service's clock is its own: client.epochMs moves neither a service without service.epochMs nor one with it", async () => {
    const { fixedClient } = await import('../../examples/fetch-retry-client/client.js');
    for (const [service, base] of [[{}, 0], [{ epochMs: 1_000_000_000_000 }, 1_000_000_000_000]] as const) {
      broken.readings.length = 0;
      await runClientScenario(lostAnswer({ epochMs: SIM_EPOCH_MS }, { module: broken.clockReader.name, ...service }), fixedClient, { service: broken.clockReader });
      expect(broken.readings.length).toBeGreaterThan(0);
      for (const x of broken.readings) {
        expect(x.dateNow).toBe(Math.floor(x.simNow as number));
        expect(x.dateNow as number).toBeGreaterThanOrEqual(base);
        expect(x.dateNow as number).toBeLessThan(base + 3_600_000);
      }
    }
  });
});

describe("a retry client's module loads at the run's start, on its epoch", () => {
  const BOOT = 'src/client/fixtures/boot-clock.ts';
  it('a copy loaded per simulated client process reads client.epochMs at its top level (1970 without it)', async () => {
    const client = await loadClient(BOOT);
    const keys = async (s: ReturnType<typeof lostAnswer>) => (await runClientScenario(s, client, { perProcess: freshClientLoader(BOOT, client.name) })).workers[0]!.sent.map((q) => q.key);
    expect(await keys(lostAnswer({ epochMs: SIM_EPOCH_MS }))).toEqual([`${SIM_EPOCH_MS}-${SIM_EPOCH_MS}-1`]);
    expect(await keys(lostAnswer())).toEqual(['0-0-1']);
  });

  it('the one load of check --client and replay reads the epoch it is given', async () => {
    // loadClient imports through its own loader: the top level runs here, on the epoch it is given.
    const copy = await loadClient('src/client/fixtures/boot-clock.ts', undefined, { epochMs: SIM_EPOCH_MS + 7 });
    const r = await runClientScenario(lostAnswer({ epochMs: SIM_EPOCH_MS }), copy);
    expect(r.workers[0]!.sent[0]!.key).toBe(`${SIM_EPOCH_MS + 7}-${SIM_EPOCH_MS + 7}-1`);
  });
});

describe('every newly generated client scenario records client.epochMs', () => {
  it("check --client's and the vitest helpers' cases, the exhaustive small scenarios, the flaky lab's", () => {
    for (const c of fc.sample(clientCaseArbitrary({}, ['loseResponse', 'kill']), { numRuns: 20, seed: 1 })) expect(c.scenario.client.epochMs).toBe(SIM_EPOCH_MS);
    for (const s of clientSmallScenarios({ variant: 'key_atomic' }, ['loseResponse', 'throttle'])) expect(s.client.epochMs).toBe(SIM_EPOCH_MS);
    const o = { seed: 1, client: { name: 'c' }, clientModule: 'c.ts', variant: 'key_atomic' };
    expect(clientLabScenario(o as unknown as Parameters<typeof clientLabScenario>[0], 2).client.epochMs).toBe(SIM_EPOCH_MS);
  });

  it('client.epochMs is validated as service.epochMs is', () => {
    const parse = (epochMs: unknown) => scenarioSchema.safeParse({ ...JSON.parse(JSON.stringify(lostAnswer())), client: { keySource: 'tool_call', epochMs } });
    expect(parse(SIM_EPOCH_MS).success).toBe(true);
    for (const bad of [-1, 1.5, '2026', 1e15]) {
      const r = parse(bad);
      expect(r.success).toBe(false);
      expect(r.error!.issues[0]!.path).toEqual(['client', 'epochMs']);
    }
  });
});

describe('check --client writes client.epochMs; replay and the page honour it', () => {
  const COUNTER = 'src/client/fixtures/boot-counter.ts';
  it('a `${BOOT}-${seq}` key reads 2026 in the check, its file, its replay and its page; the file without the field replays on 1970 keys', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    const found = tmp('rs-client-epoch-');
    const html = tmp('rs-client-epoch-html-');
    const r = await runMain(['check', '--client', COUNTER, '--runs', '30', '--found', found, '--html', html, '--json']);
    // Every simulated process still boots at t = 0, in the same ms: two of them send the same first key.
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { violations: string[]; counterexample: string; why: string[] };
    expect(j.violations).toEqual(['key-reuse']);
    const file = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { client: { epochMs?: number } };
    expect(file.client.epochMs).toBe(SIM_EPOCH_MS);
    const again = await runMain(['replay', '--client', COUNTER, j.counterexample, '--json']);
    expect(again.code, again.err).toBe(0);
    const aj = JSON.parse(again.out) as { traceHash: string; violations: Array<{ detail: string }> };
    expect(aj.violations[0]!.detail).toContain(`Idempotency-Key ${SIM_EPOCH_MS}-1 `);
    const page = readdirSync(html).find((f) => f !== 'index.html' && f.endsWith('.html'));
    expect(readFileSync(join(html, page!), 'utf8')).toContain(`${SIM_EPOCH_MS}-1`);
    const pageFile = join(tmp('rs-client-epoch-page-'), 'page.html');
    const paged = await runMain(['replay', '--client', COUNTER, j.counterexample, '--json', '--html', pageFile]);
    expect((JSON.parse(paged.out) as { traceHash: string }).traceHash).toBe(aj.traceHash);
    expect(readFileSync(pageFile, 'utf8')).toContain(`${SIM_EPOCH_MS}-1`);
    // The field is the contract: without it the same schedule runs on the 1970 clock (as a file found before it).
    const old = join(found, 'no-epoch.json');
    const parsed = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { client: Record<string, unknown> };
    delete parsed.client.epochMs;
    writeFileSync(old, JSON.stringify(parsed));
    const o = await runMain(['replay', '--client', COUNTER, old, '--json']);
    expect((JSON.parse(o.out) as { violations: Array<{ detail: string }> }).violations[0]!.detail).toContain('Idempotency-Key 0-1 ');
  }, 60_000);
});
