import { Kernel } from '../src/sim/kernel.js';
import { runCounterRace } from '../src/sim/demo-model.js';
import { runOnVirtualTime } from '../src/sim/fake-timers.js';

function seconds(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Kernel throughput: callback events, async task switches, a choice-heavy model. */
export default async function kernelBench(): Promise<void> {
  // Callback fast path: 1,000 "clients", each with one pending event that
  // re-arms itself — the herd model's shape.
  {
    const n = 5_000_000;
    const k = new Kernel({ seed: 1, trace: false, eventsMax: n + 2000 });
    const rng = k.fork('d');
    let left = n;
    const h = k.on((client) => {
      if (--left > 0) k.after(1 + rng.next32() * 20, h, client);
    });
    for (let c = 0; c < 1000; c++) k.at(rng.next32(), h, c);
    const t0 = process.hrtime.bigint();
    const r = await k.run();
    const s = seconds(t0);
    console.log(JSON.stringify({ bench: 'kernel.callbackEvents', events: r.events, seconds: +s.toFixed(3), eventsPerSec: Math.round(r.events / s) }));
  }
  // Async task switches: 100 tasks sleeping in turns. Sleep lengths are
  // continuous, so wake-ups never tie and this measures switching alone
  // (ties become choice points, measured by the race runs below).
  {
    const perTask = 10_000;
    const k = new Kernel({ seed: 1, trace: false, eventsMax: 1e8 });
    const rng = k.fork('d');
    for (let i = 0; i < 100; i++) k.spawn(`t${i}`, async () => { for (let j = 0; j < perTask; j++) await k.sleep(1 + rng.next32()); });
    const t0 = process.hrtime.bigint();
    const r = await k.run();
    const s = seconds(t0);
    console.log(JSON.stringify({ bench: 'kernel.taskSwitches', steps: r.steps, events: r.events, seconds: +s.toFixed(3), stepsPerSec: Math.round(r.steps / s) }));
  }
  // Choice points with tracing on: the shape of the tracker scenarios.
  {
    const runs = 2000;
    const t0 = process.hrtime.bigint();
    let choices = 0;
    for (let seed = 0; seed < runs; seed++) choices += (await runCounterRace({ seed, workers: 3, rounds: 3 })).result.choices.length;
    const s = seconds(t0);
    console.log(JSON.stringify({ bench: 'kernel.tracedRaceRuns', runs, choices, seconds: +s.toFixed(3), runsPerSec: Math.round(runs / s) }));
  }
  // The fake-timers bridge: 31.8 s of virtual timer code.
  {
    const k = new Kernel({ seed: 1 });
    k.spawn('client', () => runOnVirtualTime(k, async () => {
      for (let i = 0, d = 500; i < 6; i++, d *= 2) await new Promise((r) => setTimeout(r, d));
    }));
    const t0 = process.hrtime.bigint();
    await k.run();
    const s = seconds(t0);
    console.log(JSON.stringify({ bench: 'kernel.fakeTimersBridge', virtualMs: k.now, wallMs: +(s * 1000).toFixed(2), speedup: Math.round(k.now / (s * 1000)) }));
  }
}
