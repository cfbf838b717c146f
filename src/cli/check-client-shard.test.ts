import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const CLIENT = 'examples/fetch-retry-client/client.ts';

/** `check --client --json` or `merge --json`, parsed, with where files went (the found dirs differ by shard) and the wall time taken out. */
async function json(args: string[]): Promise<{ code: number; j: Record<string, unknown> }> {
  const r = await runMain([...args, '--json']);
  if (r.out === '') throw new Error(`no JSON (exit ${r.code}): ${r.err}`);
  const j = JSON.parse(r.out) as Record<string, unknown>;
  delete j.firstFailureMs;
  if (typeof j.counterexample === 'string') j.counterexample = basename(j.counterexample);
  if (typeof j.replay === 'string') j.replay = (j.replay as string).replace(/ \S+\/([^/ ]+\.json)/, ' $1');
  return { code: r.code, j };
}

/** Runs shards 1..n of a client campaign; resolves to their --out files. */
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

describe('check --client --shard I/N --out FILE, then retrysim merge', () => {
  it('a failing client: the shard owning run 79 finds it there, and merge gives the unsharded first failure and counterexample', async () => {
    const dir = tmp('rs-client-shard-');
    // The fixed client against a service whose lease has no fence: it fails at run 79 of seed 2 (index 78, the second block of 64: shard 2's).
    const args = ['check', '--client', CLIENT, '--name', 'fetch-retry-client-fixed', '--service', 'examples/lease-without-fencing/service.ts', '--runs', '300', '--seed', '2'];
    const files = await shards(args, 3, dir);
    const merged = await json(['merge', files[2]!, files[0]!, files[1]!]);
    const whole = await json([...args, '--found', join(dir, 'whole')]);
    expect(merged.code).toBe(1);
    expect(merged.j).toEqual(whole.j);
    expect(merged.j.firstFailureRun).toBe(79);
    // The counterexample the merge names is the one shard 2 wrote, the very file the unsharded run writes.
    const text = await runMain(['merge', ...files]);
    expect(text.out).toMatch(/│ ✗ │ fetch-retry-client-fixed │ 79 +│ fails +│ run 79/);
    const named = /(\S+found-2\/\S+\.json)/.exec(text.out)![1]!;
    expect(readFileSync(named, 'utf8')).toBe(readFileSync(join(dir, 'whole', basename(named)), 'utf8'));
    expect(text.out).toContain(`replay: retrysim replay --client ${CLIENT} ${named} --trace`);
  });

  it('a shard whose runs fail: exit 0 (the shard ran), and its --json (shard.exitCode) and its last line say so', async () => {
    const dir = tmp('rs-client-shard-');
    const args = ['check', '--client', CLIENT, '--runs', '100', '--shard', '1/2', '--out', join(dir, 's.json'), '--found', dir];
    const j = await json(args);
    expect(j.code).toBe(0);
    expect(j.j).toMatchObject({ verdict: 'fails', ok: false, shard: { index: 1, count: 2, exitCode: 0 } });
    const text = await runMain(args);
    expect(text.code).toBe(0);
    expect(text.out + text.err).toContain("shard 1/2: the verdict above covers this shard's runs only; retrysim merge gives the campaign's (exit 0: the shard ran)");
  });

  it('a holding client: the merged --json is the unsharded one, coverage counts included', async () => {
    const dir = tmp('rs-client-shard-');
    const args = ['check', '--client', CLIENT, '--name', 'fetch-retry-client-fixed', '--runs', '150'];
    const files = await shards(args, 3, dir);
    const merged = await json(['merge', ...files]);
    const whole = await json([...args, '--found', join(dir, 'whole')]);
    expect(merged.code).toBe(0);
    expect(merged.j).toEqual(whole.j);
    expect(merged.j.verdict).toBe('holds');
    expect(merged.j.runs).toBe(150);
  });

  it('shards a time budget stopped short merge to inconclusive, exit 4, with a command that concludes', async () => {
    const dir = tmp('rs-client-shard-');
    // 300 runs of a client cannot fit in 1 ms: each shard stops long before its share.
    const files = await shards(['check', '--client', CLIENT, '--runs', '300', '--time-budget', '1ms'], 2, dir);
    const merged = await json(['merge', ...files]);
    expect(merged.code).toBe(4);
    expect(merged.j.verdict).toBe('inconclusive');
    expect(merged.j.why).toEqual([expect.stringMatching(/^inconclusive: \d+ of 300 scenarios ran \(the time budget ran out\)$/)]);
    const text = await runMain(['merge', ...files]);
    expect(text.out).toContain(`to conclude: give it the runs, e.g. retrysim check --client ${CLIENT} --runs 300`);
  });

  it('refuses a hand-edited shard, a missing one, one given twice, another campaign and a service shard beside it: one line, exit 2, nothing else printed', async () => {
    const dir = tmp('rs-client-shard-');
    const args = ['check', '--client', CLIENT, '--name', 'fetch-retry-client-fixed', '--runs', '100'];
    const files = await shards(args, 2, dir);
    const refused = async (names: string[], why: RegExp) => {
      const r = await runMain(['merge', ...names]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(why);
      expect(r.err.split('\n')).toHaveLength(1);
    };
    const edited = JSON.parse(readFileSync(files[1]!, 'utf8')) as { result: { runs: number; coverage: { rows: Array<{ runs: number }> } } };
    edited.result.runs += 1;
    const more = join(dir, 'edited.json');
    writeFileSync(more, JSON.stringify(edited));
    await refused([files[0]!, more], /^retrysim merge: .*edited\.json \(shard 2\/2\): says it ran 37 runs, but it owns 36 of the 100 generated$/);
    edited.result.runs -= 1;
    edited.result.coverage.rows[0]!.runs = 99;
    writeFileSync(more, JSON.stringify(edited));
    await refused([files[0]!, more], /coverage counts 99 runs reaching .*, more than the 36 it ran/);
    await refused([files[0]!], /^retrysim merge: missing shard 2\/2 of the campaign of /);
    await refused([files[0]!, files[0]!, files[1]!], /shard 1\/2 is given twice/);
    const other = join(dir, 'other.json');
    expect((await runMain([...args.slice(0, -1), '101', '--shard', '2/2', '--out', other, '--found', join(dir, 'of')])).code).toBe(0);
    await refused([files[0]!, other], /other\.json: not the campaign of .*shard-1\.json/);
    const service = join(dir, 'service.json');
    expect((await runMain(['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '10', '--shard', '1/1', '--out', service, '--found', join(dir, 'sf')])).code).toBe(0);
    await refused([service, files[0]!, files[1]!], /shard-1\.json: not a retrysim\.service-shard\/1 file, unlike .*service\.json/);
  });

  it('a client that holds only with one shared load: shard 1 runs the per-process probe, and merge gives check\'s verdict (fails, moduleLoads per-process, the same why); a shard 1 without the probe is refused', async () => {
    const dir = tmp('rs-client-shard-');
    const args = ['check', '--client', 'src/client/fixtures/module-counter.ts', '--runs', '30'];
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    try {
      const files = await shards(args, 2, dir);
      const shard1 = JSON.parse(readFileSync(files[0]!, 'utf8')) as { moduleProbe?: { runs: number; result: { verdict: string } } };
      expect(shard1.moduleProbe).toMatchObject({ runs: 30, result: { verdict: 'fails' } });
      expect('moduleProbe' in (JSON.parse(readFileSync(files[1]!, 'utf8')) as object)).toBe(false);
      const merged = await json(['merge', ...files]);
      const whole = await json([...args, '--found', join(dir, 'whole')]);
      expect(merged.code).toBe(1);
      expect(whole.code).toBe(1);
      expect(merged.j).toEqual(whole.j);
      expect(merged.j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process', violations: ['key-reuse'] });
      expect((merged.j.why as string[])[0]).toMatch(/^client 'counter-key' holds only because its simulated calls share module-level state/);
      // The merged line replays shard 1's probe file with no variable set (the file says client.moduleLoads).
      const text = await runMain(['merge', ...files]);
      const line = /replay: (retrysim replay .*)$/m.exec(text.out)![1]!;
      const again = await runMain(line.replace(/^retrysim /, '').replace(/ --trace$/, '').split(' ').concat('--json'));
      expect(again.code, again.err).toBe(0);
      expect(JSON.parse(again.out)).toMatchObject({ expectMet: true, moduleLoads: 'per-process' });

      const { moduleProbe: _p, ...older } = JSON.parse(readFileSync(files[0]!, 'utf8')) as Record<string, unknown>;
      const edited = join(dir, 'older.json');
      writeFileSync(edited, JSON.stringify(older));
      const r = await runMain(['merge', edited, files[1]!]);
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toMatch(/older\.json \(shard 1\/2\): a client's shard 1 without a failure carries no per-process module probe/);
    } finally {
      vi.unstubAllEnvs();
    }
  }, 120_000);

  it('shards run with RETRYSIM_APP_PER_PROCESS=1 merge to the unsharded per-process verdict (moduleLoads per-process); mixed with a once-loaded shard they are refused', async () => {
    const dir = tmp('rs-client-shard-');
    const args = ['check', '--client', 'src/client/fixtures/module-counter.ts', '--runs', '30'];
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '1');
    try {
      const files = await shards(args, 2, dir);
      const merged = await json(['merge', ...files]);
      const whole = await json([...args, '--found', join(dir, 'whole')]);
      expect(merged.code).toBe(1);
      expect(merged.j).toEqual(whole.j);
      expect(merged.j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process', violations: ['key-reuse'] });
      // The shard's file says how the client loads (client.moduleLoads): the merged line needs no variable.
      expect(merged.j.replay).toMatch(/^retrysim replay /);
      vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
      const once = join(dir, 'once.json');
      expect((await runMain([...args, '--shard', '2/2', '--out', once, '--found', join(dir, 'of')])).code).toBe(0);
      const r = await runMain(['merge', files[0]!, once]);
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toMatch(/once\.json: not the campaign of .*shard-1\.json \(.*module loads must all match\)$/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('--shard needs --out, is not for --explore exhaustive, and must name a shard', async () => {
    const a = await runMain(['check', '--client', CLIENT, '--shard', '1/2']);
    expect([a.code, a.err]).toEqual([2, 'retrysim check: --shard needs --out FILE (merge the shards with retrysim merge)']);
    const b = await runMain(['check', '--client', CLIENT, '--shard', '1/2', '--out', 'x.json', '--explore', 'exhaustive']);
    expect([b.code, b.err]).toEqual([2, 'retrysim check: --shard splits generated campaigns (random, pct); --explore exhaustive is not sharded']);
    const c = await runMain(['check', '--client', CLIENT, '--shard', '0/2', '--out', 'x.json']);
    expect([c.code, c.err]).toEqual([2, "retrysim check: --shard must be I/N with 1 <= I <= N (or auto), got '0/2'"]);
  });
});
