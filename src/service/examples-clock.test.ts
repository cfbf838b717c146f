import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';
import { runMain } from '../testing/cli.js';

const tmp = tempDirs();

const cli = (args: string[]) => runMain(args);
afterEach(() => vi.restoreAllMocks());

function onlyFile(dir: string): string {
  const files = readdirSync(dir);
  expect(files).toHaveLength(1);
  return join(dir, files[0]!);
}

describe("a user's service on the kernel's clock, through the CLI", () => {
  it('ttl-from-date-now: a key TTL computed from Date.now() fails; the same seed writes the same file twice, and it replays (exit 0)', async () => {
    const module = 'examples/ttl-from-date-now/service.ts';
    const [a, b] = [tmp('ttl-a-'), tmp('ttl-b-')];
    const r1 = await cli(['check', '--service', module, '--runs', '200', '--seed', '1', '--found', a]);
    expect(r1.code, r1.err).toBe(1);
    expect(r1.out).toMatch(/exactly-one \(op1\): 2 payments/);
    const r2 = await cli(['check', '--service', module, '--runs', '200', '--seed', '1', '--found', b]);
    expect(r2.code, r2.err).toBe(1);
    const [fa, fb] = [onlyFile(a), onlyFile(b)];
    expect(readFileSync(fb, 'utf8')).toBe(readFileSync(fa, 'utf8'));
    const rp = await cli(['replay', '--service', module, fa]);
    expect(rp.code, rp.err + rp.out).toBe(0);
    expect(Date.now()).toBeGreaterThan(1.7e12); // real-time: allowed (the CLI left the real clock behind)
  });

  it('unique-constraint-race: the twin\'s UNIQUE violation answers 500, the duplicate order is judged, and the exception is one trace line', async () => {
    const module = 'examples/unique-constraint-race/service.ts';
    const dir = tmp('ucr-');
    const r = await cli(['check', '--service', module, '--runs', '200', '--found', dir]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/exactly-one \(op1\): 2 orders/);
    const rp = await cli(['replay', '--service', module, onlyFile(dir), '--trace']);
    expect(rp.code, rp.err).toBe(0);
    const threw = rp.out.split('\n').filter((l) => l.includes(' threw '));
    expect(threw).toHaveLength(1);
    expect(threw[0]).toMatch(/s0\/op1\.w\d#\d+ +threw SqliteError: UNIQUE constraint failed: idempotency_keys\.key \(at .*examples\/unique-constraint-race\/service\.ts:\d+:\d+\)\)?$/);
    expect(rp.out).toMatch(/answer 500 .*internal error: SqliteError: UNIQUE constraint failed/);
  });
});
