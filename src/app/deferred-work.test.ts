// Work a hosted app defers past its answer (202 Accepted, then a timer
// writes the effect) must run on virtual time even when no later request
// reaches the instance: in Node the process's timer fires 200 ms later. Until
// 2026-12 an app's timers fired only inside a later request's turns, so with
// no faults at all the campaign read "fails" (the acknowledged id "does not
// exist"). A kill before the timer still loses the work (a dead process's
// timers never fire): that failure is real and must still be found.
import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { appService } from './define.js';
import { descriptor } from './fixtures/accepted-later.js';

const service = (repeat: boolean) => appService(descriptor(repeat));

describe('a hosted app that answers 202 and finishes the work from a timer', () => {
  it('holds while nothing kills the process (the timer fires after the last request)', async () => {
    const r = await runServiceCampaign({ def: service(false), module: 'deferred', runs: 40, seed: 1, faults: ['loseResponse', 'concurrency'] });
    expect(r.verdict).toBe('holds');
  }, 60_000);

  it('a timer that re-arms itself after the run does not keep it going', async () => {
    const r = await runServiceCampaign({ def: service(true), module: 'deferred', runs: 20, seed: 1, faults: ['loseResponse'] });

    expect(r.verdict).toBe('holds');
  }, 60_000);

  it('fails id-exists when a kill lands between the answer and the timer', async () => {
    const r = await runServiceCampaign({ def: service(false), module: 'deferred', runs: 300, seed: 1, faults: ['kill'] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('id-exists');
  }, 60_000);
});
