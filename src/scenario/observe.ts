import { Trace, type TraceEntry } from '../sim/trace.js';
import type { ServiceDb } from '../service/definition.js';
import type { TrackerRequest } from '../tracker/messages.js';
import type { Transport } from '../harness/transport.js';

/**
 * Watches a scenario run step by step (the HTML stepper uses it). Opt-in via
 * `RunOptions.observe`: when it is absent, {@link runScenario} uses the plain
 * {@link Trace} and the workers' own transports, so an unobserved run pays
 * nothing — not even a branch in the kernel's loop.
 */
export interface RunObserver {
  /**
   * Called for every trace entry as it is added, with the run's database.
   * It is as the previous step left it: between two entries only the task
   * that logged the first one ran, so reading it here gives the rows
   * "after" the previous entry's step.
   */
  entry(e: TraceEntry, db: ServiceDb): void;
  /** Called just before worker `worker` puts a request on the simulated network (its request task's `spawn` entry follows). */
  request?(worker: string, req: TrackerRequest): void;
  /** Called once after the run ended, before the checkers read the database. */
  end?(db: ServiceDb): void;
}

/** A trace that also hands each entry to an observer. Used only when a run is observed. */
export class ObservedTrace extends Trace {
  constructor(
    keep: boolean,
    private readonly observer: RunObserver,
    private readonly db: ServiceDb,
  ) {
    super(keep);
  }

  // The observer is handed the entry the trace keeps, so words added to it later (Trace.detail: a store command's answer) reach the page too.
  override add(t: number, actor: string, event: string, data?: Record<string, unknown>): TraceEntry | undefined {
    const e = super.add(t, actor, event, data);
    this.observer.entry(e ?? (data === undefined ? { t, actor, event } : { t, actor, event, data }), this.db);
    return e;
  }

  override note(t: number, actor: string, event: string, data?: Record<string, unknown>): TraceEntry | undefined {
    const e = super.note(t, actor, event, data);
    this.observer.entry(e ?? (data === undefined ? { t, actor, event } : { t, actor, event, data }), this.db);
    return e;
  }
}

/** Wraps a worker's transport so the observer sees each request (headers and body) as it is sent. */
export function observedTransport(inner: Transport, worker: string, observer: RunObserver): Transport {
  if (observer.request === undefined) return inner;
  const onRequest = observer.request.bind(observer);
  return {
    send(req, timeoutMs) {
      onRequest(worker, req);
      return inner.send(req, timeoutMs);
    },
  };
}
