import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { parseScenario, printScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { runServiceCampaign } from './campaign.js';
import { loadService } from './load.js';

// A user's service sees the simulation's epoch (2026-01-01, as apps do) in
// the files found since 2026-12 (`service.epochMs`), and the 1970 clock in
// the files found before (no field): replay is a contract.

const tmp = tempDirs();
const DIR = 'src/service/fixtures/epoch';
const SECONDS_CLAIM = `${DIR}/seconds-claim.ts`;
const TTL_30S = `${DIR}/ttl-30s.ts`;
const BOOT_TIME = `${DIR}/boot-time.ts`;
/** Found by `check --service` on seconds-claim at 7bbe43d (the 1970 clock): 2 orders, a false alarm. */
const OLD_FILE = `${DIR}/seconds-claim-1970.json`;

/**
 * What `retrysim replay --service seconds-claim.ts seconds-claim-1970.json --json`
 * printed at 7bbe43d, before this change (the file's module path and
 * description since edited: neither is hashed). Not computed here: it is
 * the contract the old file carries.
 */
const OLD_REPLAY = {
  reports: { op1: 2 },
  violations: [{ invariant: 'exactly-one', op: 'op1', detail: '2 orders (ids 1, 2) for one logical operation' }],
  traceHash: 'e6e844e87062dd58f9c57c6cc2968ebba535012bf78b69200c5f2a9d15852469',
  expectMet: true,
  problems: [],
};

async function replayJson(...args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  const r = await runMain(['replay', ...args, '--json']);
  return { code: r.code, json: JSON.parse(r.out) as Record<string, unknown> };
}

describe("a user's service lives in 2026, not 1970", () => {
  it('a correct service that takes a claim made at unix second 0 for "no claim" holds (it failed exactly-one on the 1970 clock)', async () => {
    const def = await loadService(SECONDS_CLAIM);
    const r = await runServiceCampaign({ def, module: SECONDS_CLAIM, runs: 150, seed: 1 });
    expect(r.counterexample?.violations).toBeUndefined();
    expect(r.verdict).toBe('holds');
    // The generated files carry the epoch they ran on.
    const cases = await import('./campaign.js').then((m) => m.serviceCaseArbitrary(def, SECONDS_CLAIM));
    const fc = await import('fast-check');
    for (const c of fc.sample(cases, { numRuns: 5, seed: 1 })) expect(c.scenario.service.epochMs).toBe(SIM_EPOCH_MS);
  });

  it('an old file (no epochMs) replays exactly as it did before: epoch 0, its 2 orders, its hash', async () => {
    const r = await replayJson('--service', SECONDS_CLAIM, OLD_FILE);
    expect(r.code).toBe(0);
    const { file: _f, name: _n, seed: _s, ...rest } = r.json;
    expect(rest).toEqual(OLD_REPLAY);
    // The same file on the 2026 epoch is another run: the duplicate sees the claim (409) and sleeps
    // where, in 1970, it went on to place the second order — the recorded schedule no longer fits (exit 3).
    const s = parseScenario(readFileSync(OLD_FILE, 'utf8'));
    const file = join(tmp('rs-epoch-'), 'on-2026.json');
    writeFileSync(file, printScenario({ ...s, service: { ...s.service, epochMs: SIM_EPOCH_MS } }));
    const now = await replayJson('--service', SECONDS_CLAIM, file);
    expect(now.code).toBe(3);
    const d = now.json.diverged as { expected: { of: string[] }; actual: { of: string[] } };
    expect(d.expected.of).toContain('s0/op1.w1#2:order');
    expect(d.actual.of).toEqual(['s0/op1.w1#2:sleep', 's0/op1.w0#1:sleep']);
  });

  it('a real time bug (a 30 s key TTL) still fails on 2026, and its file (with epochMs) replays to the same hash', async () => {
    const def = await loadService(TTL_30S);
    const found = tmp('rs-epoch-found-');
    const r = await runServiceCampaign({ def, module: TTL_30S, runs: 400, seed: 1, faults: ['loseResponse', 'pause', 'longSpans'], foundDir: found });
    expect(r.verdict).toBe('fails');
    const cx = r.counterexample!;
    expect(cx.violations.map((v) => v.invariant)).toContain('exactly-one');
    const text = readFileSync(cx.file!, 'utf8');
    expect(parseScenario(text).service.epochMs).toBe(SIM_EPOCH_MS);
    const a = await replayJson('--service', TTL_30S, cx.file!);
    const b = await replayJson('--service', TTL_30S, cx.file!);
    expect(a.code).toBe(0);
    expect(a.json.expectMet).toBe(true);
    expect(b.json.traceHash).toBe(a.json.traceHash);
  });

  it('Date, sim.now() and a value read at module load agree: uptime = virtual time; performance.now stays relative', async () => {
    const def = await loadService(BOOT_TIME);
    const scenario = (extra: Record<string, unknown>) => parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'boot', seed: 2, service: { module: BOOT_TIME, instances: 2, ...extra },
      client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }, { id: 'op2', runId: 'r2', module: 'm', title: 't' }], expect: {},
    }));
    type Row = { up_ms: number; now_ms: number; sim_ms: number; perf_ms: number; booted: string };
    const rowsOf = async (extra: Record<string, unknown>): Promise<{ rows: Row[]; hash: string }> => {
      let rows: Row[] = [];
      const r = await runScenario(scenario(extra), { service: def, inspect: (db) => (rows = db.prepare('SELECT up_ms, now_ms, sim_ms, perf_ms, booted FROM orders').all() as Row[]) });
      return { rows, hash: r.result.traceHash };
    };
    const { rows, hash } = await rowsOf({ epochMs: SIM_EPOCH_MS, clockOffsetMs: [0, -250] });
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const x of rows) {
      // Loaded once per process, at the instant every run starts: uptime is the run's virtual time plus the instance's skew.
      expect(x.booted).toBe('2026-01-01T00:00:00.000Z');
      expect(x.up_ms).toBe(x.now_ms - SIM_EPOCH_MS);
      expect(x.up_ms).toBeGreaterThanOrEqual(-250);
      expect(x.up_ms).toBeLessThan(3_600_000);
      expect(Math.floor(x.sim_ms)).toBe(x.now_ms);
      // Relative, as on a real machine and in an app: no epoch in it.
      expect(x.perf_ms).toBeGreaterThanOrEqual(0);
      expect(x.perf_ms).toBeLessThan(3_600_000);
      expect(Math.abs(x.perf_ms - (x.now_ms - SIM_EPOCH_MS))).toBeLessThanOrEqual(251);
    }
    // Read at load, not at a run: the same in every run, so a replay hashes the same.
    expect((await rowsOf({ epochMs: SIM_EPOCH_MS, clockOffsetMs: [0, -250] })).hash).toBe(hash);
    // An old file (no field) keeps its 1970 handlers: the uptime is then −(2026 − 1970), as the note in docs/services.md says.
    const old = await rowsOf({ clockOffsetMs: [0, -250] });
    for (const x of old.rows) expect(x.up_ms).toBe(x.now_ms - SIM_EPOCH_MS);
    for (const x of old.rows) expect(x.now_ms).toBeLessThan(3_600_000);
  });
});

