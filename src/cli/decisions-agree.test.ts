// `check --json`'s shrunkSize.decisions counted the schedule's choices that
// were not the default (1 for the key_split race), while `replay` of the
// very file said "16 decisions" (every decision the kernel made, as the
// stepper page, the file's schedule and the divergence messages count).
// Both say "decisions" for every decision now; the non-default ones are
// shrunkSize.nonDefault and replay's "(N not the default)".
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
afterEach(() => vi.restoreAllMocks());

interface Size { decisions: number; nonDefault: number; preemptions: number }

/** The counts replay prints for a file: decisions, the non-default ones, preemptions. */
async function replayCounts(args: string[]): Promise<Size> {
  const r = await runMain(['replay', ...args]);
  expect(r.code, r.out + r.err).toBe(0);
  const m = /^schedule: (\d+) decisions? \((\d+) not the default\), (\d+) preemptions?; trace /m.exec(r.out);
  expect(m, r.out).not.toBeNull();
  return { decisions: Number(m![1]), nonDefault: Number(m![2]), preemptions: Number(m![3]) };
}

describe("check's shrunkSize and replay's schedule line count the same decisions for the same file", () => {
  it('a built-in claim (the key_split race): check --json, then replay its file', async () => {
    const r = await runMain(['check', '--claim', 'key_split-tool_call-race-fails', '--found', tmp('dec-'), '--json']);
    const [row] = JSON.parse(r.out) as Array<{ counterexample: string; shrunkSize: Size }>;
    const size = row!.shrunkSize;
    // The file's schedule lists every decision; a race needs a preemption, so there are defaults among them.
    expect(size.decisions).toBe((JSON.parse(readFileSync(row!.counterexample, 'utf8')) as { schedule: unknown[] }).schedule.length);
    expect(size.decisions).toBeGreaterThan(size.nonDefault);
    expect(size.preemptions).toBe(1);
    expect(await replayCounts([row!.counterexample])).toEqual({ decisions: size.decisions, nonDefault: size.nonDefault, preemptions: size.preemptions });
  }, 60_000);

  it("a user's service (two-transactions' same-key race): check --service --json, then replay --service", async () => {
    const module = 'examples/two-transactions/service.ts';
    const r = await runMain(['check', '--service', module, '--found', tmp('dec-'), '--json']);
    const j = JSON.parse(r.out) as { counterexample: string; shrunkSize: Size };
    expect(j.shrunkSize.decisions).toBeGreaterThan(j.shrunkSize.nonDefault);
    expect(await replayCounts(['--service', module, j.counterexample])).toEqual({ decisions: j.shrunkSize.decisions, nonDefault: j.shrunkSize.nonDefault, preemptions: j.shrunkSize.preemptions });
  }, 60_000);
});
