/**
 * What one simulated run reached (DESIGN invariant 9, Antithesis's
 * "sometimes assertions"): a set of situation ids, filled by the service
 * host while the run goes (a fault fired, a replay answered, same-key
 * requests inside the service at once, a situation the service declares
 * with `sim.reached`) and by {@link noteRunEnd} once it ended (kills,
 * lost answers, preemptions at declared steps, the recovery phase,
 * the run's virtual time span).
 *
 * Only counting: a campaign asks for it (`RunOptions.reached`), and a run
 * without it pays one `undefined` test per hook. The ids are listed, with
 * their wording, in src/campaign/coverage.ts.
 */
export class Reached {
  /** Situation ids this run reached. */
  readonly ids = new Set<string>();
  /** The first exception a handler threw in this run (`TypeError: … (at service.ts:12:5)`): a campaign that never succeeded names it. */
  threw: string | undefined;
  /**
   * The first answer outside 2xx a handler gave in this run, status and body
   * (`500 {"error":"The client is closed"}`, clipped): a campaign that never
   * succeeded names it, since an app that catches its own error answers with
   * it instead of throwing.
   */
  refused: string | undefined;
  /** Same-key requests inside the service now, by tenant and key. */
  private readonly inflight = new Map<string, number>();
  /** The first 2xx answer (status and body) each tenant and key got in this run. */
  private readonly firstOk = new Map<string, string>();

  add(id: string): this {
    this.ids.add(id);
    return this;
  }

  /** A request carrying `key` entered a handler: two or three at once are situations of their own. */
  enter(key: string): void {
    const n = (this.inflight.get(key) ?? 0) + 1;
    this.inflight.set(key, n);
    if (n >= 2) this.ids.add('overlap:2');
    if (n >= 3) this.ids.add('overlap:3');
  }

  /**
   * A 2xx answer under `key`. One equal to the first 2xx under that key is a
   * stored answer replayed, whether or not the service marks it with an
   * `idempotent-replay` header (most do not): it is what replay-equals-first
   * calls a replay.
   */
  answered(key: string, status: number, body: string): void {
    const answer = `${status}\u0000${body}`;
    const first = this.firstOk.get(key);
    if (first === undefined) this.firstOk.set(key, answer);
    else if (first === answer) this.ids.add('replay');
  }

  /** The request carrying `key` left its handler (answered, threw, or died with its process). */
  leave(key: string): void {
    const n = (this.inflight.get(key) ?? 1) - 1;
    if (n <= 0) this.inflight.delete(key);
    else this.inflight.set(key, n);
  }
}

/** The overlap key of a request: its tenant and idempotency key; undefined without a key. */
export function overlapKey(headers: Readonly<Record<string, string | undefined>>): string | undefined {
  const k = headers['idempotency-key'];
  return k === undefined ? undefined : `${headers['x-tenant'] ?? 'default'}\u0000${k}`;
}

/** Joins a step or crash point to the reach a fault struck (`crash@kv.set: answer lost#2`, `step:kv.set#2`). */
export const REACH = '#';
/** The latest reach of a step in one request that a fault strikes (`faults.crashAtNth`, `pause.nth`, `kill.nth`, `slowAtStepNth`). */
export const REACH_MAX = 4;

