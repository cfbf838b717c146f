import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { ListChoice } from '../sim/choice/list.js';
import type { ServiceDefinition } from './definition.js';
import * as broken from './fixtures/broken.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

function scenario(def: ServiceDefinition, extra: Record<string, unknown> = {}) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'clock', seed: 7, service: { module: def.name, ...extra },
    client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }], expect: {},
  }));
}

async function readingsOf(extra: Record<string, unknown> = {}) {
  broken.readings.length = 0;
  const r = await runScenario(scenario(broken.clockReader, extra), { service: broken.clockReader, keepTrace: true });
  return { r, readings: broken.readings.map((x) => ({ ...x })) };
}

describe("a service's Date, timers and randomness are the kernel's in a simulated run", () => {
  it('Date.now, new Date, Date() and performance.now read virtual time, and agree with sim.now()', async () => {
    const { readings } = await readingsOf();
    expect(readings.length).toBeGreaterThanOrEqual(2);
    for (const x of readings) {
      expect(x.dateNow).toBe(Math.floor(x.simNow as number));
      expect(x.newDate).toBe(x.dateNow);
      expect(x.perf).toBe(x.simNow);
      expect(x.dateNow as number).toBeLessThan(3_600_000); // kernel time, not 1.7e12
      expect(x.dateString).toBe(new Date(x.dateNow as number).toString());
    }
  });

  it('a handler awaiting setTimeout(r, 100) waits 100 ms of virtual time; setImmediate and setInterval run on it too; a cleared timer never fires', async () => {
    const { r, readings } = await readingsOf();
    for (const x of readings) {
      expect((x.afterTimeout as number) - (x.dateNow as number)).toBeGreaterThanOrEqual(99);
      expect((x.afterTimeout as number) - (x.dateNow as number)).toBeLessThanOrEqual(101);
      expect((x.afterInterval as number) - (x.afterTimeout as number)).toBeGreaterThanOrEqual(29);
      expect((x.afterInterval as number) - (x.afterTimeout as number)).toBeLessThanOrEqual(31);
      expect(x.clearedFired).toBeUndefined();
    }
    expect(r.result.timeMs).toBeGreaterThan(130);
  });

  it('randomness is seeded: the same scenario reads the same values, and two requests read different ones', async () => {
    const a = await readingsOf();
    const b = await readingsOf();
    expect(b.readings).toEqual(a.readings);
    expect(b.r.result.traceHash).toBe(a.r.result.traceHash);
    const [x, y] = a.readings;
    expect(x!.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(x!.uuid).not.toBe(y!.uuid);
    expect(x!.random).not.toBe(y!.random);
    // node:crypto's functions too (named imports and the module object): an id minted by them is the same on a replay.
    expect(x!.nodeUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(x!.nodeUuid).not.toBe(y!.nodeUuid);
    expect(x!.nodeBytes).not.toBe(y!.nodeBytes);
    expect(String(x!.nodeAsync)).toHaveLength(8);
  });

  it("outside a run node:crypto is the real one: two calls differ, whatever ran before", async () => {
    await readingsOf();
    const { randomBytes } = await import('node:crypto');
    expect(randomBytes(16).equals(randomBytes(16))).toBe(false); // real-time: allowed (the real function is back)
  });

  it("an instance's clock offset shows in its Date.now() as in sim.now()", async () => {
    const { readings } = await readingsOf({ clockOffsetMs: [60_000] });
    for (const x of readings) {
      expect(x.dateNow).toBe(Math.floor(x.simNow as number));
      expect(x.dateNow as number).toBeGreaterThanOrEqual(60_000);
    }
  });

  it('outside the run, and after a run that stops with an error, the globals are the real ones again', async () => {
    const realDate = Date;
    const realRandom = Math.random; // real-time: allowed (identity check)
    const realSetTimeout = setTimeout; // real-time: allowed (identity check)
    const realPerfNow = performance.now; // real-time: allowed (identity check: the machine's, or load-clock.ts's dispatcher on it)
    await readingsOf();
    await expect(runScenario(scenario(broken.dateSpin), { service: broken.dateSpin, choices: new ListChoice([]) })).rejects.toThrow(/busy-waits/);
    expect(Date).toBe(realDate);
    expect(Math.random).toBe(realRandom); // real-time: allowed (identity check)
    expect(setTimeout).toBe(realSetTimeout); // real-time: allowed (identity check)
    expect(performance.now).toBe(realPerfNow); // real-time: allowed (identity check)
    expect(Date.now()).toBeGreaterThan(1.7e12); // real-time: allowed (the real clock is back)
  });
});

describe("the service's clock under check --client (the bridge's fakes are the client's)", () => {
  it("a handler run next to a user's client reads the kernel's clock and its own instance's stream, not the client's", async () => {
    const { runClientScenario } = await import('../client/run.js');
    const { fixedClient } = await import('../../examples/fetch-retry-client/client.js');
    broken.readings.length = 0;
    const s = scenario(broken.clockReader, { clockOffsetMs: [60_000] });
    const a = await runClientScenario(s, fixedClient, { service: broken.clockReader });
    const first = broken.readings.map((x) => ({ ...x }));
    expect(first.length).toBeGreaterThan(0);
    for (const x of first) {
      expect(x.dateNow).toBe(Math.floor(x.simNow as number)); // the instance's skew, which the client's clock lacks
      expect(x.dateNow as number).toBeGreaterThanOrEqual(60_000);
      expect((x.afterTimeout as number) - (x.dateNow as number)).toBeGreaterThanOrEqual(99);
    }
    broken.readings.length = 0;
    const b = await runClientScenario(s, fixedClient, { service: broken.clockReader });
    expect(broken.readings).toEqual(first);
    expect(b.result.traceHash).toBe(a.result.traceHash);
    expect(Date.now()).toBeGreaterThan(1.7e12); // real-time: allowed (released after the run)
  });
});

describe('real mode (retrysim serve) keeps the real clock, and its 500 carries no file names or source', () => {
  it('a handler that throws: 500 with the exception\'s name and message only', async () => {
    const { startServer } = await import('../real/server.js');
    const { join } = await import('node:path');
    const errors: string[] = [];
    const spy = (await import('vitest')).vi.spyOn(console, 'error').mockImplementation((...a) => void errors.push(a.join(' ')));
    const server = await startServer({ service: broken.throws, dbPath: join(tmp('rs-500-'), 'db.sqlite'), port: 0 } as never);
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"run":"r"}' });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(text).toBe(JSON.stringify({ error: "internal error: TypeError: Cannot read properties of undefined (reading 'id')" }));
      expect(errors.join('\n')).toMatch(/broken\.ts:\d+/); // the file and line go to the server's stderr
    } finally {
      spy.mockRestore();
      await server.close();
    }
  });
});
