import { onKernelClock, stuckRequest } from '../service/host.js';
import { Kernel } from '../sim/kernel.js';
import { Trace } from '../sim/trace.js';
import { ListChoice } from '../sim/choice/list.js';
import { SimNetwork, SimServer } from '../net/sim-network.js';
import { NAMED_POLICIES, retryDelayMs } from '../backoff/policies.js';
import { RETRYABLE_STATUSES } from '../harness/client.js';
import type { OperationEnd } from '../checkers/invariants.js';
import type { RecoveryOutcome } from '../checkers/progress.js';
import type { TrackerRequest } from '../tracker/messages.js';
import type { HostFaults } from '../service/host.js';
import type { HostedInstance } from '../net/sim-network.js';
import type { ServiceDefinition } from '../service/definition.js';
import type { Scenario } from './schema.js';
import type { KernelClock } from '../sim/fake-timers.js';
import type { WireOutcome } from '../harness/transport.js';
import type { Prng } from '../random/prng.js';

/** What the recovery phase needs from the main run. */
export interface RecoveryInput {
  scenario: Scenario;
  /** How the service asks for an operation's effect and how long leases need to expire. */
  progress: NonNullable<ServiceDefinition['progress']>;
  /** The main run's service instances: same database, same in-process memory. */
  instances: ReadonlyArray<HostedInstance & { readonly faults: HostFaults }>;
  /** Virtual time at which the main run ended. */
  mainEndMs: number;
  ends: readonly OperationEnd[];
  /** Per operation id: the last request it sent (same key, same body, same tenant). */
  lastRequests: ReadonlyMap<string, TrackerRequest>;
  keepTrace: boolean;
  /** The main run's clock: the timers its end stopped (a sweeper interval) go on in this phase. */
  mainClock?: KernelClock;
}

/** The largest disagreement between two instances' clocks (an instance without an offset reads 0). */
export function clockSkewMs(s: Scenario): number {
  const o = Array.from({ length: s.service.instances }, (_, i) => s.service.clockOffsetMs[i] ?? 0);
  return Math.max(...o) - Math.min(...o);
}

/**
 * The recovery client's per-request timeout: the scenario's, raised when it
 * is shorter than a network round trip (4 × (mean + 3 sd) covers two hops
 * with room): a client that can never hear any answer is not a well-behaved
 * client, and its lack of progress says nothing about the service.
 *
 * For a service without a lease (`leased: false`) the processing time (the
 * slow fault, which does not stop with the other faults) is added as well:
 * a deployment whose processing + round trip outlasts the client's timeout
 * answers no client ever, and nothing can take a live request over there,
 * so waiting for the answer is simply what a well-behaved client after
 * "outcome unknown" does (without it every such run was a false alarm).
 *
 * For a leased service it is deliberately not added: a client that gives up
 * before a slow request finishes and retries is exactly what a lease taken
 * over too early livelocks on (the early-take-over canary only fails here),
 * even though it costs this phase up to ~30 resubmissions per operation —
 * about half of a key_atomic campaign's requests. There, a deployment whose
 * lease does not outlast timeout + processing + skew is excused instead
 * (checkers/progress.ts).
 */
export function recoveryTimeoutMs(s: Scenario, leased = true): number {
  const roundTripMs = 4 * (s.network.latencyMeanMs + 3 * s.network.latencySdMs) + 1;
  return Math.max(s.client.timeoutMs, leased ? roundTripMs : roundTripMs + s.faults.slowMs);
}

/** Upper bound on resubmissions per operation (the virtual-time budget usually ends it first; either way the phase asks once more). */
const RECOVERY_ATTEMPTS_MAX = 200;