/** 2 → '2nd', 3 → '3rd', 11 → '11th'. */
export function ordinal(n: number): string {
  const t = n % 100;
  const suffix = t >= 11 && t <= 13 ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

/** Virtual time spans a run may last (main run, from 0 to its last event). */
export const SPANS = [
  { id: 'span:1s', maxMs: 1_000 },
  { id: 'span:1min', maxMs: 60_000 },
  { id: 'span:1h', maxMs: 3_600_000 },
] as const;

/** What {@link noteRunEnd} reads from a finished run. */
export interface RunEnd {
  /** The service's declared steps (preemptions are counted at these). */
  steps: readonly string[];
  /** The kernel's decisions: `of` are the candidates' `task:label`, `of[0]` the task that could have continued. */
  choices: ReadonlyArray<{ chosen: number; of: readonly string[]; preempted?: boolean }>;
  /** Virtual time at the end of the main run. */
  timeMs: number;
  /** Kill plan of the scenario, if any, and whether it fired. */
  killed: boolean;
  killAtStep?: string;
  /** Which reach of `killAtStep` the kill was planned at (`kill.nth`). */
  killNth?: number;
  /** The kill lands as the instance's n-th answer leaves (`kill.atAnswer`). */
  killAtAnswer?: boolean;
  /** Answers the network lost on the way back. */
  answersLost: number;
  /** Clock offsets of the instances that ran. */
  clockOffsetsMs: readonly number[];
  /** Recovery phase outcomes (invariant 5), if it ran. */
  recovery: Iterable<{ kind: string; attempts: number }>;
  /**
   * The operations as they ended (service runs): whether two tenants sent one
   * raw key, and whether a key-reuse probe was answered. Without these rows
   * a holding tenant-isolation or key-reuse verdict did not say it was ever tried.
   */
  ops?: ReadonlyArray<{ tenant: string; attempts: ReadonlyArray<{ key?: string; reportId?: unknown }>; probes?: ReadonlyArray<{ outcome: number | string }> }>;
}

/** The situation of a run in which some 2xx answer named its effect's id (src/campaign/coverage.ts words it). */
export const ANSWER_ID = 'answer:id';

/** A request task's name on the simulated network: `s<instance>/<client>#<n>`. */
const REQUEST_TASK = /^s\d+\//;

/** Adds what can only be read once the run ended. */
export function noteRunEnd(r: Reached, e: RunEnd): void {
  if (e.killed) r.add(e.killAtStep !== undefined ? `kill@${e.killAtStep}` : e.killAtAnswer ? 'kill@answer' : 'kill@time');
  if (e.killed && (e.killNth ?? 1) > 1) r.add('fault:later-reach');
  if (e.answersLost > 0) r.add('answer-lost');
  if (e.clockOffsetsMs.some((x) => x !== 0)) r.add('clock-offset');
  for (const o of e.recovery) {
    if (o.kind === 'found') r.add('recovery:found');
    if (o.attempts > 0) r.add('recovery:resubmitted');
  }
  const ops = e.ops ?? [];
  // A raw key's first tenant: a second tenant sending it is the situation. Looked
  // at only when the run has two tenants (this runs after every run of a campaign).
  if (ops.some((op) => op.tenant !== ops[0]!.tenant)) {
    const tenantOfKey = new Map<string, string>();
    for (const op of ops) {
      for (const a of op.attempts) {
        if (a.key === undefined) continue;
        const t = tenantOfKey.get(a.key);
        if (t === undefined) tenantOfKey.set(a.key, op.tenant);
        else if (t !== op.tenant) r.add('tenants:same-key');
      }
    }
  }
  // Only an answered probe tried the service: a lost one says nothing about it.
  for (const op of ops) if (op.probes !== undefined && op.probes.some((p) => typeof p.outcome === 'number')) r.add('key-reuse:probed');
  // A 2xx whose id was read (`operation.resultId`, or the body's `id`): without one, id-exists and the
  // tenant check of an acknowledged id judged nothing — a service naming its effect in a Location header held vacuously.
  if (ops.some((op) => op.attempts.some((a) => a.reportId !== undefined))) r.add(ANSWER_ID);
  for (const s of SPANS) {
    if (e.timeMs <= s.maxMs) {
      r.add(s.id);
      break;
    }
  }
  // A preemption at a declared step: the request that could have gone on
  // into step X's phase was passed over for another task (another request
  // ran between its previous phase and X).
  if (e.steps.length === 0) return;
  for (const c of e.choices) {
    if (!c.preempted) continue;
    const at = stepOf(c.of[0]!, e.steps);
    if (at !== undefined) r.add(`preempt@${at}`);
  }
}

/** The declared step a `task:label` candidate is about to run, if it is a request at one. */
function stepOf(candidate: string, steps: readonly string[]): string | undefined {
  if (!REQUEST_TASK.test(candidate)) return undefined;
  const label = candidate.slice(candidate.lastIndexOf(':') + 1);
  return steps.includes(label) ? label : undefined;
}
