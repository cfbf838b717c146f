import { flags } from './args.js';
import { loadScenario, ScenarioError } from '../scenario/load.js';
import { matchesExpect, runScenario } from '../scenario/run.js';
import { ReplayDivergenceError } from '../sim/choice/replay.js';
import { DeadlockError, SimLimitError } from '../sim/errors.js';

const HELP = `retrysim replay FILE [--trace] [--json]

Runs a scenario file exactly as recorded and checks its 'expect'.
  --trace   one line per event: time, actor, what happened, DB effect
  --json    {"file", "name", "seed", "reports", "violations", "traceHash", "expectMet", "problems"}
Exit: 0 when the outcome matches expect, 1 when not, 2 for a bad file or bad flags.`;

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const a = flags('replay', argv, { trace: { type: 'boolean' }, json: { type: 'boolean' } }, HELP, true);
  if (typeof a === 'number') return a;
  const { values, positionals } = a;
  if (positionals.length !== 1) {
    console.error(`retrysim replay: expected exactly one scenario file, got ${positionals.length}\n\n${HELP}`);
    return 2;
  }
  const file = positionals[0]!;
  let scenario;
  try {
    scenario = loadScenario(file);
  } catch (e) {
    if (e instanceof ScenarioError) {
      console.error(`retrysim replay: ${e.message}`);
      return 2;
    }
    throw e;
  }
  let r;
  try {
    r = await runScenario(scenario, { keepTrace: values.trace === true, replayHint: `retrysim replay ${file}` });
  } catch (e) {
    if (e instanceof ReplayDivergenceError) {
      console.error(`retrysim replay: ${file}: ${e.message}`);
      return 1;
    }
    if (e instanceof SimLimitError || e instanceof DeadlockError) {
      // A valid file whose run cannot finish (its times or attempts add up
      // past the kernel's limits): a verdict about the scenario, not a crash.
      const why = e instanceof SimLimitError
        ? `the run did not finish: it reached the simulation limit ${e.limit}=${e.value} at t=${e.timeMs.toFixed(0)} ms ` +
          `(durations, attempts and resubmits add up to more than the kernel runs; shorten them)`
        : `the run did not finish: ${e.message}`;
      if (values.json) console.log(JSON.stringify({ file, name: scenario.name, seed: scenario.seed, finished: false, error: why, expectMet: false }));
      else console.error(`retrysim replay: ${file}: ${why}`);
      return 1;
    }
    throw e;
  }
  const m = matchesExpect(scenario, r);
  if (values.json) {
    console.log(JSON.stringify({ file, name: scenario.name, seed: scenario.seed, reports: r.reports, violations: r.violations, traceHash: r.result.traceHash, expectMet: m.ok, problems: m.problems }));
    return m.ok ? 0 : 1;
  }
  console.log(`retrysim replay ${file}`);
  console.log(`scenario: ${scenario.name} — seed ${scenario.seed}, ${scenario.service.variant}/${scenario.client.keySource}`);
  if (scenario.description) console.log(`  ${scenario.description}`);
  if (values.trace) {
    console.log('\ntimeline:');
    for (const l of r.trace) console.log('  ' + l);
  }
  console.log('\nattempts:');
  for (const op of r.operations) {
    for (const a of [...op.attempts].sort((x, y) => x.startMs - y.startMs)) {
      const o = a.outcome.kind === 'http' ? `HTTP ${a.outcome.status}` : a.outcome.reason;
      console.log(`  ${op.id} ${a.toolUseId}#${a.attempt} t=${a.startMs.toFixed(1)}→${a.endMs.toFixed(1)} ms key=${a.key ?? '-'} ${o}` +
        `${a.reportId !== undefined ? ` report_id=${a.reportId}` : ''}${a.replay ? ' (replay)' : ''}`);
    }
  }
  console.log(`\nreports held: ${Object.entries(r.reports).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  console.log(r.violations.length === 0 ? 'invariants: all hold' : 'violations:\n' + r.violations.map((v) => `  ${v.invariant} (${v.op}): ${v.detail}`).join('\n'));
  console.log(`schedule: ${r.result.choices.length} choices; trace ${r.result.traceHash}`);
  console.log(m.ok ? 'expect: met' : 'expect: NOT met\n' + m.problems.map((p) => '  ' + p).join('\n'));
  return m.ok ? 0 : 1;
}