/**
 * SPEC §5 invariant 5 (`progress`) needs to know what happens *after* the
 * faults stop. This phase runs once the main run has ended, on a fresh
 * kernel so that the main run's trace, schedule and decisions are exactly
 * what they were before this phase existed (scenario files replay
 * unchanged). It keeps the same database and the same service instances — the
 * state the faults left behind, placeholders and in-process maps included —
 * disarms the fault counters (lost answers, crashes, pauses), uses a
 * loss-free network with no kill, and starts once every lease has expired
 * (main end + the service's `progress.settleMs` — the tracker's lease — + the clocks' largest skew + 1 ms). Slow processing and
 * clock skew stay: SPEC §5 lists lost answers, crashes, pauses and kills as
 * the faults that stop; processing time and skew are the deployment.
 *
 * Each operation that did not end in success behaves like a well-behaved
 * client after "outcome unknown … query before resubmitting": it first asks
 * the service's `progress.query` (and once more when its budget runs out
 * with no definite answer) (the tracker: `GET /reports?run_id=…`); if the effect exists, the operation is done. If
 * not, it resubmits its last request verbatim (same tool call, same key,
 * same body) with the scenario's client timeout (at least a round trip, and
 * for a service without a lease the processing time too, see
 * {@link recoveryTimeoutMs}) and backoff until it gets a
 * 2xx, a non-retryable answer, or the budget of 2 × (lease + timeout +
 * processing) + 1 s of virtual time runs out. Operations recover
 * concurrently (their keys differ); decisions always take candidate 0, so
 * the phase is deterministic without a recorded schedule.
 */
export async function runRecovery(r: RecoveryInput): Promise<{ outcomes: Map<string, RecoveryOutcome>; trace: string[] }> {
  const s = r.scenario;
  const outcomes = new Map<string, RecoveryOutcome>();
  const pending = r.ends.filter((e) => !e.results.some((x) => x.kind === 'success'));
  if (pending.length === 0) return { outcomes, trace: [] };
  for (const inst of r.instances) {
    inst.faults.loseResponseAfterCommit = 0;
    inst.faults.crashMidRequest = 0;
    inst.faults.pause = undefined;
  }
  const settleMs = r.progress.settleMs;
  const startMs = r.mainEndMs + settleMs + clockSkewMs(s) + 1;
  const timeoutMs = recoveryTimeoutMs(s, r.progress.leased);
  const budgetMs = 2 * (settleMs + timeoutMs + s.faults.slowMs) + 1000;
  const kernel = new Kernel({
    seed: s.seed,
    choices: new ListChoice([]),
    // Only a kept trace is worth building: nothing reads the recovery phase's hash.
    trace: r.keepTrace ? new Trace(true) : false,
    // Plus what the main run's carried timers fire while the phase lasts (a sweeper waiting out hours of skew).
    eventsMax: 200_000 + 2 * (r.mainClock?.carriedFirings(startMs + budgetMs) ?? 0),
    timeMsMax: startMs + budgetMs + 3_600_000,
    replayHint: `retrysim replay <file> (scenario '${s.name}', recovery phase, seed ${s.seed})`,
  });
  const servers = r.instances.map((inst, i) => new SimServer(i, inst));
  const net = new SimNetwork(kernel, servers, kernel.fork('recovery/net'), { latencyMeanMs: s.network.latencyMeanMs, latencySdMs: s.network.latencySdMs });
  for (const end of pending) {
    const req = r.lastRequests.get(end.id);
    if (req === undefined) continue; // never sent anything: nothing to recover (cannot happen with ≥ 1 worker)
    const name = `recover.${end.id}`;
    const rng = kernel.fork(name);
    const transport = net.transport(name);
    kernel.spawn(name, async () => {
      await kernel.sleep(startMs);
      outcomes.set(end.id, await recoverOperation({
        scenario: s, progress: r.progress, end, req, startMs, timeoutMs, budgetMs,
        send: (x, t) => transport.send(x, t), sleep: (ms) => kernel.sleep(ms), now: () => kernel.now, rng,
        onFound: () => kernel.log(name, `query found the ${r.instances[0]?.effectNoun ?? 'effect'}`),
      }));
    });
  }
  // The handlers run on this phase's kernel clock, as in the main run.
  const clock = onKernelClock(kernel, r.instances, s.service.epochMs ?? 0);
  r.mainClock?.carryTo(clock);
  try {
    await clock.watch(kernel.run(), (scope) => stuckRequest((r.instances[0] as { def?: { name: string } } | undefined)?.def?.name ?? 'service', scope, kernel));
  } finally {
    clock.release();
  }
  return { outcomes, trace: r.keepTrace ? kernel.trace!.lines() : [] };
}

