import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { Kernel } from './kernel.js';
import { runCounterRace } from './demo-model.js';
import { ReplayChoice, ReplayDivergenceError } from './choice/replay.js';
import { ListChoice } from './choice/list.js';
import { DeadlockError, SimLimitError } from './errors.js';

describe('Kernel determinism', () => {
  it('the same seed gives an identical trace hash; different seeds differ', async () => {
    const a = await runCounterRace({ seed: 5, workers: 4, rounds: 3 });
    const b = await runCounterRace({ seed: 5, workers: 4, rounds: 3 });
    expect(b.result.traceHash).toBe(a.result.traceHash);
    const hashes = new Set<string>();
    for (let s = 0; s < 10; s++) hashes.add((await runCounterRace({ seed: s, workers: 4, rounds: 3 })).result.traceHash);
    expect(hashes.size).toBeGreaterThan(5);
  });

  it('two separate processes agree on the trace hash', async () => {
    const local = await runCounterRace({ seed: 99, workers: 4, rounds: 3 });
    const script = `import { runCounterRace } from './src/sim/demo-model.ts';
      const r = await runCounterRace({ seed: 99, workers: 4, rounds: 3 }); console.log(r.result.traceHash);`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.trim()).toBe(local.result.traceHash);
  });

  it('a recorded random run replays from its choice list to the identical trace', async () => {
    for (let seed = 0; seed < 20; seed++) {
      const rec = await runCounterRace({ seed, workers: 3, rounds: 3 });
      const rep = await runCounterRace({ seed, workers: 3, rounds: 3, choices: new ReplayChoice(rec.result.choices) });
      expect(rep.result.traceHash).toBe(rec.result.traceHash);
      expect(rep.counter).toBe(rec.counter);
    }
  });

  it('a replay that meets different candidates reports divergence instead of running something else', async () => {
    const rec = await runCounterRace({ seed: 1, workers: 3 });
    await expect(runCounterRace({ seed: 1, workers: 2, choices: new ReplayChoice(rec.result.choices) })).rejects.toBeInstanceOf(ReplayDivergenceError);
  });

  it('an empty choice list runs tasks in the order they became runnable', async () => {
    const r = await runCounterRace({ seed: 3, workers: 3, rounds: 1, choices: new ListChoice([]) });
    expect(r.result.choices.every((c) => c.chosen === 0)).toBe(true);
  });

  it('the schedule decides lost updates (so the choices really matter)', async () => {
    const counters = new Set<number>();
    for (let seed = 0; seed < 30; seed++) counters.add((await runCounterRace({ seed, workers: 3, rounds: 2 })).counter);
    expect(counters.size).toBeGreaterThan(1);
  });
});

describe('Kernel semantics', () => {
  it('orders callbacks by (time, seq) and advances virtual time', async () => {
    const k = new Kernel({ seed: 1 });
    const seen: string[] = [];
    k.schedule(5, () => seen.push(`b@${k.now}`));
    k.schedule(1, () => seen.push(`a@${k.now}`));
    k.schedule(5, () => seen.push(`c@${k.now}`));
    const r = await k.run();
    expect(seen).toEqual(['a@1', 'b@5', 'c@5']);
    expect(r.timeMs).toBe(5);
  });

  it('futures wake waiters and waitFor times out as a value', async () => {
    const k = new Kernel({ seed: 1 });
    const f = k.future<number>();
    const log: string[] = [];
    k.spawn('producer', async () => { await k.sleep(10); f.resolve(42); });
    k.spawn('consumer', async () => { log.push(`got ${await f.wait()} at ${k.now}`); });
    k.spawn('impatient', async () => {
      const r = await k.future<number>().waitFor(3);
      log.push(`timeout=${!r.done} at ${k.now}`);
    });
    await k.run();
    expect(log.sort()).toEqual(['got 42 at 10', 'timeout=true at 3']);
  });

  it('a killed task never runs again, not even its finally block', async () => {
    const k = new Kernel({ seed: 1 });
    const log: string[] = [];
    const victim = k.spawn('victim', async () => {
      try { await k.sleep(10); log.push('woke'); } finally { log.push('finally'); }
    });
    k.spawn('killer', async () => { await k.sleep(5); k.kill(victim); });
    await k.run();
    expect(log).toEqual([]);
  });

  it('detects deadlock and names the blocked tasks and the seed', async () => {
    const k = new Kernel({ seed: 77, replayHint: 'retrysim replay x.json' });
    k.spawn('stuck', async () => { await k.future<void>().wait(); });
    const err = await k.run().catch((e) => e);
    expect(err).toBeInstanceOf(DeadlockError);
    expect(err.message).toMatch(/stuck:wait/);
    expect(err.message).toMatch(/seed 77/);
    expect(err.message).toMatch(/retrysim replay x\.json/);
  });

  it('hitting the event limit throws an error naming the limit and the seed', async () => {
    const k = new Kernel({ seed: 12, eventsMax: 100 });
    k.spawn('spin', async () => { for (;;) await k.sleep(1); });
    const err = await k.run().catch((e) => e);
    expect(err).toBeInstanceOf(SimLimitError);
    expect(err.message).toMatch(/eventsMax=100/);
    expect(err.message).toMatch(/seed 12/);
  });

  it('hitting the time limit throws an error naming the limit and the seed', async () => {
    const k = new Kernel({ seed: 13, timeMsMax: 1000 });
    k.spawn('sleeper', async () => { await k.sleep(5000); });
    await expect(k.run()).rejects.toThrow(/timeMsMax=1000.*seed 13/);
  });

  it('an exception escaping a task stops the run with that exception', async () => {
    const k = new Kernel({ seed: 1 });
    k.spawn('bad', async () => { await k.sleep(1); throw new Error('model bug'); });
    await expect(k.run()).rejects.toThrow('model bug');
  });

  it('a task spawned `first` from an event runs before the next event and any other task, with no choice', async () => {
    const k = new Kernel({ seed: 1 });
    const order: string[] = [];
    k.spawn('a', async () => { await k.sleep(5); order.push('a'); });
    k.spawn('b', async () => { await k.sleep(5); order.push('b'); });
    k.schedule(5, () => {
      order.push('event 1');
      // Microtasks queued now run in its first step, not in another task's.
      void Promise.resolve().then(() => order.push(`microtask in ${k.currentTask().name}`));
      k.spawn('urgent', async () => { order.push('urgent'); }, { first: true });
    });
    k.schedule(5, () => order.push('event 2'));
    const r = await k.run();
    expect(order.slice(0, 4)).toEqual(['event 1', 'urgent', 'microtask in urgent', 'event 2']);
    // The choices are between a and b alone, as without it.
    expect(r.choices.map((c) => c.of)).toEqual([['a:start', 'b:start'], ['a:sleep', 'b:sleep']]);
  });

  it('refuses sleep outside a task', () => {
    const k = new Kernel({ seed: 1 });
    expect(() => k.sleep(1)).toThrow(/outside a running task/);
  });
});
