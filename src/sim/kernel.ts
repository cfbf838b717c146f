import { Prng } from '../random/prng.js';
import { EventQueue } from './queue.js';
import { Trace } from './trace.js';
import { Future } from './future.js';
import { DeadlockError, SimLimitError } from './errors.js';
import { RandomChoice } from './choice/random.js';
import type { ChoiceRecord, ChoiceSource } from './choice/source.js';
import type { Footprint } from './footprint.js';

/** Options of a {@link Kernel}. Limits default to generous but finite values. */
export interface KernelOptions {
  /** The run's one seed; every random stream is forked from it. */
  seed: number;
  /** Who decides between runnable tasks. Default: seeded random. */
  choices?: ChoiceSource;
  /** Upper bound on processed events plus task steps. Default 10,000,000. */
  eventsMax?: number;
  /** Upper bound on virtual time. Default 86,400,000 ms (one day). */
  timeMsMax?: number;
  /** Record a trace: true (default) keeps and hashes entries; false disables tracing (hot loops). */
  trace?: boolean | Trace;
  /** Printed in limit and deadlock errors: the command that replays this run. */
  replayHint?: string;
  /**
   * The event queue to use (default: a new {@link EventQueue}). The kernel
   * clears the queue it is given; one queue may serve many kernels in turn
   * (reusing its buffers), never two at once.
   */
  queue?: EventQueue;
}

/** What a finished run reports. */
export interface RunResult {
  timeMs: number;
  /**
   * Virtual time of the run's last trace event (a step's log line, a timer
   * that fired, a kill or restart). `timeMs` can be later: a timeout nobody
   * needed any more (a request's, once its answer came) still advances the
   * clock when it is popped, doing nothing.
   */
  lastEventMs: number;
  events: number;
  steps: number;
  choices: ChoiceRecord[];
  /** SHA-256 of the trace, or '' when tracing is off. */
  traceHash: string;
}

type TaskState = 'new' | 'runnable' | 'running' | 'blocked' | 'done' | 'dead';

/** Options of {@link Kernel.spawn}. */
export interface SpawnOptions {
  /** A daemon may stay blocked at the end of a run without counting as deadlock. */
  daemon?: boolean;
  /** What the task's first step may touch (see {@link Footprint}); default: everything. */
  footprint?: Footprint;
  /**
   * Its first step runs right after the event being handled, before any
   * other event or task, and is no choice: for work that microtasks already
   * queued must find running (an async timer callback's continuation: see
   * src/sim/timer-firing.ts). Spawn it from an event handler.
   */
  first?: boolean;
}

/** A kernel task: an async function that only waits on the kernel. */
export class Task<T = unknown> {
  state: TaskState = 'new';
  /** What the task will do when next resumed, shown in choice labels. */
  label = 'start';
  /** @internal `name:label`, rebuilt only when the label changes (choices read it often). */
  choiceLabel: string;
  /** @internal bumps on every block so stale timeout wakes are ignored */
  token = 0;
  /**
   * @internal What the task's next step may touch, declared where it parked;
   * undefined (the default of an undeclared park) conflicts with everything.
   */
  footprint: Footprint | undefined;
  /** @internal */
  waitingOn: Future<unknown> | undefined;
  /** @internal */
  resumeFn: (() => void) | undefined;
  /** @internal how the task ended, kept until someone asks for {@link Task.done} */
  outcome: { ok: boolean; value: unknown } | undefined;
  private doneFuture: Future<T> | undefined;

  constructor(
    readonly id: number,
    readonly name: string,
    readonly body: () => Promise<T>,
    readonly daemon: boolean,
    private readonly kernel: Kernel,
  ) {
    this.choiceLabel = `${name}:start`;
  }

  /**
   * Settles when the task returns or throws. Created on first use: most
   * tasks (one per simulated request) are never joined.
   */
  get done(): Future<T> {
    if (this.doneFuture === undefined) {
      const f = new Future<T>(this.kernel);
      if (this.outcome !== undefined) {
        if (this.outcome.ok) f.resolve(this.outcome.value as T);
        else f.reject(this.outcome.value);
      }
      this.doneFuture = f;
    }
    return this.doneFuture;
  }

  /** @internal settles {@link Task.done} if someone already holds it */
  doneSettle(ok: boolean, value: unknown): void {
    const f = this.doneFuture;
    if (f === undefined) return;
    if (ok) f.resolve(value as T);
    else f.reject(value);
  }

