import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from './campaign.js';
import { locationPayments } from './fixtures/location-answer.js';

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
});
