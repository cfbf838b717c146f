import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { runClientCampaign } from './campaign.js';
import { runClientScenario } from './run.js';
import { clientSmallScenarios } from './small.js';
import { CLIENT_FAULTS } from './campaign.js';
import { buggyClient, fixedClient } from '../../examples/fetch-retry-client/client.js';
import { hedging, hedgingNewKeys } from './fixtures/hedging-client.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { runCli } from '../real/child.js';

const tmp = tempDirs();

describe('check --client --explore exhaustive: every schedule of a client\'s small scenarios', () => {
  it('the buggy example client fails (a written file that replays), the fixed one holds with every schedule run', async () => {
    const small = clientSmallScenarios({ variant: 'key_atomic' }, CLIENT_FAULTS);
    expect(small.map((s) => s.name)).toEqual(expect.arrayContaining(['key_atomic: no fault', 'key_atomic: one 429 with Retry-After: 1', 'key_atomic: the front end answers 422 once']));
    const found = tmp('rs-cx-found-');
    const bad = await runClientCampaign({ client: buggyClient, module: 'examples/fetch-retry-client/client.ts', runs: 100, seed: 1, explore: 'exhaustive', foundDir: found });
    expect(bad.verdict).toBe('fails');
    const cx = bad.counterexample!;
    expect(existsSync(cx.file!)).toBe(true);
    expect(cx.violations.map((v) => v.invariant)).toContain('stable-key');
    const again = await runClientScenario(cx.scenario, buggyClient, { strictReplay: true });
    expect(again.violations.map((v) => v.invariant).sort()).toEqual([...new Set(cx.violations.map((v) => v.invariant))].sort());
    const good = await runClientCampaign({ client: fixedClient, runs: 100, seed: 1, explore: 'exhaustive' });
    expect(good).toMatchObject({ verdict: 'holds', complete: true, runs: small.length });
  }, 30_000);

  it('a hedging client (two requests in flight) has orders to choose between: a limit that stops the search is inconclusive, all of them hold; new keys per hedge fail', async () => {
    const stopped = await runClientCampaign({ client: hedging, runs: 1, seed: 1, explore: 'exhaustive', faults: ['loseResponse'] });
    expect(stopped.verdict).toBe('inconclusive');
    expect(stopped.complete).toBe(false);
    expect(stopped.inconclusive).toBe('the schedule limit (1 per small scenario) stopped the enumeration before every schedule ran');
    const all = await runClientCampaign({ client: hedging, runs: 5000, seed: 1, explore: 'exhaustive', faults: ['loseResponse'] });
    expect(all).toMatchObject({ verdict: 'holds', complete: true });
    expect(all.runs).toBeGreaterThan(clientSmallScenarios({ variant: 'key_atomic' }, ['loseResponse']).length);
    const twoKeys = await runClientCampaign({ client: hedgingNewKeys, runs: 5000, seed: 1, explore: 'exhaustive', faults: ['loseResponse'] });
    expect(twoKeys.verdict).toBe('fails');
    expect(twoKeys.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 30_000);

  it('the CLI: exit 4 and the reason when the limit stops it, exit 0 when every schedule ran', async () => {
    const stopped = await runCli(['check', '--client', 'src/client/fixtures/hedging-client.ts', '--explore', 'exhaustive', '--faults', 'loseResponse', '--runs', '1', '--json']);
    expect(stopped.code).toBe(4);
    const j = JSON.parse(stopped.stdout) as { verdict: string; complete: boolean; why: string[] };
    expect(j).toMatchObject({ verdict: 'inconclusive', complete: false, why: ['inconclusive: the schedule limit (1 per small scenario) stopped the enumeration before every schedule ran'] });
    // The table says the same: a ? row and a ? reason (nothing failed), and the command that finishes the search.
    const text = await runCli(['check', '--client', 'src/client/fixtures/hedging-client.ts', '--explore', 'exhaustive', '--faults', 'loseResponse', '--runs', '1']);
    expect(text.code).toBe(4);
    expect(text.stdout).toMatch(/│ \? │ hedging +│ \d+ +│ inconclusive/);
    expect(text.stdout).toMatch(/^\? inconclusive: the schedule limit/m);
    // No ✗ row and no ✗ reason (the coverage table's "0 ✗" marks a situation never reached, not a failure).
    expect(text.stdout).not.toMatch(/│ ✗ │|^✗ /m);
    expect(text.stdout).toContain('what the 2 run(s) reached:');
    expect(text.stdout).toMatch(/^to conclude: raise the schedule limit, e.g. retrysim check --client src\/client\/fixtures\/hedging-client\.ts --seed 1 --explore exhaustive --runs 1000 --faults loseResponse$/m);
    const all = await runCli(['check', '--client', 'src/client/fixtures/hedging-client.ts', '--explore', 'exhaustive', '--faults', 'loseResponse']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/✓ │ hedging +│ \d+ \(all\) +│ holds/);
  }, 30_000);
});
