// A service that does nothing agrees with itself: conformance said "No
// differences", exit 0, for a service whose every request threw (found
// from the packed tarball: a refunds service rejecting the operation's own
// note answered 500 in every column of both worlds), where check --service
// calls the same thing inconclusive, exit 4. Now it says so too.
import { describe, expect, it } from 'vitest';
import { runCli } from './child.js';

describe('conformance --service on a service that never does its work', () => {
  it('is inconclusive, exit 4, in the table, --json and the exit code alike', async () => {
    const args = ['conformance', '--service', 'src/real/fixtures/throws.ts', '--columns', 'no_fault,lost_answer'];
    const [json, text] = await Promise.all([runCli([...args, '--json']), runCli(args)]);
    expect(json.code, json.stderr).toBe(4);
    const j = JSON.parse(json.stdout) as { differences: number; inconclusive: string | null };
    expect(j.differences).toBe(0);
    expect(j.inconclusive).toMatch(/^no column made an effect or got a 2xx answer, in the simulation or for real/);
    expect(text.code, text.stderr).toBe(4);
    expect(text.stdout).toContain(`? inconclusive: ${j.inconclusive}`);
    expect(text.stdout).not.toMatch(/No differences/);
  }, 120_000);
});
