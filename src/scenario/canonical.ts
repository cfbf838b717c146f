import { SCENARIO_FORMAT, scenarioSchema, type Scenario, type ScenarioInput } from './schema.js';
import type { BuiltinName as Variant } from '../tracker/builtin.js';
import type { KeySource } from '../harness/keys.js';

/** The canonical scenarios of SPEC §4, as matrix columns. */
export const MATRIX_COLUMNS = [
  'lost_response',
  'crash_mid_request',
  'concurrent_duplicate',
  'model_new_id',
  'model_rewrite_title',
  'slow_takeover',
] as const;
/** One canonical scenario (a matrix column). */
export type MatrixColumn = (typeof MATRIX_COLUMNS)[number];

/** A matrix row: a write strategy and a key source. */
export interface MatrixRow {
  variant: Variant;
  keySource: KeySource;
}

/** The rows SPEC §4 asks for, plus fencing-off and the in-process store. */
export const MATRIX_ROWS: readonly MatrixRow[] = [
  { variant: 'naive', keySource: 'none' },
  { variant: 'key_atomic', keySource: 'per_attempt' },
  { variant: 'key_split', keySource: 'tool_call' },
  { variant: 'key_atomic', keySource: 'tool_call' },
  { variant: 'key_atomic', keySource: 'business' },
  { variant: 'key_atomic_nofence', keySource: 'tool_call' },
  { variant: 'memory_singleflight', keySource: 'tool_call' },
];

/** `variant/keySource`, the row's name in tables and JSON. */
export function rowName(r: MatrixRow): string {
  return `${r.variant}/${r.keySource}`;
}

