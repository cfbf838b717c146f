// A request still at work fires its process's timers in its own turns: the
// process's timers task (for work deferred past every answer) starts only
// once no request of the process is at work. Until 2026-12 it started when
// any request answered, fired a polling duplicate's own `await sleep(100)`,
// and the duplicate, woken with nothing due, read as "never answered" —
// exit 2 on a correct app (src/app/fixtures/poll-key-app.ts).
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const fixture = 'src/app/fixtures/poll-key-app.ts';

describe('an app whose duplicate polls the key with setTimeout while the first request works', () => {
  it('runs: its exhaustive search reaches the schedule limit (inconclusive, exit 4), no run stops; its random campaign holds', async () => {
    const exhaustive = await runMain(['check', '--app', fixture, '--explore', 'exhaustive', '--runs', '20', '--found', tmp('rs-poll-'), '--json']);
    expect(exhaustive.code, exhaustive.err).toBe(4);
    expect(exhaustive.err).not.toContain('never answered');
    expect(JSON.parse(exhaustive.out)).toMatchObject({ verdict: 'inconclusive', complete: false });
    const random = await runMain(['check', '--app', fixture, '--runs', '300', '--found', tmp('rs-poll-')]);
    expect(random.code, random.err).toBe(0);
  }, 120_000);
});
