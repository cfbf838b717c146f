/**
 * retrysim's public API. Everything a user needs to write their own
 * simulations and properties is exported from here.
 */

/** Seeded, platform-independent random numbers ({@link Prng}) and distributions. */
export { Prng, mix32, hashString } from './random/prng.js';
export { standardNormal, normal, absNormal } from './random/normal.js';

/** The discrete-event kernel: virtual clock, (time, seq) queue, tasks, futures. */
export { Kernel, Task, type KernelOptions, type RunResult, type SpawnOptions } from './sim/kernel.js';
export { Future } from './sim/future.js';
export { EventQueue } from './sim/queue.js';
export { Trace, formatEntry, type TraceEntry } from './sim/trace.js';
export { canonicalJson, hashJson } from './sim/canonical.js';
export { SimLimitError, DeadlockError } from './sim/errors.js';
/** Choice sources: who runs next when several tasks could. */
export type { ChoiceSource, ChoiceRecord } from './sim/choice/source.js';
export { RandomChoice } from './sim/choice/random.js';
export { ListChoice } from './sim/choice/list.js';
export { ReplayChoice, ReplayDivergenceError } from './sim/choice/replay.js';
/** Runs unmodified setTimeout/Date.now code on the kernel's clock. */
export { runOnVirtualTime, type BridgeOptions } from './sim/fake-timers.js';
