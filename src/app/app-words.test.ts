// A hosted app's problems are told as an app's: `--faults` with a name it
// does not know said "valid for service <name>" to a user who typed --app.
import { describe, expect, it } from 'vitest';
import { parseServiceFaults } from '../service/campaign.js';
import { appService } from './define.js';
import { descriptor } from './fixtures/accepted-later.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('words for a hosted app', () => {
  it('--faults with an unknown name lists what is valid for the app', () => {
    expect(() => parseServiceFaults(appService(descriptor(false)), 'loseResponse,teleport')).toThrow(/^--faults: unknown fault 'teleport'; valid for app accepted-later: loseResponse, crash,/);
  });
});

describe('a descriptor whose effects.of ignores the tenant', () => {
  it('is refused in one line naming of and owner, not read as a duplicate', async () => {
    const d = descriptor(false);
    // Counts by runId alone: with two tenants sending the same runId, each tenant's order is counted for both.
    const of = (kv: Parameters<typeof d.effects.of>[0], op: { runId: string }) => kv.scan('order:').map(([, v]) => JSON.parse(v) as { id: number; order: string }).filter((o) => o.order === op.runId).map((o) => o.id);
    const { runServiceCampaign } = await import('../service/campaign.js');
    const r = runServiceCampaign({ def: appService({ ...d, name: 'wrong-of', effects: { ...d.effects, of } }), module: 'wrong-of', runs: 200, seed: 1, faults: ['tenants'] });
    await expect(r).rejects.toThrow(/^app 'wrong-of': effects\.of counted order \d+ for operation run-1 of tenant '\w+', but effects\.owner says it is run-1's of tenant '\w+': of must return only the operation's own/);
  }, 60_000);
});

describe('the crash fault on a hosted app', () => {
  it('is on the trace where it strikes, even at a command\'s first reach and when the app swallows the error', async () => {
    const { runServiceCampaign } = await import('../service/campaign.js');
    const { runScenario } = await import('../scenario/run.js');
    const def = appService(descriptor(false));
    const r = await runServiceCampaign({ def, module: 'crash-words', runs: 200, seed: 1, faults: ['crash', 'concurrency'] });
    expect(r.verdict).toBe('fails');
    const s = r.counterexample!.scenario;
    expect(s.faults.crashAt).toMatch(/^kv\.\w+: answer lost$/);
    const run = await runScenario(s, { service: def, keepTrace: true });
    expect(run.trace.map(String).join('\n')).toContain(`${s.faults.crashAt} (the store ran it; the app's client saw SocketClosedUnexpectedlyError)`);
  }, 60_000);
});

// An app's store is the simulated key-value store, no database: its trace said
// `db: +1 order`. The line shown now says `store:`; the entry hashed is the
// `db:` one it always was, so no recorded run changes its trace hash.
describe("a hosted app's effect lines", () => {
  it('say store: +1 <noun>, not db:, and hash as the db: line did', async () => {
    const { loadService } = await import('../service/load.js');
    const { loadScenario } = await import('../scenario/load.js');
    const { runScenario } = await import('../scenario/run.js');
    const { observeScenario } = await import('../report/html/stepper-data.js');
    const s = loadScenario('examples/app-plain-http/counterexamples/orders-check-then-insert-exactly-one-53b9175c.json');
    const def = await loadService('examples/app-plain-http/app.ts');
    const app = await runScenario(s, { service: def, keepTrace: true });
    // The same definition not marked as a hosted app (its steps list copied): traced as a service is.
    const asService = await runScenario(s, { service: { ...def, steps: [...def.steps] }, keepTrace: true });
    const lines = (r: typeof app) => r.trace.map(String);
    expect(lines(app).filter((l) => /\b(db|store): /.test(l)).map((l) => l.replace(/^.*\s(?=(db|store): )/, ''))).toEqual(['store: +1 order', 'store: +1 order']);
    expect(lines(asService).filter((l) => / db: \+1 order$/.test(l))).toHaveLength(2);
    expect(lines(app).map((l) => l.replace(' store: ', ' db: '))).toEqual(lines(asService));
    expect(app.result.traceHash).toBe(asService.result.traceHash);
    // The page still finds the second order where it appears.
    const { data } = await observeScenario(s, {}, { service: def });
    const pinned = data.violations.find((v) => v.invariant === 'exactly-one')!;
    expect(data.steps[pinned.step]).toMatchObject({ kind: 'db', event: 'store: +1 order' });
    expect(pinned.why).toBe('the second order for op1 appears here');
  });
});

// "steps: each store command it sends (kv.set, kv.get, kv.del, kv.incr, kv.pexpire, …)" listed the
// store's nine commands as the ones the app sends, and said a kill's reach was counted in a request.
describe("check --app's faults line", () => {
  it("lists the store's commands as those the app may send, and counts a kill's reach on its instance", async () => {
    const { runMain } = await import('../testing/cli.js');
    const r = await runMain(['check', '--app', 'examples/app-plain-http/app-claim.ts', '--runs', '5', '--module-probe-runs', '1', '--found', tmp('rs-app-words-')]);
    expect(r.code, r.err).toBe(0);
    const line = r.out.split('\n').find((l) => l.startsWith('faults: '))!;
    expect(line).toMatch(/; steps: whichever of the store's commands it sends \(kv\.set, kv\.get, .*kv\.watch\), at its 1st to 4th use in a request \(a kill's, on its instance\); crash points: /);
  }, 60_000);
});
