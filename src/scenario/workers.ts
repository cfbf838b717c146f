import { NAMED_POLICIES } from '../backoff/policies.js';
import { runOperation, type OperationResult } from '../harness/model-layer.js';
import type { AttemptRecord, ClientEnv, HarnessResult } from '../harness/client.js';
import type { KeySource } from '../harness/keys.js';
import type { Transport } from '../harness/transport.js';
import type { OperationEnd } from '../checkers/invariants.js';
import type { Scenario } from './schema.js';

/** One client worker of a scenario, ready to run in the simulation or for real. */
export interface WorkerPlan {
  /** Task / actor name, e.g. `op1.w0`. */
  name: string;
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
export function planWorkers(s: Scenario): { ends: OperationEnd[]; workers: WorkerPlan[] } {
  const policy = NAMED_POLICIES[s.client.policy]!;
  const keySource = s.client.keySource as KeySource;
  const ends: OperationEnd[] = s.operations.map((op) => ({
    id: op.id,
    runId: op.runId,
    tenant: op.tenant ?? 'default',
    keySource,
    attempts: [] as AttemptRecord[],
    results: [] as HarnessResult[],
  }));
  const workers: WorkerPlan[] = [];
  s.operations.forEach((op, i) => {
    const end = ends[i]!;
    const intent = { runId: op.runId, module: op.module, title: op.title, steps: op.steps, ...(op.tenant ? { tenant: op.tenant } : {}) };
    for (let w = 0; w < op.workers; w++) {
      let round = 0;
      workers.push({
        name: `${op.id}.w${w}`,
        startMs: op.startMs + w * op.staggerMs,
        rngLabel: `client/${op.id}/${w}`,
        async run(transport, env) {
          const log: AttemptRecord[] = [];
          const res = await runOperation(
            intent,
            // Workers of one operation run the same tool call, so they share
            // ids. Ids are numbered per run, as an agent framework numbers its
            // tool calls, so two tenants' runs can send the same raw key.
            () => `toolu_${op.runId}_${round++}`,
            transport,
            env,
            { keySource, policy, maxAttempts: s.client.maxAttempts, timeoutMs: s.client.timeoutMs, ...(s.client.deadlineMs !== undefined ? { deadlineMs: s.client.deadlineMs } : {}) },
            s.client.model,
            log,
          );
          for (const a of log) end.attempts.push(a);
          end.results.push(res.final);
          return res;
        },
      });
    }
  });
  return { ends, workers };
}
