import { MATRIX_COLUMNS, MATRIX_ROWS, canonicalScenario, rowName, type MatrixRow } from '../scenario/canonical.js';
import { scenarioSchema, type Scenario } from '../scenario/schema.js';
import { runScenario } from '../scenario/run.js';
import { runScenarioReal } from './scenario-real.js';
import { builtinService } from '../tracker/builtin.js';

/**
 * Conformance: the canonical scenarios (`retrysim matrix`) run twice, once in
 * the simulation and once against real `retrysim serve` processes, compared
 * cell by cell on the reports held and on which invariants broke.
 *
 * One column is added here that the matrix does not have: `kill_mid_request`,
 * a real `kill -9` of the server while the request is at its `process` step,
 * restarted on the same database file after a delay chosen by
 * {@link killRestartMs} (the canonical scenarios
 * have no kill, and the kill is the fault most worth checking for real).
 */

/** The extra conformance-only column. */
export const KILL_COLUMN = 'kill_mid_request';

/** Every column conformance runs: the matrix's six, then the kill. */
export const CONFORMANCE_COLUMNS: readonly string[] = [...MATRIX_COLUMNS, KILL_COLUMN];

/**
 * The restart delay of the kill column, chosen so that the outcome does not
 * hinge on a few milliseconds: the simulation is run once with the server
 * never coming back, which gives the times of the retries that find it down
 * (the same jitter draws as the real client); the restart is put in the
 * middle of the widest gap between two such retries in 150–700 ms after the
 * kill. A restart right next to a retry would make the real cell a coin toss
 * (scheduling noise is a few ms), which is no test of the model.
 */
export async function killRestartMs(row: MatrixRow, seed = 1): Promise<number> {
  const probe = await runScenario(killScenario(canonicalScenario('crash_mid_request', row, seed), row, 60_000));
  const attempts = probe.operations[0]!.attempts;
  const killSeenAt = attempts[0]!.endMs;
  const times = [0, ...attempts.slice(1).map((a) => a.startMs - killSeenAt)];
  let best = { width: -1, mid: 500 };
  for (let i = 1; i < times.length; i++) {
    const lo = Math.max(times[i - 1]!, 150);
    const hi = Math.min(times[i]!, 700);
    if (hi - lo > best.width) best = { width: hi - lo, mid: Math.round((lo + hi) / 2) };
  }
  return best.width > 0 ? best.mid : 500;
}

/** The scenario of one conformance cell (async: the kill column picks its restart delay from a probe run). */
export async function conformanceScenario(column: string, row: MatrixRow, seed = 1): Promise<Scenario> {
  if (column !== KILL_COLUMN) {
    if (!(MATRIX_COLUMNS as readonly string[]).includes(column)) throw new Error(`unknown column '${column}'; columns: ${CONFORMANCE_COLUMNS.join(', ')}`);
    return canonicalScenario(column as (typeof MATRIX_COLUMNS)[number], row, seed);
  }
  const base = canonicalScenario('crash_mid_request', row, seed);
  return killScenario(base, row, await killRestartMs(row, seed));
}

function killScenario(base: Scenario, row: MatrixRow, restartAfterMs: number): Scenario {
  return scenarioSchema.parse({
    ...base,
    name: `${KILL_COLUMN} · ${rowName(row)}`,
    description: `kill -9 of the server when the request reaches its process step; restart ${restartAfterMs} ms later on the same database. ` +
      'Ten attempts let the harness outlast the restart (its jitter draws are the same in both worlds).',
    client: { ...base.client, maxAttempts: 10 },
    faults: { ...base.faults, crashMidRequest: 0, kill: { instance: 0, atStep: builtinService(row.variant).slowStep!, restartAfterMs } },
    schedule: [],
    expect: {},
  });
}

/** One cell in both worlds. */
export interface ConformanceCell {
  row: string;
  column: string;
  sim: { reports: number; violations: string[] };
  real: { reports: number; violations: string[]; kills: number; wallMs: number };
  /** Same reports and same set of broken invariants. */
  same: boolean;
}

/** Options of {@link runConformance}. */
export interface ConformanceOptions {
  seed?: number;
  /** Row names (`variant/keySource`) to run; default all. */
  rows?: readonly string[];
  /** Columns to run; default all. */
  columns?: readonly string[];
  /** Called after each cell (progress). */
  onCell?: (c: ConformanceCell, done: number, total: number) => void;
}

function invariantSet(vs: readonly { invariant: string }[]): string[] {
  return [...new Set(vs.map((v) => v.invariant))].sort();
}

/** Runs the selected cells in both worlds, one after the other (real cells are timing-sensitive). */
export async function runConformance(opts: ConformanceOptions = {}): Promise<ConformanceCell[]> {
  const seed = opts.seed ?? 1;
  const rows = MATRIX_ROWS.filter((r) => opts.rows === undefined || opts.rows.includes(rowName(r)));
  const columns = opts.columns ?? CONFORMANCE_COLUMNS;
  for (const r of opts.rows ?? []) {
    if (!MATRIX_ROWS.some((m) => rowName(m) === r)) throw new Error(`unknown row '${r}'; rows: ${MATRIX_ROWS.map(rowName).join(', ')}`);
  }
  const total = rows.length * columns.length;
  const out: ConformanceCell[] = [];
  for (const row of rows) {
    for (const column of columns) {
      const s = await conformanceScenario(column, row, seed);
      const sim = await runScenario(s);
      const real = await runScenarioReal(s);
      const simV = invariantSet(sim.violations);
      const realV = invariantSet(real.violations);
      const cell: ConformanceCell = {
        row: rowName(row),
        column,
        sim: { reports: sim.reports.op1 ?? 0, violations: simV },
        real: { reports: real.reports.op1 ?? 0, violations: realV, kills: real.kills, wallMs: real.wallMs },
        same: (sim.reports.op1 ?? 0) === (real.reports.op1 ?? 0) && simV.join() === realV.join(),
      };
      out.push(cell);
      opts.onCell?.(cell, out.length, total);
    }
  }
  return out;
}
