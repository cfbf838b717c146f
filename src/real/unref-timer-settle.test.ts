// A handler's timer that is unref()ed (an LRU cache's TTL purge, as
// lru-cache's ttlAutopurge arms one per entry) is no work to wait for: the
// simulation does not wait for it, and since 2026-12 neither does real mode.
// Before, `serve` counted it as background work, so every wall-clock run of
// `flaky --service` on such a service waited out the 10 s settle limit and
// then said the server was "still at work" (found with lru-cache from the
// packed tarball).
import { describe, expect, it } from 'vitest';
import { runCli } from './child.js';

describe('real mode: an unref()ed timer a handler armed', () => {
  it('does not keep a wall-clock run of flaky --service from settling', async () => {
    const r = await runCli(['flaky', '--service', 'src/real/fixtures/unref-purge.ts', '--runs', '2', '--schedules-max', '50', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { verdict: string; wallClock: { runs: number; unsettled: number } };
    expect(j.verdict).toBe('holds');
    expect(j.wallClock).toMatchObject({ runs: 2, unsettled: 0 });
  }, 120_000);
});
