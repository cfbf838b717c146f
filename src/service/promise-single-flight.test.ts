import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';

const MODULE = 'src/service/fixtures/promise-single-flight.ts';

describe('an in-process single flight of plain promises in memory() (a duplicate awaits the first request\'s promise)', () => {
  it('runs as in Node: check --service holds (exit 0), with duplicates inside the service at once — it was "never answered: … a promise nobody resolves", exit 2', async () => {
    const found = mkdtempSync(join(tmpdir(), 'found-'));
    const r = await runMain(['check', '--service', MODULE, '--runs', '200', '--found', found, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; ok: boolean; coverage: { rows: Array<{ id: string; runs: number }> } };
    expect(j).toMatchObject({ verdict: 'holds', ok: true });
    // Duplicates did meet inside the service: the map's waiting path ran.
    expect(j.coverage.rows.find((x) => x.id === 'overlap:2')?.runs).toBeGreaterThan(0);
  }, 60_000);

  it('every schedule of its small scenarios holds too', async () => {
    const r = await runMain(['check', '--service', MODULE, '--explore', 'exhaustive', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'holds', complete: true });
  }, 60_000);
});