/** What one operation's recovery client needs: the request to resubmit, the phase's numbers, and a clock and wire (the kernel's, or real ones in real mode). */
export interface RecoverOperationInput {
  scenario: Scenario;
  progress: NonNullable<ServiceDefinition['progress']>;
  end: OperationEnd;
  req: TrackerRequest;
  /** When the phase started (only reported in the outcome). */
  startMs: number;
  timeoutMs: number;
  budgetMs: number;
  send(req: TrackerRequest, timeoutMs: number): Promise<WireOutcome>;
  sleep(ms: number): Promise<void>;
  now(): number;
  rng: Prng;
  onFound?(): void;
}

/** The operation request's headers a GET asking about it does not carry (its body's type, its key; the tenant is set anew). */
const NOT_FOR_THE_QUERY = new Set(['content-type', 'idempotency-key', 'x-tenant']);

/**
 * One operation's recovery, as {@link runRecovery} describes it: ask the
 * service's query, else resubmit the last request verbatim with backoff
 * until a 2xx, a non-retryable answer, or the budget (then ask once more).
 * Called from the phase's start; the same client in simulation and in real
 * mode (conformance's recovery), so both sides judge `progress` alike.
 */
export async function recoverOperation(o: RecoverOperationInput): Promise<RecoveryOutcome> {
  const { scenario: s, end, req, startMs, timeoutMs, budgetMs } = o;
  const policy = NAMED_POLICIES[s.client.policy]!;
  // The service's own headers on the operation's requests (operation.headers: credentials) go with the query too.
  // (The clients build every request's headers from strings: no value is undefined.)
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!NOT_FOR_THE_QUERY.has(k)) headers[k] = v as string;
  if (end.tenant !== 'default') headers['x-tenant'] = end.tenant;
  const query = { method: 'GET', path: o.progress.query({ runId: end.runId, tenant: end.tenant }).path, headers, body: '' };
  /** Asks whether the operation took effect. */
  const found = async (waitMs = timeoutMs): Promise<boolean> => {
    const q = await o.send(query, waitMs);
    if (q.kind === 'response' && o.progress.found(q.status, q.body)) {
      o.onFound?.();
      return true;
    }
    return false;
  };
  // The budget counts from the phase's start, the first question included.
  const phaseStart = o.now();
  if (await found()) return { kind: 'found', attempts: 0, fromMs: startMs, timeoutMs };
  let last: string;
  // The loop always ends by a return: a 2xx, a refusal, or the last question at the budget or the cap.
  for (let attempt = 1; ; attempt++) {
    const w = await o.send(req, timeoutMs);
    if (w.kind === 'response') {
      if (w.status >= 200 && w.status < 300) {
        // The body as it came: the words about it (progress.ts) are made only for a violation.
        return { kind: 'success', attempts: attempt, fromMs: startMs, timeoutMs, last: `HTTP ${w.status}`, body: w.body, headers: w.headers };
      }
      last = `HTTP ${w.status}`;
      if (!RETRYABLE_STATUSES.has(w.status)) return { kind: 'refused', attempts: attempt, fromMs: startMs, timeoutMs, last, status: w.status };
    } else {
      last = w.reason;
    }
    if (o.now() - phaseStart >= budgetMs || attempt === RECOVERY_ATTEMPTS_MAX) {
      // Out of budget (or of resubmissions) with no definite answer: the
      // outcome is unknown, so a well-behaved client asks once more
      // (SPEC §4, "query before resubmitting"). A deployment whose
      // processing (replays included) outlasts the client's timeout
      // makes the effect on a timed-out resubmission and can never say
      // so in an answer: without this ask, a correct leased service was
      // refuted with "1 report exists" (at the cap too: a long lease and
      // a short timeout fit 200 resubmissions in the budget).
      // A definite refusal (422 for a completed request) is not softened:
      // it stays `refused` above. This last ask waits out the processing
      // time too (the slow fault is the deployment's): a read that can
      // never answer within the impatient timeout says nothing about
      // the effect (a hosted app whose query reads the slow store was
      // refuted with "1 order exists").
      if (await found(recoveryTimeoutMs(s, false))) return { kind: 'found', attempts: attempt, fromMs: startMs, timeoutMs };
      return { kind: 'gave_up', attempts: attempt, fromMs: startMs, timeoutMs, last };
    }
    // Backoff as the harness does, its growth capped at its 4th retry so the budget, not the wait, bounds the phase.
    await o.sleep(retryDelayMs(policy, Math.min(attempt, 4), o.rng));
  }
}