  /** @internal */
  setLabel(label: string): void {
    if (label !== this.label) {
      this.label = label;
      this.choiceLabel = `${this.name}:${label}`;
    }
  }

  /** Waits for the task's result (from another task). */
  join(): Promise<T> {
    return this.done.wait();
  }
}

function pastError(timeMs: number, now: number): never {
  throw new RangeError(`cannot schedule in the past: ${timeMs} < now ${now}`);
}

/** Event kinds below zero are the kernel's own; handlers get ids from 0. */
const WAKE = -1;

/**
 * The discrete-event kernel: a virtual clock, a (timeMs, seq)-ordered event
 * queue, callback events for models that want raw speed, and async tasks for
 * models written as ordinary code. Only one task runs at a time; whenever
 * more than one could run next, the {@link ChoiceSource} decides, and the
 * decision is recorded with the candidates' labels.
 *
 * @example
 * const k = new Kernel({ seed: 1 });
 * k.spawn('a', async () => { await k.sleep(5); k.log('a', 'woke'); });
 * const r = await k.run(); // r.timeMs === 5
 */
export class Kernel {
  /** Current virtual time, ms. */
  now = 0;
  readonly seed: number;
  /** Root generator; subsystems should {@link Kernel.fork} their own. */
  readonly rng: Prng;
  readonly trace: Trace | undefined;
  readonly choices: ChoiceSource;
  readonly choiceLog: ChoiceRecord[] = [];
  readonly eventsMax: number;
  readonly timeMsMax: number;
  readonly replayHint: string;
  events = 0;
  steps = 0;
  /** See {@link RunResult.lastEventMs}. */
  lastEventMs = 0;

  private readonly queue: EventQueue;
  private readonly handlers: Array<(a: number, b: number) => void> = [];
  private readonly tasks: Task<any>[] = [];
  private runnable: Task<any>[] = [];
  /** Tasks spawned `first` (see {@link SpawnOptions.first}), stepped before the next event. */
  private firsts: Task<any>[] = [];
  /** Work {@link Kernel.afterEvent} asked for, awaited before the next event or task. */
  private drains: Array<() => Promise<void>> = [];
  private current: Task<any> | undefined;
  /** The task that took the last step: a choice that passes it over while it can run is a preemption. */
  private last: Task<any> | undefined;
  private parkedSignal: (() => void) | undefined;
  private failure: { error: unknown } | undefined;
  private stopped = false;
  /** The choice source reads footprints (partial-order reduction): only then are they gathered. */
  private readonly footprints: boolean;

  constructor(opts: KernelOptions) {
    this.seed = opts.seed;
    this.rng = new Prng(opts.seed);
    this.choices = opts.choices ?? new RandomChoice(opts.seed);
    this.footprints = this.choices.freeStep !== undefined;
    this.eventsMax = opts.eventsMax ?? 10_000_000;
    this.timeMsMax = opts.timeMsMax ?? 86_400_000;
    this.replayHint = opts.replayHint ?? `seed ${opts.seed}`;
    this.trace = opts.trace === false ? undefined : opts.trace instanceof Trace ? opts.trace : new Trace();
    this.queue = opts.queue ?? new EventQueue();
    if (opts.queue !== undefined) opts.queue.clear();
  }

  /** A generator for one subsystem, stable under changes elsewhere. */
  fork(label: string): Prng {
    return this.rng.fork(label);
  }

  /** Adds an event to the trace's hash only (not shown by `--trace`); see {@link Trace.addHashed}. */
  logHashed(actor: string, event: string, data?: Record<string, unknown>): void {
    this.lastEventMs = this.now;
    this.trace?.addHashed(this.now, actor, event, data);
  }

  /** Shows an event in the trace without hashing it; see {@link Trace.note}. */
  note(actor: string, event: string, data?: Record<string, unknown>): void {
    this.lastEventMs = this.now;
    this.trace?.note(this.now, actor, event, data);
  }

  /** Says what `actor`'s step `event` did (its call and answer), shown and never hashed; see {@link Trace.detail}. */
  detail(actor: string, event: string, call: string, answer: string): void {
    this.trace?.detail(this.now, actor, event, call, answer);
  }

  /** Appends a model event to the trace (no-op when tracing is off). */
  log(actor: string, event: string, data?: Record<string, unknown>): void {
    this.lastEventMs = this.now;
    this.trace?.add(this.now, actor, event, data);
  }

  // ---------------------------------------------------------------- callbacks

  /** Registers a callback handler and returns its id for {@link Kernel.at}. */
  on(handler: (a: number, b: number) => void): number {
    this.handlers.push(handler);
    return this.handlers.length - 1;
  }

