import type { StepEnv } from './env.js';
import type { TrackerInstance } from './instance.js';
import type { TrackerResponse } from './messages.js';
import { plainDeferred } from './real-env.js';

/**
 * A tiny hand-driven environment for unit tests (the kernel is tested
 * separately). Time is a shared variable; `sleep` advances it and returns at
 * once; `step` returns at once unless its label is held, in which case the
 * request parks there until the test releases it. Not part of the public API.
 */
/** Shared virtual time for several TestEnvs (one per request). */
export class TestClock {
  ms = 0;
}

/** One request's environment; park it at a held step label, then release it. */
export class TestEnv implements StepEnv {
  /** Every label passed to step, in order. */
  readonly steps: string[] = [];
  private readonly held: Set<string>;
  private readonly parked = new Map<string, () => void>();
  private readonly watchers = new Map<string, () => void>();

  constructor(
    readonly clock: TestClock = new TestClock(),
    holdAt: string[] = [],
  ) {
    this.held = new Set(holdAt);
  }

  now(): number {
    return this.clock.ms;
  }

  step(label: string): Promise<void> {
    this.steps.push(label);
    if (!this.held.delete(label)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.parked.set(label, resolve);
      this.watchers.get(label)?.();
    });
  }

  sleep(ms: number): Promise<void> {
    this.clock.ms += ms;
    return Promise.resolve();
  }

  defer = plainDeferred;

  /** Resolves once the request is parked at `label`. */
  reached(label: string): Promise<void> {
    if (this.parked.has(label)) return Promise.resolve();
    return new Promise<void>((resolve) => this.watchers.set(label, resolve));
  }

  /** Lets the request parked at `label` go on. */
  release(label: string): void {
    const go = this.parked.get(label);
    if (!go) throw new Error(`nothing parked at '${label}'`);
    this.parked.delete(label);
    go();
  }
}

/** A report body with optional overrides. */
export function reportBody(over: Record<string, unknown> = {}): string {
  return JSON.stringify({ run_id: 'run-1', module: 'auth', title: 'login fails', steps: '1. open\n2. click', ...over });
}

/** Options of {@link post}. */
export interface PostOptions {
  key?: string;
  tenant?: string;
  body?: string;
}

/** Sends `POST /reports` to an instance. */
export function post(inst: TrackerInstance, env: StepEnv, opts: PostOptions = {}): Promise<TrackerResponse> {
  const headers: Record<string, string | undefined> = { 'content-type': 'application/json' };
  if (opts.key !== undefined) headers['idempotency-key'] = opts.key;
  if (opts.tenant !== undefined) headers['x-tenant'] = opts.tenant;
  return inst.handle({ method: 'POST', path: '/reports', headers, body: opts.body ?? reportBody() }, env);
}

/** The parsed JSON body of a response. */
export function json(res: TrackerResponse): Record<string, unknown> {
  return JSON.parse(res.body) as Record<string, unknown>;
}
