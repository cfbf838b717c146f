/**
 * The PRE-PORT baseline, kept only for the overhead bench (service.bench.ts):
 * how `runScenario` ran a built-in variant before the variants were ported
 * onto the service API — a TrackerInstance per server on its own Store,
 * judged by a checker that read the tracker's own tables. The framework no
 * longer uses any of this (docs/design.md invariant 7: no back door); the bench
 * runs it side by side with the ported path, in one process, and checks
 * that both end every run the same way.
 */
import { Kernel, type RunResult } from '../../src/sim/kernel.js';
import { Trace } from '../../src/sim/trace.js';
import { ReplayChoice, ReplayDivergenceError } from '../../src/sim/choice/replay.js';
import { RandomChoice } from '../../src/sim/choice/random.js';
import { openStore, type Store } from '../../src/tracker/store.js';
import { TrackerInstance } from '../../src/tracker/instance.js';
import type { Variant } from '../../src/tracker/strategy.js';
import type { TrackerRequest } from '../../src/tracker/messages.js';
import { usesLease } from '../../src/tracker/variants.js';
import { trackerService } from '../../src/tracker/service.js';
import { checkProgress } from '../../src/checkers/progress.js';
import type { OperationEnd, Violation } from '../../src/checkers/invariants.js';
import { clockSkewMs, recoveryTimeoutMs, runRecovery } from '../../src/scenario/recovery.js';
import { SimNetwork, SimServer } from '../../src/net/sim-network.js';
import { planWorkers } from '../../src/scenario/workers.js';
import type { Scenario } from '../../src/scenario/schema.js';
import { ObservedTrace, observedTransport } from '../../src/scenario/observe.js';
import type { RunOptions, ScenarioRun } from '../../src/scenario/run.js';

/** A built-in variant's scenario on the pre-port path. */
export async function runPrePort(s: Scenario, opts: RunOptions & { store?: Store } = {}): Promise<ScenarioRun> {
  const choices = opts.choices ?? (s.schedule.length > 0 || opts.strictReplay ? new ReplayChoice(s.schedule) : new RandomChoice(s.seed));
  // A campaign reused one store across its runs (reset before each), as here when one is given.
  const store = opts.store ?? openStore(':memory:');
  const obs = opts.observe;
  const kernel = new Kernel({
    seed: s.seed,
    choices,
    trace: obs !== undefined ? new ObservedTrace(opts.keepTrace ?? false, obs, store.db) : opts.hashTrace === false && !opts.keepTrace ? false : new Trace(opts.keepTrace ?? false),
    eventsMax: 200_000,
    timeMsMax: 3_600_000,
    replayHint: opts.replayHint ?? `retrysim replay <file> (scenario '${s.name}', seed ${s.seed})`,
  });
  store.reset();
  try {
    const instances: TrackerInstance[] = [];
    const servers = Array.from({ length: s.service.instances }, (_, i) => new SimServer(i, instances[i] = new TrackerInstance({
      name: `s${i}`,
      variant: s.service.variant as Variant,
      db: store,
      leaseMs: s.service.leaseMs,
      clientTimeoutMs: recoveryTimeoutMs(s),
      allowUnsafeLease: s.service.allowUnsafeLease,
      completedTtlMs: s.service.completedTtlMs,
      // Counters are per instance; the scenario's faults arm instance 0 (the
      // first to be hit under round-robin), so a fault fires once, not once per instance.
      faults: {
        loseResponseAfterCommit: i === 0 ? s.faults.loseResponseAfterCommit : 0,
        crashMidRequest: i === 0 ? s.faults.crashMidRequest : 0,
        slowMs: s.faults.slowMs,
        pause: i === 0 ? s.faults.pause : undefined,
        clockOffsetMs: s.service.clockOffsetMs[i] ?? 0,
      },
    })));
    const net = new SimNetwork(kernel, servers, kernel.fork('net'), s.network, s.faults.kill);
    const { ends, workers } = planWorkers(s);
    // Each operation's last request, for the recovery phase to resubmit verbatim.
    const lastRequests = new Map<string, TrackerRequest>();
    for (const w of workers) {
      const rng = kernel.fork(w.rngLabel);
      const opId = ends[w.opIndex]!.id;
      const wire = net.transport(w.name);
      const transport = { send: (req: TrackerRequest, timeoutMs: number) => (lastRequests.set(opId, req), wire.send(req, timeoutMs)) };
      // Every client step either sleeps or sends: it touches what a send touches.
      const fp = net.clientFootprint;
      kernel.spawn(w.name, async () => {
        if (w.startMs > 0) await kernel.sleep(w.startMs, fp);
        const res = await w.run(obs === undefined ? transport : observedTransport(transport, w.name, obs), { now: () => kernel.now, sleep: (ms) => kernel.sleep(ms, fp), rng });
        const f = res.final;
        kernel.log(w.name, `result ${f.kind}`, f.kind === 'success'
          ? { reportId: f.reportId, replay: f.replay, toolCalls: res.toolCalls.length }
          : { error: f.error, toolCalls: res.toolCalls.length });
      }, { footprint: fp });
    }
    let result: RunResult;
    try {
      result = await kernel.run();
      if (choices instanceof ReplayChoice) choices.finish(result.choices);
    } catch (e) {
      // The run up to the divergence is what a reader needs to see why.
      if (e instanceof ReplayDivergenceError && opts.keepTrace) e.trace = kernel.trace!.lines();
      throw e;
    }
    obs?.end?.(store.db);
    // Invariants 1–4 are judged on the main run's end state, before recovery adds anything.
    const verdict = checkInvariants(store, ends);
    const rec = await runRecovery({ scenario: s, progress: trackerService({ variant: s.service.variant as Variant, leaseMs: s.service.leaseMs }).progress!, instances: instances as never, mainEndMs: result.timeMs, ends, lastRequests, keepTrace: opts.keepTrace ?? false });
    const progress = checkProgress((op) => store.reportIdsForRun(op.runId, op.tenant), ends, rec.outcomes, {
      usesLease: usesLease(s.service.variant as Variant),
      leaseMs: s.service.leaseMs,
      clientTimeoutMs: recoveryTimeoutMs(s),
      slowMs: s.faults.slowMs,
      skewMs: clockSkewMs(s),
    });
    return {
      reports: verdict.reports,
      violations: progress.length === 0 ? verdict.violations : [...verdict.violations, ...progress],
      operations: ends,
      result,
      trace: opts.keepTrace ? kernel.trace!.lines() : [],
      recovery: rec.outcomes,
      recoveryTrace: rec.trace,
    };
  } finally {
    if (opts.store === undefined) store.close();
  }
}

