import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from './campaign.js';
import { locationPayments } from './fixtures/location-answer.js';
import { ServiceError } from './errors.js';

// A service naming its effect in a Location header: `operation.resultId`
// gets the answer's headers, and a campaign in which no 2xx named an id says
// so (id-exists judged nothing) instead of a bare "holds".

describe('operation.resultId(body, headers): an id in a header', () => {
  it('undeclared: the campaign holds, and its coverage lists "a 2xx answer naming an effect id" as never reached', async () => {
    const r = await runServiceCampaign({ def: locationPayments({ readLocation: false, wrongLocation: true }), runs: 150, seed: 1 });
    expect(r.verdict).toBe('holds');
    const row = r.coverage!.rows.find((x) => x.id === 'answer:id');
    expect(row).toMatchObject({ runs: 0, what: expect.stringMatching(/^a 2xx answer naming an effect id/) });
  });

  it('declared from the Location header: the answers name ids (reached), the correct service holds, the wrong Location fails id-exists', async () => {
    const ok = await runServiceCampaign({ def: locationPayments({ readLocation: true }), runs: 150, seed: 1 });
    expect(ok.verdict).toBe('holds');
    expect(ok.coverage!.rows.find((x) => x.id === 'answer:id')!.runs).toBeGreaterThan(0);
    const bad = await runServiceCampaign({ def: locationPayments({ readLocation: true, wrongLocation: true }), runs: 150, seed: 1 });
    expect(bad.verdict).toBe('fails');
    expect(bad.counterexample!.violations.map((v) => v.invariant)).toContain('id-exists');
  });

  it('a resultId reading the header wrong is refused in one line naming the headers it read (the body alone said nothing: "" for an empty body)', async () => {
    const def = locationPayments({ readLocation: true });
    // split('/')[0] of '/payments/1' is '': the user's slip, not a missing id.
    const slip = { ...def, operation: { ...def.operation, resultId: (_b: string, h: Readonly<Record<string, string>>) => h.location?.split('/')[0] } };
    const e = await runServiceCampaign({ def: slip, runs: 20, seed: 1 }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as Error).message).toMatch(/got an empty string for the answer "\{\\"status\\":\\"created\\"\}" with headers \{.*"location":"\/payments\/\d+"/);
  });
});
