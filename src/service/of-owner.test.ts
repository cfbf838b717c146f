// effects.of and effects.owner are two readings of one database: where they
// disagree (an of that ignores op.tenant), the definition is wrong, not the
// service — one line naming both, exit 2, for a service as for an app
// (src/app/app-words.test.ts). Until 2026-12 a correct service with such an
// of "failed" exactly-one, exit 1, with a counterexample.
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('a service definition whose effects.of ignores the tenant', () => {
  it('is refused in one line naming of and owner (exit 2, --json verdict error), not judged a duplicate', async () => {
    const args = ['check', '--service', 'src/service/fixtures/of-ignores-tenant.ts', '--runs', '300', '--faults', 'tenants,loseResponse', '--found', tmp('rs-of-owner-')];
    const r = await runMain(args);
    expect(r.code, r.out).toBe(2);
    expect(r.err.trim()).toMatch(/^retrysim check: service 'of-ignores-tenant': effects\.of counted effect \d+ for operation run-\d+ of tenant '\w+', but effects\.owner says it is run-\d+'s of tenant '\w+': of must return only the operation's own \(filter by op\.runId and op\.tenant\)(; a service that has no tenants .*)?$/);
    const j = JSON.parse((await runMain([...args, '--json'])).out) as { verdict: string; counterexample: unknown };
    expect(j).toMatchObject({ verdict: 'error', counterexample: null });
    // The same service with its own of holds.
    expect((await runMain(['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '300', '--faults', 'tenants,loseResponse', '--found', tmp('rs-of-owner-')])).code).toBe(0);
  }, 120_000);

  it("one order two tenants' operations both count (a service with no tenants, two tenants sending one raw key) is refused the same way, with the way to check such a service", async () => {
    const args = ['check', '--service', 'src/service/fixtures/no-tenants.ts', '--runs', '300', '--found', tmp('rs-of-owner-')];
    const r = await runMain(args);
    // Until 2026-12 it held: each operation's of listed the one order, so the answer handing it to the other tenant looked like its own.
    expect(r.code, r.out).toBe(2);
    expect(r.err.trim()).toMatch(/^retrysim check: service 'no-tenants': effects\.of counted order 1 for operation run-\d+ of tenant '(acme|globex)', but effects\.owner says it is run-\d+'s of tenant 'default': .*; a service that has no tenants \(it never reads the x-tenant header\) is checked without them: leave 'tenants' out of --faults$/);
    // Checked as it says, it holds.
    const faults = 'loseResponse,slow,concurrency,kill,pause,clockOffset,instances,loseAllAnswers,keyReuseProbe,longSpans,threeWorkers';
    expect((await runMain([...args, '--faults', faults])).code).toBe(0);
  }, 120_000);
});
