import { describe, expect, it } from 'vitest';
import { runCli } from '../real/child.js';
import { tempDirs } from '../testing/temp-dirs.js';

// A step (or sleep) reached by code the handler left running — an outbox
// relay's `setInterval` after the answer, an EventEmitter listener's
// queueMicrotask racing the handler's return — belongs to no running request.
// It used to take over whichever kernel task ran: the relay stalled until the
// next request and check wrote "4 shipments for one order" (exit 1), and the
// 202 service's request froze, its recovery printing retrysim's own kernel
// errors as the service's crash. Now one line names it, exit 2, no file.

const tmp = tempDirs();

describe('a sim.step reached outside its request\'s handler is refused in one line', () => {
  it.each([
    ['outbox-relay', /sim\.step\('publish'\) was reached by work that POST \/orders \(s\d\/op\d\.w\d#\d+\) left running after its handler had answered/],
    ['accepted-202', /sim\.step\('work'\) was reached by work that POST \/exports \(s\d\/op\d\.w\d#\d+\) left running while its handler was returning/],
  ])('%s: exit 2, the step and the request named, no counterexample', async (name, line) => {
    const found = tmp('rs-late-step-');
    const r = await runCli(['check', '--service', `src/service/fixtures/late-step/${name}.ts`, '--runs', '30', '--found', found]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(line);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).not.toMatch(/fails|counterexample|trace is closed|kernel:/);
  }, 120_000);

  it('a handler that answers while its own step is in flight (a gateway raced against a timeout) is judged, not refused: exactly-one fails', async () => {
    const found = tmp('rs-late-step-');
    const r = await runCli(['check', '--service', 'src/service/fixtures/late-step/race-timeout.ts', '--runs', '100', '--found', found]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/exactly-one \(op1\): 2 charges/);
  }, 120_000);

  it('two steps of the handler at once (a Promise.all of two helpers that step) are not refused: it holds', async () => {
    const r = await runCli(['check', '--service', 'src/service/fixtures/late-step/parallel-steps.ts', '--runs', '100', '--found', tmp('rs-late-step-')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/parallel-steps \/ one key per operation .* holds/);
  }, 120_000);
});