/**
 * Judges SPEC §5's invariants from the end state (the database) and the
 * clients' records. Checkers only read; they never inject faults.
 */
function checkInvariants(store: Store, ops: readonly OperationEnd[]): { reports: Record<string, number>; violations: Violation[] } {
  const violations: Violation[] = [];
  const reports: Record<string, number> = {};
  for (const op of ops) {
    // Ids only: a checker needs which reports exist, not their contents.
    const ids = store.reportIdsForRun(op.runId, op.tenant);
    reports[op.id] = ids.length;
    const sawSuccess = op.results.some((r) => r.kind === 'success');
    // 1. exactly one report: never two, and not zero once the client saw success.
    if (ids.length > 1) {
      violations.push({ invariant: 'exactly-one', op: op.id, detail: `${ids.length} reports (ids ${ids.join(', ')}) for one logical operation` });
    } else if (ids.length === 0 && sawSuccess) {
      violations.push({ invariant: 'exactly-one', op: op.id, detail: 'the client was told it succeeded, but no report exists' });
    }
    // 2 and 4. Every report id handed to the client exists and is this operation's.
    for (const a of op.attempts) {
      // The tracker answers numeric report ids only (its resultId reads a number or nothing).
      const reportId = a.reportId as number | undefined;
      if (reportId === undefined || ids.includes(reportId)) continue; // exists, and is this operation's
      const owner = store.ownerOfReport(reportId);
      if (owner === undefined) {
        violations.push({ invariant: 'id-exists', op: op.id, detail: `attempt ${a.toolUseId}#${a.attempt} was given report id ${a.reportId}, which does not exist` });
      } else if (owner.tenant !== op.tenant) {
        violations.push({ invariant: 'tenant-isolation', op: op.id, detail: `tenant '${op.tenant}' received report ${a.reportId} of tenant '${owner.tenant}'` });
      } else {
        violations.push({ invariant: 'id-exists', op: op.id, detail: `report ${a.reportId} belongs to run '${owner.run_id}', not '${op.runId}'` });
      }
    }
    // 3. Within one tool call, every attempt carried the same key.
    if (op.keySource !== 'none') {
      const byCall = new Map<string, Set<string | undefined>>();
      for (const a of op.attempts) {
        const s = byCall.get(a.toolUseId) ?? new Set();
        s.add(a.key);
        byCall.set(a.toolUseId, s);
      }
      for (const [call, keys] of byCall) {
        if (keys.size > 1) violations.push({ invariant: 'stable-key', op: op.id, detail: `tool call ${call} sent ${keys.size} different keys across its attempts` });
      }
    }
  }
  return { reports, violations };
}
