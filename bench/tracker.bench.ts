import { MATRIX_COLUMNS, MATRIX_ROWS, canonicalScenario } from '../src/scenario/canonical.js';
import { runScenario } from '../src/scenario/run.js';

/** Canonical scenarios per second on one core, real in-memory SQLite, connection and statements reused. */
export default async function trackerBench(): Promise<void> {
  const scenarios = MATRIX_ROWS.flatMap((r) => MATRIX_COLUMNS.map((c) => canonicalScenario(c, r)));
  for (let i = 0; i < 300; i++) await runScenario(scenarios[i % scenarios.length]!, ); // warm-up
  const n = 5000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await runScenario(scenarios[i % scenarios.length]!);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({ bench: 'tracker.canonicalScenarios', scenarios: n, distinct: scenarios.length, seconds: +s.toFixed(3), scenariosPerSec: Math.round(n / s), target: 5000 }));
}
