import { readFileSync, writeFileSync } from 'node:fs';
import { flags } from './args.js';
import { ScenarioError, ScenarioReadError, printScenario } from '../scenario/load.js';
import { migrateScenario } from '../scenario/migrate.js';
import { SCENARIO_FORMAT } from '../scenario/schema.js';

const HELP = `retrysim migrate FILE... [--check]

Rewrites scenario files in the current format (${SCENARIO_FORMAT}), in place.
A version-1 file is re-run following its recorded decisions by label, its
schedule re-recorded (candidate 0 is now the task that just ran, and every
decision says whether it preempted), and it must still meet its expect.
  --check   write nothing; exit 1 if any file needs migrating
Exit: 0 done (or nothing to do), 1 with --check when a file is old, 2 for a bad file or flags (nothing written).`;

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const a = flags('migrate', argv, { check: { type: 'boolean' } }, HELP, true);
  if (typeof a === 'number') return a;
  if (a.positionals.length === 0) {
    console.error(`retrysim migrate: expected at least one scenario file\n\n${HELP}`);
    return 2;
  }
  // Everything is migrated in memory first, so one bad file writes nothing.
  const out: Array<{ file: string; text: string; migrated: boolean }> = [];
  for (const file of a.positionals) {
    try {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (e) {
        throw new ScenarioReadError(file, (e as NodeJS.ErrnoException).code ?? (e as Error).message);
      }
      const r = await migrateScenario(text, file);
      out.push({ file, text: printScenario(r.scenario), migrated: r.migrated });
    } catch (e) {
      if (e instanceof ScenarioError) {
        console.error(`retrysim migrate: ${e.message}`);
        return 2;
      }
      throw e;
    }
  }
  const old = out.filter((o) => o.migrated);
  if (a.values.check) {
    for (const o of old) console.log(`needs migrating: ${o.file}`);
    return old.length > 0 ? 1 : 0;
  }
  for (const o of old) {
    writeFileSync(o.file, o.text);
    console.log(`migrated: ${o.file}`);
  }
  console.log(`${old.length} migrated, ${out.length - old.length} already ${SCENARIO_FORMAT}`);
  return 0;
}