  /** Schedules handler `id` at absolute virtual time `timeMs` with two numeric arguments. */
  at(timeMs: number, id: number, a = 0, b = 0): void {
    // The message is built out of line so `at` stays small enough to inline.
    if (!(timeMs >= this.now)) pastError(timeMs, this.now);
    this.queue.push(timeMs, id, a, b);
  }

  /** Schedules handler `id` after `delayMs`. */
  after(delayMs: number, id: number, a = 0, b = 0): void {
    this.at(this.now + delayMs, id, a, b);
  }

  /** Schedules a one-off closure (convenient; slower than a registered handler). */
  schedule(delayMs: number, fn: () => void): void {
    this.after(delayMs, this.on(fn));
  }

  /**
   * Awaits `work` right after the event being handled, before any other
   * event or task runs, and logs nothing: for host work that must finish
   * what an event started in microtasks (a timer whose callback resolved a
   * promise: the code awaiting it runs on in its owner's clock scope, not
   * interleaved with the next task's step). Call it from an event handler.
   */
  afterEvent(work: () => Promise<void>): void {
    this.drains.push(work);
  }

  /** Whether some task other than a daemon has not ended yet (the run still has work of its own). */
  hasLiveTasks(): boolean {
    for (const t of this.tasks) if (!t.daemon && t.state !== 'done' && t.state !== 'dead') return true;
    return false;
  }

  /** The names of the tasks {@link hasLiveTasks} counts, for messages. */
  liveTaskNames(): string[] {
    return this.tasks.filter((t) => !t.daemon && t.state !== 'done' && t.state !== 'dead').map((t) => t.name);
  }

  /** The names of the tasks {@link kill} ended (`kill -9`), for messages. */
  killedTaskNames(): string[] {
    return this.tasks.filter((t) => t.state === 'dead').map((t) => t.name);
  }

  /** Ends the run after the current event or step. */
  stop(): void {
    this.stopped = true;
  }

  // -------------------------------------------------------------------- tasks

  /** Starts a task at the current virtual time. */
  spawn<T>(name: string, body: () => Promise<T>, opts: SpawnOptions = {}): Task<T> {
    const task = new Task<T>(this.tasks.length, name, body, opts.daemon ?? false, this);
    task.footprint = opts.footprint;
    this.tasks.push(task);
    this.log(name, 'spawn');
    if (opts.first === true) {
      task.state = 'runnable';
      this.firsts.push(task);
      return task;
    }
    task.state = 'blocked';
    this.queue.push(this.now, WAKE, task.id, task.token);
    return task;
  }

  /** The running task; throws when called from outside any task. */
  currentTask(): Task<any> {
    const t = this.current;
    if (t === undefined || t.state !== 'running') {
      throw new Error('kernel: sleep/yield/wait called outside a running task (or a task tried to wait on two things at once; spawn another task instead)');
    }
    return t;
  }

