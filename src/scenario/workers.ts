import { NAMED_POLICIES } from '../backoff/policies.js';
import { runOperation, type OperationResult } from '../harness/model-layer.js';
import type { AttemptRecord, ClientEnv, Endpoint, HarnessResult, ReportIntent } from '../harness/client.js';
import type { KeySource } from '../harness/keys.js';
import type { Transport } from '../harness/transport.js';
import type { OperationEnd } from '../checkers/invariants.js';
import type { Scenario } from './schema.js';

/** One client worker of a scenario, ready to run in the simulation or for real. */
export interface WorkerPlan {
  /** Task / actor name, e.g. `op1.w0`. */
  name: string;
  /** Index of the worker's operation in `scenario.operations` (and in `ends`). */
  opIndex: number;
  /** When the worker starts (operation start + worker × stagger), ms. */
  startMs: number;
  /** Label of the worker's random stream, forked from the scenario seed — the same in both worlds, so jitter and keys match draw for draw. */
  rngLabel: string;
  /** Runs the operation through the harness and the model layer, recording into the operation's end state. */
  run(transport: Transport, env: ClientEnv): Promise<OperationResult>;
}

/**
 * The checkers' view of each operation (filled as workers finish) and one
 * plan per worker. Shared by the simulation and the real-mode runner so both
 * drive exactly the same client code with the same inputs.
 */
export function planWorkers(s: Scenario, endpoint?: Endpoint): { ends: OperationEnd[]; workers: WorkerPlan[] } {
  const policy = NAMED_POLICIES[s.client.policy]!;
  const keySource = s.client.keySource as KeySource;
  const ends: OperationEnd[] = s.operations.map((op) => ({
    id: op.id,
    runId: op.runId,
    tenant: op.tenant ?? 'default',
    keySource,
    attempts: [] as AttemptRecord[],
    results: [] as HarnessResult[],
    ...(op.keyFrom !== undefined || s.operations.some((o) => o.keyFrom === op.id) ? { reusesKey: true } : {}),
  }));
  const workers: WorkerPlan[] = [];
  s.operations.forEach((op, i) => {
    const end = ends[i]!;
    // keyFrom: keys are derived from the other operation's run and title (a
    // client that copies a key between two different reports).
    const keyOp = op.keyFrom === undefined ? op : s.operations.find((o) => o.id === op.keyFrom)!;
    const intent = {
      runId: op.runId, module: op.module, title: op.title, steps: op.steps, ...(op.tenant ? { tenant: op.tenant } : {}),
      ...(keyOp !== op ? { keyFrom: { runId: keyOp.runId, module: keyOp.module, title: keyOp.title } } : {}),
    };
    for (let w = 0; w < op.workers; w++) {
      let round = 0;
      const name = `${op.id}.w${w}`;
      workers.push({
        name,
        opIndex: i,
        startMs: op.startMs + w * op.staggerMs,
        rngLabel: `client/${op.id}/${w}`,
        async run(transport, env) {
          const log: AttemptRecord[] = [];
          const res = await runOperation(
            intent,
            // Workers of one operation make the same call, so they share ids.
            // Ids are numbered per run (the tool_call key is run:id), as an
            // agent framework numbers its tool calls, so two tenants' runs can
            // send the same raw key. Neutral words: a user's service never
            // sees the built-in model layer's `toolu_` ids.
            () => `call-${++round}`,
            transport,
            env,
            { keySource, policy, maxAttempts: s.client.maxAttempts, timeoutMs: s.client.timeoutMs, ...(s.client.deadlineMs !== undefined ? { deadlineMs: s.client.deadlineMs } : {}), ...(endpoint ? { endpoint } : {}) },
            s.client.model,
            log,
          );
          for (const a of log) {
            a.worker = name;
            end.attempts.push(a);
          }
          end.results.push(res.final);
          const key = log[log.length - 1]?.key;
          if (s.client.keyReuseProbe && res.final.kind === 'success' && key !== undefined) {
            const probe = await probeKeyReuse(transport, key, intent, endpoint, s.client.timeoutMs, env.note);
            if (probe !== undefined) (end.probes ??= []).push(probe);
          }
          return res;
        },
      });
    }
  });
  return { ends, workers };
}

/** How the key-reuse probe's trace notes begin (the stepper finds the probe's request after it). */
export const KEY_REUSE_PROBE = 'key-reuse probe:';

/** The title the key-reuse probe sends instead of the operation's. */
export function editedTitle(title: string): string {
  return `${title} (edited)`;
}

/**
 * Sends one request with a key that already succeeded and a different body
 * (the title edited), once — again only after a 5xx, at most three sends in
 * all: the service must refuse it (SPEC §3: 422) and create nothing. Undefined, and nothing sent, when the
 * service's body does not change with the title: the same bytes again are
 * a plain retry, not a reuse (the campaign leaves the probe out for such a
 * service; a scenario file may still ask for it).
 */
async function probeKeyReuse(transport: Transport, key: string, original: ReportIntent, endpoint: Endpoint | undefined, timeoutMs: number, note?: (text: string) => void) {
  const intent = { ...original, title: editedTitle(original.title) };
  const headers: Record<string, string> = { 'content-type': 'application/json', ...endpoint?.headers?.(original), 'idempotency-key': key };
  if (intent.tenant !== undefined) headers['x-tenant'] = intent.tenant;
  const body = endpoint ? endpoint.body(intent) : JSON.stringify({ run_id: intent.runId, module: intent.module, title: intent.title, steps: intent.steps });
  if (endpoint && body === endpoint.body(original)) return undefined;
  // Said on the trace: otherwise a worker that already succeeded is seen sending again, for no stated reason.
  note?.(`${KEY_REUSE_PROBE} key '${key}' sent again with another body (title '${intent.title}'): it must be refused`);
  const send = async () => {
    const wire = await transport.send({ method: endpoint?.method ?? 'POST', path: endpoint?.path(original) ?? '/reports', headers, body }, timeoutMs);
    return wire.kind === 'response' ? wire.status : wire.reason;
  };
  let outcome = await send();
  // A 5xx asks the client to try again, as a client would: a fault that
  // struck the probe (a crash point, a lost store answer) is then behind it,
  // and only a service that answers the other body with a server error
  // every time is judged for it (src/service/check.ts).
  for (let i = 1; i < PROBE_SENDS_MAX && typeof outcome === 'number' && outcome >= 500; i++) {
    note?.(`${KEY_REUSE_PROBE} answered HTTP ${outcome}, a server error; sent again, as a client would`);
    outcome = await send();
  }
  return { key, outcome };
}

/** How often the key-reuse probe sends its request while the answer is a 5xx. */
const PROBE_SENDS_MAX = 3;
