import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from './main.js';

/** Runs the CLI in-process; returns the exit code and what it printed. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a) => void err.push(a.join(' ')));
  try {
    const code = await main(args);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    vi.restoreAllMocks();
  }
}

let found: string;
beforeEach(() => {
  found = mkdtempSync(join(tmpdir(), 'found-'));
});
afterEach(() => vi.restoreAllMocks());

describe('retrysim check --service and replay --service on the examples', () => {
  it.each([
    ['payments-check-then-insert', 'refuted'],
    ['lease-without-fencing', 'refuted'],
    ['payments-atomic', 'holds'],
  ] as const)('%s: %s; a counterexample is minimal and replays to its expect', async (name, verdict) => {
    const module = `examples/${name}/service.ts`;
    const r = await cli(['check', '--service', module, '--runs', verdict === 'holds' ? '3000' : '2000', '--expect', verdict, '--found', found, '--json']);
    const j = JSON.parse(r.out) as { verdict: string; ok: boolean; counterexample: string | null; shrunkSize: { operations: number; preemptions: number } | null; violations: string[]; preemptionsMinimal: boolean | null };
    expect(j.verdict, r.err).toBe(verdict);
    expect(r.code).toBe(0);
    expect(j.ok).toBe(true);
    if (verdict === 'holds') {
      expect(j.counterexample).toBeNull();
      // The same verdict without --expect: holds is exit 0.
      return;
    }
    expect(j.violations).toEqual(['exactly-one']);
    expect(j.shrunkSize!.operations).toBe(1);
    expect(j.preemptionsMinimal).toBe(true);
    const replay = await cli(['replay', '--service', module, j.counterexample!]);
    expect(replay.code, replay.out + replay.err).toBe(0);
    expect(replay.out).toContain('expect: met');
    // The file names its module, so a plain replay works too.
    expect((await cli(['replay', j.counterexample!])).code).toBe(0);
    // Without --expect, a refuted service is exit 1, in the table and in --json alike.
    const plain = await cli(['check', '--service', module, '--runs', '2000', '--found', found, '--json']);
    expect(plain.code).toBe(1);
    expect(JSON.parse(plain.out).ok).toBe(false);
  });

  it('a bad service path or flag is one line and exit 2', async () => {
    const r = await cli(['check', '--service', 'examples/nope/service.ts', '--found', found]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^retrysim check: service 'examples\/nope\/service.ts': cannot load: no such file/);
    const k = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--key-source', 'nope']);
    expect(k.code).toBe(2);
    expect(k.err).toContain("--key-source must be one of none, per_attempt, tool_call, business, got 'nope'");
  });
});