  /**
   * Blocks the current task for `ms` of virtual time. `footprint` declares
   * what the task does when it wakes (default: anything; see {@link Footprint}).
   */
  sleep(ms: number, footprint?: Footprint): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`sleep(${ms}): ms must be >= 0`);
    return this.block(undefined, ms, 'sleep', footprint);
  }

  /**
   * An explicit interleaving point: the current task steps aside and the
   * choice source picks who runs next among all runnable tasks. The label
   * names what the task will do when resumed (e.g. `claim`, `finish`);
   * `footprint` declares what that step may touch (default: anything), so
   * exhaustive exploration can skip orders of steps that commute.
   */
  yield(label: string, footprint?: Footprint): Promise<void> {
    const task = this.currentTask();
    task.state = 'runnable';
    task.setLabel(label);
    task.footprint = footprint;
    this.runnable.push(task);
    return this.park(task);
  }

  /** A new {@link Future} bound to this kernel. */
  future<T>(): Future<T> {
    return new Future<T>(this);
  }

  /**
   * Kills a task: it never runs again and nothing in it (not even `finally`)
   * executes. This is how `kill -9` is modelled.
   */
  kill(task: Task<any>): void {
    if (task === this.current && task.state === 'running') throw new Error(`task ${task.name} cannot kill itself`);
    if (task.state === 'done' || task.state === 'dead') return;
    task.state = 'dead';
    task.resumeFn = undefined;
    task.waitingOn = undefined;
    this.runnable = this.runnable.filter((t) => t !== task);
    this.log(task.name, 'killed');
  }

  /** @internal Blocks the current task on a future and/or a timeout. */
  block(future: Future<any> | undefined, timeoutMs: number, label: string, footprint?: Footprint): Promise<void> {
    const task = this.currentTask();
    task.state = 'blocked';
    task.setLabel(label);
    task.footprint = footprint;
    task.token++;
    task.waitingOn = future;
    if (future !== undefined) future.waiters.push(task);
    if (timeoutMs !== Infinity) this.queue.push(this.now + timeoutMs, WAKE, task.id, task.token);
    return this.park(task);
  }

  /** @internal Makes every task still waiting on `future` runnable, in arrival order. */
  wakeWaiters(future: Future<any>): void {
    const ws = future.waiters;
    future.waiters = [];
    for (const t of ws) {
      if (t.state === 'blocked' && t.waitingOn === future) this.queue.push(this.now, WAKE, t.id, t.token);
    }
  }

  private park(task: Task<any>): Promise<void> {
    return new Promise<void>((resolve) => {
      task.resumeFn = resolve;
      const signal = this.parkedSignal;
      this.parkedSignal = undefined;
      signal?.();
    });
  }

  private finish(task: Task<any>, ok: boolean, value: unknown): void {
    if (task.state === 'dead') return;
    task.state = 'done';
    this.log(task.name, ok ? 'done' : 'threw', ok ? undefined : { error: String(value) });
    task.outcome = { ok, value };
    if (ok) task.doneSettle(true, value);
    else {
      // Expected failures are values in this code base; an exception escaping
      // a task is a bug in the model, so the run stops with it.
      this.failure ??= { error: value };
      task.doneSettle(false, value);
    }
    const signal = this.parkedSignal;
    this.parkedSignal = undefined;
    signal?.();
  }

  // --------------------------------------------------------------------- run

  /**
   * Runs until nothing is left to do (or {@link Kernel.stop}). Callback events
   * are processed synchronously; the function only awaits when it resumes a
   * task. Throws {@link SimLimitError} on a limit and {@link DeadlockError}
   * when tasks are blocked with nothing scheduled.
   */
  async run(): Promise<RunResult> {
    const q = this.queue;
    const handlers = this.handlers;
    // Callback-only models (the herd) never need the task machinery: run
    // them in one tight synchronous loop. It hands over to the general loop
    // below as soon as a task exists (a handler may spawn one).
    if (this.tasks.length === 0) this.runCallbacks();
    for (;;) {
      // (the fast path above hands over right after an event that spawned one, or asked for a drain)
      if (this.drains.length > 0) await this.runDrains();
      if (this.firsts.length > 0) await this.stepFirsts();
      // Everything due now happens before a task is chosen, so that all tasks
      // woken at this instant are candidates of the same choice.
      while (q.size > 0 && q.peekTime() <= this.now && !this.stopped) {
        q.pop();
        if (++this.events > this.eventsMax) this.limit('eventsMax', this.eventsMax);
        const kind = q.popKind;
        if (kind >= 0) handlers[kind]!(q.popA, q.popB);
        else this.onWake(q.popA, q.popB);
        if (this.drains.length > 0) await this.runDrains();
        if (this.firsts.length > 0) await this.stepFirsts();
      }
      if (this.stopped) break;
      if (this.runnable.length > 0) {
        // A plain (non-async) step: one promise per switch, not three.
        await this.step(this.pick());
        this.current = undefined;
        if (this.failure) throw this.failure.error;
        continue;
      }
      if (q.size === 0) break;
      const t = q.peekTime();
      if (t > this.timeMsMax) this.limit('timeMsMax', this.timeMsMax);
      this.now = t;
    }
    if (!this.stopped) this.checkDeadlock();
    return {
      timeMs: this.now,
      lastEventMs: this.lastEventMs,
      events: this.events,
      steps: this.steps,
      choices: this.choiceLog,
      traceHash: this.trace ? this.trace.hash() : '',
    };
  }

  /**
   * The callback fast path: pops and dispatches events while no task exists.
   * Same order, limits and errors as the general loop in {@link Kernel.run}
   * (which checks timeMsMax when it advances the clock, and eventsMax before
   * each event), but one branch-light loop with no per-event calls besides
   * the handler, so the JIT can inline the queue and the handler into it.
   */
  private runCallbacks(): void {
    const q = this.queue;
    const handlers = this.handlers;
    const tasks = this.tasks;
    const eventsMax = this.eventsMax;
    const timeMsMax = this.timeMsMax;
    while (q.pop()) {
      const t = q.popTime;
      if (t > this.now) {
        if (t > timeMsMax) this.limit('timeMsMax', timeMsMax);
        this.now = t;
      }
      if (++this.events > eventsMax) this.limit('eventsMax', eventsMax);
      handlers[q.popKind]!(q.popA, q.popB);
      if (this.stopped || tasks.length !== 0 || this.drains.length !== 0) return;
    }
  }

  /**
   * Steps the tasks spawned `first`, in order, with no choice; `last` stays
   * as it was, so the next choice sees the same candidates first and counts
   * the same preemptions as if they had not run.
   */
  private async stepFirsts(): Promise<void> {
    const last = this.last;
    while (this.firsts.length > 0) {
      const task = this.firsts.shift()!;
      if (task.state !== 'runnable') continue; // killed meanwhile
      // Nobody chose it, but a reducing source counts every step (as pick() does for a lone candidate).
      if (this.footprints) this.choices.freeStep!(task.choiceLabel, task.footprint, this.now);
      await this.step(task);
      this.current = undefined;
      if (this.failure) throw this.failure.error;
    }
    this.last = last;
  }

  /** Awaits what {@link afterEvent} queued, in order (a drain may queue another). */
  private async runDrains(): Promise<void> {
    while (this.drains.length > 0) {
      await this.drains.shift()!();
      if (this.failure) throw this.failure.error;
    }
  }

  private onWake(id: number, token: number): void {
    const task = this.tasks[id]!;
    if (task.state !== 'blocked' || task.token !== token) return; // stale timeout or killed
    task.state = 'runnable';
    task.waitingOn = undefined;
    this.runnable.push(task);
  }

  /**
   * Chooses the next task. Candidates are offered with the task that took the
   * last step first, when it can run, then the others in the order they
   * became runnable: choice 0 (every source's default) lets the running task
   * continue, and any other choice while it can run is a preemption. So a
   * schedule that shrinks toward zeros loses preemptions, and "simpler" means
   * "fewer context switches" (CHESS's preemption bounding rests on the same
   * definition).
   */
  private pick(): Task<any> {
    const r = this.runnable;
    let i = 0;
    if (r.length > 1) {
      const lastAt = this.last === undefined ? -1 : r.indexOf(this.last);
      if (lastAt > 0) {
        r.splice(lastAt, 1);
        r.unshift(this.last!);
      }
      const labels = r.map((t) => t.choiceLabel);
      i = this.choices.choose(labels, this.choiceLog.length, this.now, lastAt >= 0, this.footprints ? r.map((t) => t.footprint) : undefined);
      if (!(Number.isInteger(i) && i >= 0 && i < r.length)) {
        throw new Error(`choice source ${this.choices.name} returned ${i} for ${r.length} candidates`);
      }
      const preempted = lastAt >= 0 && i !== 0;
      this.choiceLog.push({ t: this.now, chosen: i, of: labels, preempted });
      this.log('kernel', 'choose', preempted ? { chosen: labels[i], of: labels, preempted } : { chosen: labels[i], of: labels });
    } else if (this.footprints) {
      // A step nobody chose still counts for a reducing source: it may be one the source must not run again.
      this.choices.freeStep!(r[0]!.choiceLabel, r[0]!.footprint, this.now);
    }
    const task = r[i]!;
    r.splice(i, 1);
    return task;
  }

  /** Resumes one task; the returned promise settles when it parks again or ends. */
  private step(task: Task<any>): Promise<void> {
    if (++this.steps + this.events > this.eventsMax) this.limit('eventsMax', this.eventsMax);
    this.current = task;
    this.last = task;
    task.state = 'running';
    this.trace?.switched(this.now, task.name);
    const parked = new Promise<void>((resolve) => (this.parkedSignal = resolve));
    const resume = task.resumeFn;
    if (resume !== undefined) {
      task.resumeFn = undefined;
      resume();
    } else {
      task.body().then(
        (v) => this.finish(task, true, v),
        (e) => this.finish(task, false, e),
      );
    }
    return parked;
  }

  private checkDeadlock(): void {
    const blocked = this.tasks.filter((t) => t.state === 'blocked' && !t.daemon);
    if (blocked.length > 0) {
      throw new DeadlockError(blocked.map((t) => t.choiceLabel), this.now, this.seed, this.replayHint);
    }
  }

  private limit(name: string, value: number): never {
    throw new SimLimitError(name, value, this.now, this.seed, this.replayHint);
  }
}
