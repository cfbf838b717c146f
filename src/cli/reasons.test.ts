import { afterEach, describe, expect, it, vi } from 'vitest';
import { reasonsBlock } from './reasons.js';
import { reportServiceCampaign } from './check-service.js';
import { loadService } from '../service/load.js';
import { runServiceCampaign } from '../service/campaign.js';

const TWO = ['not shown necessary (search ran out of runs): operation op2', 'not shown necessary (could not be tried): kill (the database is locked)'];

describe('the reasons a check row is not ✓ print as one block', () => {
  it('one reason: one line under its mark, as before', () => {
    expect(reasonsBlock(['inconclusive: the schedule limit stopped it'], false)).toBe('? inconclusive: the schedule limit stopped it');
    expect(reasonsBlock([`counterexample not minimal: ${TWO[0]}`], false)).toBe(`✗ counterexample not minimal: ${TWO[0]}`);
    expect(reasonsBlock(['expected holds, got fails'], false)).toBeUndefined();
    expect(reasonsBlock([], true)).toBeUndefined();
  });

  it('several not-minimal reasons: one ✗ and one heading, each reason under it', () => {
    expect(reasonsBlock(TWO.map((w) => `counterexample not minimal: ${w}`), false)).toBe(`✗ counterexample not minimal:\n  ${TWO[0]}\n  ${TWO[1]}`);
  });

  it('with --expect, the verdict first and the not-minimal reasons under it, in the same block', () => {
    expect(reasonsBlock(['expected holds, got fails', ...TWO.map((w) => `counterexample not minimal: ${w}`)], true))
      .toBe(`✗ expected holds, got fails\n  counterexample not minimal:\n    ${TWO[0]}\n    ${TWO[1]}`);
  });
});

describe('check --app/--service output of a counterexample not shown minimal in two ways', () => {
  afterEach(() => vi.restoreAllMocks());

  // A real campaign's failure, told (as a minimiser that ran out of runs would) that two steps were not shown necessary.
  async function notMinimalTwice() {
    const module = 'examples/app-plain-http/app.ts';
    const r = await runServiceCampaign({ def: await loadService(module), module, runs: 20, seed: 1 });
    expect(r.verdict).toBe('fails');
    return { ...r, counterexample: { ...r.counterexample!, notMinimal: TWO } };
  }
  const report = async (r: Awaited<ReturnType<typeof notMinimalTwice>>, json: boolean, expected?: 'holds' | 'fails') => {
    const out: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
    const code = await reportServiceCampaign(r, { subject: 'app orders-check-then-insert', expected, json, timeBudgetMs: undefined, runs: 20, reproduce: { before: 'retrysim check --app examples/app-plain-http/app.ts --seed 1', after: '' } });
    vi.restoreAllMocks();
    return { code, text: out.join('\n') };
  };

  it('prints one ✗ block listing both reasons; --json carries both in why; the exit code is the same', async () => {
    const r = await notMinimalTwice();
    const text = await report(r, false);
    expect(text.text.match(/^✗ /gm)).toHaveLength(1);
    expect(text.text).toContain(`\n✗ counterexample not minimal:\n  ${TWO[0]}\n  ${TWO[1]}`);
    const json = await report(r, true);
    expect((JSON.parse(json.text) as { why: string[] }).why).toEqual(['expected holds, got fails', ...TWO.map((w) => `counterexample not minimal: ${w}`)]);
    expect(text.code).toBe(1);
    expect(json.code).toBe(1);
    // With --expect fails the verdict is met; the not-minimal block alone makes the row ✗, exit 1 as before.
    const expectFails = await report(r, false, 'fails');
    expect(expectFails.code).toBe(1);
    expect(expectFails.text.match(/^✗ /gm)).toHaveLength(1);
  }, 30_000);
});