describe('the clock a module reads while it loads', () => {
  const bootModule = (dir: string) => {
    const file = join(dir, 'boot.ts');
    // The name carries what the top level read: a malformed definition is refused after the load, naming it.
    writeFileSync(file, 'export default { name: "boot-" + Date.now() + "-" + new Date().toISOString() };\n');
    return file;
  };
  it("simulated (check, replay): the epoch, 2026-01-01, the instant every run starts at", async () => {
    await expect(loadService(bootModule(tmp('rs-epoch-boot-')))).rejects.toThrow(`boot-${SIM_EPOCH_MS}-2026-01-01T00:00:00.000Z`);
  });
  it("real (serve, flaky's real lanes): the machine's clock, as the handlers' there", async () => {
    const err = await loadService(bootModule(tmp('rs-epoch-boot-')), { clock: 'real' }).then(() => undefined, (e: Error) => e.message);
    expect(err).toMatch(/boot-\d+-/);
    expect(err).not.toContain(`boot-${SIM_EPOCH_MS}-`);
  });

  it('a busy-wait on it cannot load (the clock stands still until a run begins): one line, and the real Date is back', async () => {
    const dir = tmp('rs-epoch-spin-');
    const file = join(dir, 'spin.ts');
    writeFileSync(file, 'const t0 = Date.now();\nwhile (Date.now() - t0 < 50) {}\nexport default { name: "spin" };\n');
    await expect(loadService(file)).rejects.toThrow(/cannot load: LoadSpinError: busy-waits on the clock while loading: read it 1,000,000 times/);
    // The load's clock is gone whatever the module did: the test's own Date is the machine's again.
    expect(Date.now()).not.toBe(SIM_EPOCH_MS); // real-time: allowed (what is asserted)
    expect(new Date().getTime()).toBeGreaterThan(SIM_EPOCH_MS); // real-time: allowed (what is asserted)
  });
});
