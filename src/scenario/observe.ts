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
   * It is as the previous step left it when no other task ran in between
   * (see {@link switched}).
   */
  entry(e: TraceEntry, db: ServiceDb): void;
  /**
   * Called whenever the kernel resumes a task, with the database as the
   * tasks before left it. Between two entries other tasks may have run — a
   * request resuming after a fault held it (its store command's line is
   * logged after the command ran) or writing before it logs again — so the
   * rows "after" an entry are those at the end of its task's turn, not
   * those the next entry found.
   */
  switched?(db: ServiceDb, t: number, task: string): void;
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

  override switched(t: number, task: string): void {
    this.observer.switched?.(this.db, t, task);
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
