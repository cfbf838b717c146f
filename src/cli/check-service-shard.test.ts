import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

/** `check --service --json` or `merge --json`, parsed, with what differs between machines (wall time, where files went) taken out. */
async function json(args: string[]): Promise<{ code: number; j: Record<string, unknown> }> {
  const r = await runMain([...args, '--json']);
  const j = JSON.parse(r.out) as Record<string, unknown>;
  delete j.firstFailureMs;
  for (const k of ['counterexample', 'replay'] as const) if (typeof j[k] === 'string') j[k] = basename(j[k] as string);
  return { code: r.code, j };
}

/** Runs shards 1..n of a campaign; resolves to their --out files. */
async function shards(args: string[], n: number, dir: string): Promise<string[]> {
  const files: string[] = [];
  for (let i = 1; i <= n; i++) {
    const out = join(dir, `shard-${i}.json`);
    const r = await runMain([...args, '--shard', `${i}/${n}`, '--out', out, '--found', join(dir, `found-${i}`)]);
    expect(r.code, r.err).toBe(0); // a shard that ran exits 0, whatever its slice found: verdicts are merge's
    files.push(out);
  }
  return files;
}

describe('check --service --shard I/N --out FILE, then retrysim merge', () => {
  it('a holding service: the merged --json is the unsharded one, coverage counts included', async () => {
    const dir = tmp('rs-svc-shard-');
    const args = ['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '200'];
    const files = await shards(args, 3, dir);
    const merged = await json(['merge', ...files]);
    const whole = await json([...args, '--found', join(dir, 'whole')]);
    expect(merged.code).toBe(0);
    expect(merged.j).toEqual(whole.j);
    expect(merged.j.verdict).toBe('holds');
    expect(merged.j.runs).toBe(200);
  });

  it('a failing service: the shard owning run 77 finds it there, and merge gives the unsharded failure and counterexample', async () => {
    const dir = tmp('rs-svc-shard-');
    // 300 runs: every shard finds a failure of its own (runs 201, 77, 163); merge must take the first.
    const args = ['check', '--service', 'examples/three-way-race/service.ts', '--runs', '300'];
    const files = await shards(args, 3, dir);
    const merged = await json(['merge', files[2]!, files[0]!, files[1]!]);
    const whole = await json([...args, '--found', join(dir, 'whole')]);
    expect(merged.code).toBe(1);
    expect(merged.j).toEqual(whole.j);
    expect(merged.j.firstFailureRun).toBe(77);
    const text = await runMain(['merge', ...files]);
    expect(text.out).toMatch(/│ ✗ │ three-way-race \/ one key per operation │ 77 +│ fails/);
    expect(text.out).toContain(`replay: retrysim replay --service examples/three-way-race/service.ts ${join(dir, 'found-2')}/`);
  });

  it('a shard whose runs fail: exit 0 (the shard ran), and its --json and its last line say why the code is 0 — the table, ok: false and exit 0 disagreed', async () => {
    const dir = tmp('rs-svc-shard-');
    const args = ['check', '--service', 'examples/three-way-race/service.ts', '--runs', '300', '--shard', '2/3', '--out', join(dir, 's.json'), '--found', dir];
    const j = await json(args);
    expect(j.code).toBe(0);
    expect(j.j).toMatchObject({ verdict: 'fails', ok: false, shard: { index: 2, count: 3, exitCode: 0, covers: expect.stringMatching(/^this shard's runs only: retrysim merge .* gives the campaign's verdict and exit code$/) } });
    const text = await runMain(args);
    expect(text.code).toBe(0);
    expect(text.out + text.err).toContain("shard 2/3: the verdict above covers this shard's runs only; retrysim merge gives the campaign's (exit 0: the shard ran)");
    // The unsharded --json has no shard field.
    expect((await json(['check', '--service', 'examples/three-way-race/service.ts', '--runs', '100', '--found', dir])).j.shard).toBeUndefined();
  });

  it('refuses a missing shard, a shard given twice, another campaign, a claim shard beside it and counts no shard writes; nothing is printed but the line', async () => {
    const dir = tmp('rs-svc-shard-');
    const args = ['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '100'];
    const files = await shards(args, 2, dir);
    const refused = async (names: string[], why: RegExp) => {
      const r = await runMain(['merge', ...names]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(why);
      expect(r.err.split('\n')).toHaveLength(1);
    };
    await refused([files[0]!], /^retrysim merge: missing shard 2\/2 of the campaign of /);
    await refused([files[0]!, files[0]!, files[1]!], /shard 1\/2 is given twice/);
    const other = join(dir, 'other.json');
    await runMain([...args.slice(0, -1), '101', '--shard', '2/2', '--out', other]);
    await refused([files[0]!, other], /not the campaign of .*shard-1\.json/);
    const edited = JSON.parse(readFileSync(files[1]!, 'utf8')) as { result: { runs: number; coverage: { rows: Array<{ runs: number }> } } };
    edited.result.runs += 1;
    const more = join(dir, 'edited.json');
    writeFileSync(more, JSON.stringify(edited));
    await refused([files[0]!, more], /edited\.json \(shard 2\/2\): says it ran 37 runs, but it owns 36 of the 100 generated/);
    edited.result.runs -= 1;
    edited.result.coverage.rows[0]!.runs = 99;
    writeFileSync(more, JSON.stringify(edited));
    await refused([files[0]!, more], /coverage counts 99 runs reaching .*, more than the 36 it ran/);
    const claim = join(dir, 'claim.json');
    await runMain(['check', '--claim', 'naive-none-fails', '--runs', '10', '--shard', '1/1', '--out', claim, '--found', join(dir, 'cf')]);
    await refused([files[0]!, files[1]!, claim], /claim\.json: not a retrysim\.service-shard\/1 file, unlike .*shard-1\.json/);
  });

  it('--shard needs --out, and is not for --explore exhaustive', async () => {
    const a = await runMain(['check', '--service', 'examples/payments-atomic/service.ts', '--shard', '1/2']);
    expect([a.code, a.err]).toEqual([2, 'retrysim check: --shard needs --out FILE (merge the shards with retrysim merge)']);
    const b = await runMain(['check', '--service', 'examples/payments-atomic/service.ts', '--shard', '1/2', '--out', 'x.json', '--explore', 'exhaustive']);
    expect([b.code, b.err]).toEqual([2, 'retrysim check: --shard splits generated campaigns (random, pct); --explore exhaustive is not sharded']);
    const c = await runMain(['check', '--service', 'examples/payments-atomic/service.ts', '--shard', '3/2', '--out', 'x.json']);
    expect([c.code, c.err]).toEqual([2, "retrysim check: --shard must be I/N with 1 <= I <= N (or auto), got '3/2'"]);
  });
});
