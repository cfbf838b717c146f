// The first module loaded afresh in a process (one load per simulated
// client process) registered tsx's loader, which mints its id with
// node:crypto's randomUUID — inside a run, a draw from the run's seeded
// stream. That run's keys came out one draw later than every other run's:
// a campaign (many loads) and the replay of its per-process counterexample
// in a fresh process (its first load) gave two traces for one file. This
// file runs in a worker of its own, so the load below is its process's first.
import { describe, expect, it } from 'vitest';
import { freshClientLoader, loadClient } from './load.js';
import { runClientScenario } from './run.js';
import { ListChoice } from '../sim/choice/list.js';
import { fc, clientCases } from '../vitest.js';

const PATH = 'src/client/fixtures/module-limiter.ts';

describe('one load of a client module per simulated client process', () => {
  it('the first fresh load in a process draws nothing from the run\'s stream: its run has the keys and trace of every later run of the same case', async () => {
    const client = await loadClient(PATH);
    const [c] = fc.sample(clientCases({ faults: ['crash'] }), { seed: 1, numRuns: 1 });
    const run = () => runClientScenario(c!.scenario, client, { choices: new ListChoice(c!.choices), perProcess: freshClientLoader(PATH, client.name) });
    const first = await run();
    const second = await run();
    const keys = (r: typeof first) => r.workers.flatMap((w) => w.sent.map((q) => q.key));
    expect(keys(first).length).toBeGreaterThan(0);
    expect(keys(first)).toEqual(keys(second));
    expect(first.result.traceHash).toBe(second.result.traceHash);
  }, 60_000);
});
