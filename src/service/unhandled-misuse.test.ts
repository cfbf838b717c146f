// What a service's own unhandled rejection does to a campaign. retrysim's
// refusal of a step inside an open transaction, thrown inside an async
// function handed to db.transaction(), is the campaign's one line, exit 2
// (it was a process crash on every run: "no request answered 2xx",
// inconclusive). And a campaign in which every process crashed of the
// service's own rejection says what crashed it (it said "answers: none").
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('a service\'s unhandled rejection', () => {
  it('retrysim\'s refusal of the module, unhandled (an async function given to db.transaction): one line, exit 2', async () => {
    const r = await runMain(['check', '--service', 'src/service/fixtures/async-transaction.ts', '--runs', '50', '--found', tmp('rs-misuse-')]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      "retrysim check: service 'async-transaction': sim.step('write') was called inside an open transaction (POST /t); steps go between transactions, never inside one (a function given to db.transaction() runs synchronously: an async one runs up to its first await inside the transaction)",
    ]);
  }, 60_000);

  it('every process crashed of the service\'s own rejection: the inconclusive line names it', async () => {
    const r = await runMain(['check', '--service', 'src/service/fixtures/crashes-on-every-request.ts', '--runs', '50', '--found', tmp('rs-misuse-'), '--json']);
    expect(r.code, r.err).toBe(4);
    const j = JSON.parse(r.out) as { verdict: string; why: string[] };
    expect(j.verdict).toBe('inconclusive');
    expect(j.why.join('\n')).toMatch(/\(answers: none\); its process crashed \(unhandled rejection: Error: config missing: NOTIFY_URL \(at notify \(.*crashes-on-every-request\.ts:\d+:\d+\)\)\)/);
  }, 60_000);
});
