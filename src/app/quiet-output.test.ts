// What a hosted app prints is dropped in simulation, whichever way it
// prints: morgan writes its access log to process.stdout.write, pino (and
// so Fastify's `logger: true` and pino-http) to file descriptor 1 through
// sonic-boom's fs.write / fs.writeSync. Found from the packed tarball:
// an Express app with morgan('combined') printed an access-log line per
// simulated request (453 lines in a 200-run campaign), before the verdict,
// and `check --app … --json` printed them before its JSON, so its stdout
// did not parse. Only console.* was dropped.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LOG_MARK } from './fixtures/access-log-app.js';

const bin = fileURLToPath(new URL('../../bin/retrysim.js', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/access-log-app.ts', import.meta.url));
const run = (env: Record<string, string>) => spawnSync(process.execPath, [bin, 'check', '--app', fixture, '--runs', '5', '--faults', 'loseResponse,concurrency', '--json', '--found', fileURLToPath(new URL('../../.retrysim/test-quiet-output', import.meta.url))], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, RETRYSIM_APP_PER_PROCESS: '', ...env } });

describe("a hosted app's loggers do not write into retrysim's output", () => {
  it('check --app --json: stdout is the JSON alone, stderr has no log line', () => {
    const p = run({ RETRYSIM_APP_LOGS: '' });
    expect(p.stdout).not.toContain(LOG_MARK);
    expect(p.stderr).not.toContain(LOG_MARK);
    expect((JSON.parse(p.stdout) as { verdict: string }).verdict).toBe('holds');
    expect(p.status, p.stderr).toBe(0);
  }, 120_000);

  it('RETRYSIM_APP_LOGS=1 keeps them, every way they were written', () => {
    const p = run({ RETRYSIM_APP_LOGS: '1' });
    for (const how of ['morgan', 'pino async', 'pino sync']) expect(p.stdout).toContain(`${LOG_MARK} ${how}`);
    expect(p.stderr).toContain(`${LOG_MARK} stderr`);
  }, 120_000);
});
