import { describe, expect, test } from 'vitest';
import { runServiceCampaign, serviceFaults } from '../src/service/campaign.js';
import ttl from './fixtures/key-ttl-30s.js';
import threeWay from '../examples/three-way-race/service.js';

/**
 * The generator's reach in time and in concurrency: a key TTL of 30 s and a
 * race that needs three same-key requests at once are found only through
 * the `longSpans` and `threeWorkers` dimensions (both in the standard fault
 * space of `retrysim check --service`).
 */
describe('long time spans', () => {
  test('a 30 s key TTL is found (a retry or a stalled duplicate more than 30 s after the commit makes a second order)', async () => {
    const r = await runServiceCampaign({ def: ttl, module: 'properties/fixtures/key-ttl-30s.ts', runs: 300, seed: 1 });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  });

  test('without the longSpans dimension the same TTL holds: everything else stays within ~10 s', async () => {
    const faults = serviceFaults(ttl).filter((f) => f !== 'longSpans');
    const r = await runServiceCampaign({ def: ttl, module: 'properties/fixtures/key-ttl-30s.ts', runs: 600, seed: 1, faults });
    expect(r.verdict).toBe('holds');
  }, 60_000);
});

describe('three concurrent same-key requests', () => {
  test('a race only three copies at once reach is found, and its counterexample keeps three workers', async () => {
    const r = await runServiceCampaign({ def: threeWay, module: 'examples/three-way-race/service.ts', runs: 500, seed: 1 });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(r.counterexample!.size).toMatchObject({ operations: 1, workers: 3 });
  });
});
