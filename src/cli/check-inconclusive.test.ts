import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const bin = join(import.meta.dirname, '..', '..', 'bin', 'retrysim.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const HOLDS = 'key_atomic-tool_call-holds';

interface Row { claim: string; verdict: string; ok: boolean; runs: number; asked: number | null; shortfall?: { done: number; asked: number; unit: string }; complete?: boolean }

/** The command after "to conclude: " or "reproduce: " in a text report, as argv for the bin. */
function printed(out: string, what: 'to conclude' | 'reproduce'): string[] {
  const line = out.split('\n').find((l) => l.trim().startsWith(`${what}: retrysim `));
  expect(line, `no '${what}:' line in:\n${out}`).toBeDefined();
  return line!.trim().slice(`${what}: retrysim `.length).split(/\s+/);
}

describe('inconclusive verdicts (DESIGN invariant 9: fewer runs than asked is never a ✓)', () => {
  it('--time-budget that stops a holding claim short: inconclusive in the table, --json and exit 4, and the printed command runs and concludes', () => {
    const d = tmp('rs-inc-');
    // A budget alone asks for the main job's runs; 1 ms cannot hold them.
    const alone = cli('check', '--time-budget', '1ms', '--claim', HOLDS, '--workers', '1', '--json', '--found', d);
    expect(alone.status, alone.stderr).toBe(4);
    const [a] = JSON.parse(alone.stdout) as Row[];
    expect(a!.verdict).toBe('inconclusive');
    expect(a!.ok).toBe(false);
    expect(a!.shortfall!.done).toBeLessThan(a!.shortfall!.asked);
    // With --runs, the budget caps them: same verdict in the table.
    const capped = cli('check', '--time-budget', '1ms', '--runs', '40', '--claim', HOLDS, '--workers', '1', '--found', d);
    expect(capped.status, capped.stderr).toBe(4);
    expect(capped.stdout).toMatch(/│ \? │ key_atomic \/ tool_call .* inconclusive/);
    expect(capped.stdout).toMatch(/inconclusive: \d+ of 40 runs \(stopped by time budget 1 ms\)/);
    expect(capped.stdout).not.toMatch(/│ ✓ │/);
    const conclude = printed(capped.stdout, 'to conclude');
    expect(conclude).toEqual(['check', '--seed', '1', '--claim', HOLDS, '--runs', '40']);
    const done = cli(...conclude, '--workers', '1', '--json', '--found', d);
    expect(done.status, done.stderr).toBe(0);
    expect((JSON.parse(done.stdout) as Row[])[0]!).toMatchObject({ verdict: 'holds', ok: true, runs: 40, asked: 40 });
  });

  it('an exhaustive search stopped by its schedule limit is inconclusive (exit 4), not "holds"', () => {
    const d = tmp('rs-inc-');
    const args = ['check', '--explore', 'exhaustive', '--runs', '3', '--claim', HOLDS, '--found', d];
    const json = cli(...args, '--json');
    expect(json.status, json.stderr).toBe(4);
    const [r] = JSON.parse(json.stdout) as Row[];
    expect(r).toMatchObject({ verdict: 'inconclusive', ok: false, complete: false, asked: 3 });
    expect(r!.shortfall!.unit).toBe('schedules');
    const text = cli(...args);
    expect(text.status).toBe(4);
    expect(text.stdout).toMatch(/│ \? │ key_atomic \/ tool_call .* inconclusive/);
    expect(text.stdout).toMatch(/stopped by the schedule limit of 3 per small scenario/);
    // The printed reproduce line reruns the same search: the same verdict.
    const again = cli(...printed(text.stdout, 'reproduce'), '--json', '--found', d);
    expect(again.status).toBe(4);
    // With room for every schedule it holds.
    expect(cli('check', '--explore', 'exhaustive', '--claim', HOLDS, '--json', '--found', d).status).toBe(0);
  });

  it('merge refuses a shard whose counts check cannot have written (exit 2, naming file, claim and numbers), and a short shard makes the claim inconclusive', () => {
    const d = tmp('rs-inc-');
    const common = ['check', '--claim', HOLDS, '--runs', '300', '--seed', '3', '--workers', '1', '--found', join(d, 'f')];
    const s1 = cli(...common, '--shard', '1/2', '--out', join(d, 's1.json'));
    const s2 = cli(...common, '--shard', '2/2', '--out', join(d, 's2.json'));
    expect(s1.status, s1.stderr).toBe(0);
    expect(s2.status, s2.stderr).toBe(0);
    const ok = cli('merge', join(d, 's1.json'), join(d, 's2.json'), '--json');
    expect(ok.status, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as Row[])[0]).toMatchObject({ verdict: 'holds', runs: 300 });
    // Hand-edited: one run more than shard 2 of a 300-run campaign owns (indices dealt in blocks of 64: 128).
    const f = JSON.parse(readFileSync(join(d, 's2.json'), 'utf8')) as { results: Array<{ runs: number }> };
    expect(f.results[0]!.runs).toBe(128);
    f.results[0]!.runs = 129;
    writeFileSync(join(d, 'edited.json'), JSON.stringify(f));
    const edited = cli('merge', join(d, 's1.json'), join(d, 'edited.json'));
    expect(edited.status).toBe(2);
    expect(edited.stderr).toMatch(/edited\.json: claim key_atomic-tool_call-holds: 129 runs, but shard 2\/2 of a 300-run campaign owns 128/);
    expect(edited.stdout).toBe('');
    // One fewer, without a failure or a budget, is refused too.
    f.results[0]!.runs = 127;
    writeFileSync(join(d, 'edited.json'), JSON.stringify(f));
    expect(cli('merge', join(d, 's1.json'), join(d, 'edited.json')).status).toBe(2);
    // Shards that a time budget really stopped short: inconclusive, as check says it.
    const budget = [...common, '--time-budget', '1ms'];
    expect(cli(...budget, '--shard', '1/2', '--out', join(d, 't1.json')).status).toBe(0);
    expect(cli(...budget, '--shard', '2/2', '--out', join(d, 't2.json')).status).toBe(0);
    const short = cli('merge', join(d, 't1.json'), join(d, 't2.json'), '--json');
    expect(short.status, short.stderr).toBe(4);
    expect((JSON.parse(short.stdout) as Row[])[0]!.verdict).toBe('inconclusive');
  });
});
