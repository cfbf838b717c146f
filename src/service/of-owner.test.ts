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
    expect(r.err.trim()).toMatch(/^retrysim check: service 'of-ignores-tenant': effects\.of counted effect \d+ for operation run-\d+ of tenant '\w+', but effects\.owner says it is run-\d+'s of tenant '\w+': of must return only the operation's own \(filter by op\.runId and op\.tenant\)$/);
    const j = JSON.parse((await runMain([...args, '--json'])).out) as { verdict: string; counterexample: unknown };
    expect(j).toMatchObject({ verdict: 'error', counterexample: null });
    // The same service with its own of holds.
    expect((await runMain(['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '300', '--faults', 'tenants,loseResponse', '--found', tmp('rs-of-owner-')])).code).toBe(0);
  }, 120_000);
});
