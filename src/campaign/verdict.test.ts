import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeOf, shortfallText, verdictWithoutFailure } from './verdict.js';

describe('verdict words and exit codes (one place for table, --json and exit code)', () => {
  it('exit codes are the documented ones: 0 ok, 1 unexpected, 2 bad input, 3 divergence, 4 inconclusive', () => {
    expect(EXIT).toEqual({ ok: 0, unexpected: 1, badInput: 2, divergence: 3, inconclusive: 4 });
  });

  it('a search without failure holds only when it did all it was asked', () => {
    expect(verdictWithoutFailure(true)).toBe('holds');
    expect(verdictWithoutFailure(false)).toBe('inconclusive');
  });

  it('the shortfall sentence says done of asked, the unit and what stopped it', () => {
    expect(shortfallText({ done: 0, asked: 100000, unit: 'runs', stoppedBy: 'time budget 1 ms' }))
      .toBe('inconclusive: 0 of 100000 runs (stopped by time budget 1 ms); no failure found, but the search did not finish');
    // A time budget alone asked for "as many as fit": no "of".
    expect(shortfallText({ done: 7, asked: null, unit: 'runs', stoppedBy: 'time budget 5 ms' }))
      .toBe('inconclusive: 7 runs (stopped by time budget 5 ms); no failure found, but the search did not finish');
    // A schedule limit is per scenario, so the total is not "of" it.
    expect(shortfallText({ done: 40, asked: 20, unit: 'schedules', stoppedBy: 'the schedule limit of 20 per small scenario' }))
      .toBe('inconclusive: 40 schedules (stopped by the schedule limit of 20 per small scenario); no failure found, but the search did not finish');
  });

  it('several rows: an unexpected row decides 1 over an inconclusive one (4), and only all-ok rows give 0', () => {
    const ok = { ok: true, inconclusive: false };
    const bad = { ok: false, inconclusive: false };
    const short = { ok: false, inconclusive: true };
    expect(exitCodeOf([])).toBe(0);
    expect(exitCodeOf([ok, ok])).toBe(0);
    expect(exitCodeOf([ok, short])).toBe(4);
    expect(exitCodeOf([short, ok])).toBe(4);
    expect(exitCodeOf([ok, bad])).toBe(1);
    expect(exitCodeOf([short, bad, ok])).toBe(1);
    expect(exitCodeOf([bad, short])).toBe(1);
  });
});