const OP = { id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay button does nothing', steps: '1. add item\n2. press Pay' };

/**
 * Scenarios 4 and 5 (SPEC §4): the first request commits, then stalls at
 * `respond` longer than the client's 2 s timeout, so its answer is lost to
 * the harness. One request only: the resubmission is answered normally.
 */
/** Columns whose tool calls each make a single attempt. */
const ONE_ATTEMPT_PER_CALL: ReadonlySet<MatrixColumn> = new Set(['model_new_id', 'model_rewrite_title']);
const LOST_FIRST_ANSWER = { pause: { atStep: 'respond', ms: 2500, count: 1 } };

/**
 * What each canonical scenario sets up, in words and as scenario fields.
 * The row supplies the variant and key source.
 */
const COLUMNS: Record<MatrixColumn, { description: string; build: () => Omit<ScenarioInput, 'format' | 'name' | 'seed' | 'expect' | 'description'> }> = {
  lost_response: {
    description: 'The report is committed, then the connection closes without a response; the harness retries.',
    build: () => ({ service: { variant: 'naive' }, client: { keySource: 'none' }, faults: { loseResponseAfterCommit: 1 }, operations: [OP] }),
  },
  crash_mid_request: {
    description: "The handler crashes at the variant's crash point (500); the harness retries.",
    build: () => ({ service: { variant: 'naive' }, client: { keySource: 'none' }, faults: { crashMidRequest: 1 }, operations: [OP] }),
  },
  concurrent_duplicate: {
    description: 'Two workers run the same operation at once while processing is slow (100 ms).',
    build: () => ({ service: { variant: 'naive' }, client: { keySource: 'none', maxAttempts: 6 }, faults: { slowMs: 100 }, operations: [{ ...OP, workers: 2 }] }),
  },
  model_new_id: {
    description: 'The first tool call\'s report is committed, but its answer never reaches the harness (the server stalls 2.5 s after the commit, past the 2 s timeout) ' +
      'and the tool call\'s 2 s deadline leaves no time for another attempt: the harness gives up with "outcome unknown", and the model resubmits as a new tool call.',
    build: () => ({ service: { variant: 'naive' }, client: { keySource: 'none', deadlineMs: 2000, model: { resubmits: 1, reword: false } }, faults: LOST_FIRST_ANSWER, operations: [OP] }),
  },
  model_rewrite_title: {
    description: 'As model_new_id, but the model rewords the title when it resubmits.',
    build: () => ({ service: { variant: 'naive' }, client: { keySource: 'none', deadlineMs: 2000, model: { resubmits: 1, reword: true } }, faults: LOST_FIRST_ANSWER, operations: [OP] }),
  },
  slow_takeover: {
    description: 'Lease 0.5 s, but the first request stalls 0.8 s in processing: a second worker arriving at 0.6 s takes the key over while the first is still live, and the first then tries to finish.',
    build: () => ({
      service: { variant: 'naive', leaseMs: 500, allowUnsafeLease: true },
      client: { keySource: 'none' },
      // One request is slow (a pause at `process`), not all of them: if every
      // request took 0.8 s, each retry would take over the previous holder in
      // turn and (with fencing) nobody would finish — safe, but not this scenario.
      faults: { pause: { atStep: 'process', ms: 800, count: 1 } },
      operations: [{ ...OP, workers: 2, staggerMs: 600 }],
    }),
  },
};

/**
 * Reports the server should hold for the one logical operation — our claim
 * for each cell, written down by reasoning about each strategy, not copied
 * from a run. The replay test holds every canonical file to it.
 */
export const EXPECTED_REPORTS: Record<string, Record<MatrixColumn, number>> = {
  // No key: every committed attempt is a report; the lost first tool call and the model's resubmission make 2.
  'naive/none': { lost_response: 2, crash_mid_request: 2, concurrent_duplicate: 2, model_new_id: 2, model_rewrite_title: 2, slow_takeover: 2 },
  // A fresh key per attempt dedups nothing; a crash before the write leaves nothing behind.
  'key_atomic/per_attempt': { lost_response: 2, crash_mid_request: 1, concurrent_duplicate: 2, model_new_id: 2, model_rewrite_title: 2, slow_takeover: 2 },
  // Two commits: a crash between them, or two requests racing past the lookup, duplicate.
  'key_split/tool_call': { lost_response: 1, crash_mid_request: 2, concurrent_duplicate: 2, model_new_id: 2, model_rewrite_title: 2, slow_takeover: 2 },
  // Holds within one tool call; a new tool call is a new key.
  'key_atomic/tool_call': { lost_response: 1, crash_mid_request: 1, concurrent_duplicate: 1, model_new_id: 2, model_rewrite_title: 2, slow_takeover: 1 },
  // The content key survives a new tool call, not a reworded title.
  'key_atomic/business': { lost_response: 1, crash_mid_request: 1, concurrent_duplicate: 1, model_new_id: 1, model_rewrite_title: 2, slow_takeover: 1 },
  // Without the fence the stale finisher commits a second report after a take-over.
  'key_atomic_nofence/tool_call': { lost_response: 1, crash_mid_request: 1, concurrent_duplicate: 1, model_new_id: 2, model_rewrite_title: 2, slow_takeover: 2 },
  // In one process the in-flight map shares the winner's result; no lease to expire.
  'memory_singleflight/tool_call': { lost_response: 1, crash_mid_request: 1, concurrent_duplicate: 1, model_new_id: 2, model_rewrite_title: 2, slow_takeover: 1 },
};

/** The canonical scenario for one cell, with `expect` set to the claimed count. */
export function canonicalScenario(column: MatrixColumn, row: MatrixRow, seed = 1): Scenario {
  const c = COLUMNS[column];
  const base = c.build();
  const expected = EXPECTED_REPORTS[rowName(row)]?.[column];
  const input: ScenarioInput = {
    format: SCENARIO_FORMAT,
    name: `${column} · ${rowName(row)}`,
    description: c.description,
    seed,
    ...base,
    service: { ...base.service, variant: row.variant },
    client: { ...base.client, keySource: row.keySource },
    expect: expected === undefined ? {} : {
      reports: { op1: expected },
      // Scenarios 1–3 and 6 retry within a tool call, so a per-attempt key
      // changes within it (invariant 3); in 4 and 5 each tool call makes one
      // attempt (its deadline runs out), so there is nothing to change.
      violations: [...(expected === 1 ? [] : ['exactly-one' as const]), ...(row.keySource === 'per_attempt' && !ONE_ATTEMPT_PER_CALL.has(column) ? ['stable-key' as const] : [])],
    },
  };
  return scenarioSchema.parse(input);
}

/** File name of a canonical scenario under scenarios/canonical/. */
export function canonicalFileName(column: MatrixColumn, row: MatrixRow): string {
  return `${column}/${row.variant}--${row.keySource}.json`;
}
