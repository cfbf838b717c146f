/**
 * A fault that strikes a store command an app's factory awaits at start-up
 * (its price list's SET, answer lost) crashes that process as Node would
 * (the start-up's rejection reaches the top) and it restarts; the campaign
 * goes on. It stopped the campaign: "app({ redis }) threw while building a
 * process", exit 2, on a correct app.
 */
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('a fault at an app\'s start-up', () => {
  it('check --app on an app that seeds its store in its factory: holds, exit 0, with runs whose start-up crashed', async () => {
    const r = await runMain(['check', '--app', 'src/app/fixtures/seeded-at-start-app.ts', '--runs', '300', '--found', tmp('rs-startup-'), '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; coverage: { rows: Array<{ id: string; runs: number }> } };
    expect(j.verdict).toBe('holds');
    const crashed = j.coverage.rows.find((x) => /crash/.test(x.id) && /process|code/.test(x.id));
    expect(crashed?.runs, JSON.stringify(j.coverage.rows.map((x) => x.id))).toBeGreaterThan(0);
  }, 120_000);

  it('its canary (the claim written look-then-take) fails exactly-one under the same campaign', async () => {
    const r = await runMain(['check', '--app', 'src/app/fixtures/seeded-at-start-get-then-set-app.ts', '--runs', '300', '--found', tmp('rs-startup-canary-'), '--json']);
    expect(r.code, r.err).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'fails', violations: ['exactly-one'] });
  }, 120_000);
});
