import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

afterEach(() => vi.restoreAllMocks());

/**
 * `retrysim check --shrink-budget D` on the built-in claims: opt-in (their
 * shrinking is bounded in runs, so a counterexample is the same on every
 * machine), and when given and reached it stops shrinking as it does for a
 * user's service. The machine's clock is faked to jump an hour per read, so
 * the limit is reached on any machine.
 */
describe('retrysim check --shrink-budget (built-in claims)', () => {
  const claim = ['check', '--claim', 'key_split-tool_call-race-fails', '--runs', '300', '--workers', '1', '--json'];

  it('reached: the failing case in hand is saved and replays; the row is ✗ (not minimal), said in why and minimised.stopped', async () => {
    const found = tmp('rs-claim-shrink-');
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (now += 3_600_000));
    const r = await runMain([...claim, '--found', found, '--shrink-budget', '60s']);
    expect(r.code, r.err).toBe(1);
    const [row] = JSON.parse(r.out) as Array<{ verdict: string; ok: boolean; why: string[]; counterexample: string; minimised: { runs: number; stopped?: { by: string } } }>;
    expect(row!.verdict).toBe('fails');
    expect(row!.ok).toBe(false);
    expect(row!.minimised).toMatchObject({ runs: 1, stopped: { by: 'shrink budget 60 s' } });
    expect(row!.why).toContain('counterexample not minimal: shrinking stopped at its time limit (shrink budget 60 s): not known to be minimal');
    const replay = await runMain(['replay', row!.counterexample, '--json']);
    expect(replay.code, replay.err).toBe(0);
    expect(JSON.parse(replay.out)).toMatchObject({ expectMet: true });
  }, 60_000);

  it('not given: the same clock changes nothing (no limit by default), the counterexample is minimal', async () => {
    const found = tmp('rs-claim-noshrink-');
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (now += 3_600_000));
    const r = await runMain([...claim, '--found', found]);
    expect(r.code, r.err).toBe(0);
    const [row] = JSON.parse(r.out) as Array<{ ok: boolean; why: string[]; minimised: Record<string, unknown> }>;
    expect(row).toMatchObject({ ok: true, why: [] });
    expect('stopped' in row!.minimised).toBe(false);
    const bad = await runMain([...claim, '--shrink-budget', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--shrink-budget must be a duration such as 90s, 10m or 1h (more than 0, at most a week), got 'soon'");
  }, 60_000);
});
