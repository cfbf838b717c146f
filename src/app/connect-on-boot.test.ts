import { describe, expect, it } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';
import { runMain } from '../testing/cli.js';

const tmp = tempDirs();

describe("check --app on an app whose factory sets its client up as node-redis apps do (redis.on('error', …), if (!redis.isOpen) await redis.connect())", () => {
  it('holds on the SET NX claim (exit 0; it was exit 2, "redis.on(), which the simulated store does not have"), and fails on the same app claiming with GET then SET (exit 1)', async () => {
    const ok = await runMain(['check', '--app', 'src/app/fixtures/connect-on-boot.ts', '--runs', '60', '--found', tmp('rs-connect-ok-'), '--json']);
    expect(ok.code, ok.err).toBe(0);
    expect((JSON.parse(ok.out) as { verdict: string }).verdict).toBe('holds');
    const bug = await runMain(['check', '--app', 'src/app/fixtures/connect-on-boot-get-then-set.ts', '--runs', '60', '--found', tmp('rs-connect-bug-'), '--json']);
    expect(bug.code, bug.err).toBe(1);
    const j = JSON.parse(bug.out) as { verdict: string; counterexample: string | null };
    expect(j.verdict).toBe('fails');
    expect(j.counterexample).not.toBeNull();
  }, 60_000);
});
