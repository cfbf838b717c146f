import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isHostedApp } from '../app/define.js';
import type { ServiceDefinition } from '../service/definition.js';
import { APP_STATE_HOME, SERVICE_STATE_HOME } from '../service/errors.js';

/** This package's command line (bin/ sits two levels above src/cli and dist/cli alike). */
const BIN = fileURLToPath(new URL('../../bin/retrysim.js', import.meta.url));

/**
 * Replays a counterexample file just written as its reader will: `retrysim
 * replay` in a process of its own, which loads the user's module afresh.
 * A campaign loads the module once for all its runs, so state the module
 * keeps at module level (a Map of keys, a cache, a counter) outlives each
 * simulated run, and a later run can fail on what an earlier one left —
 * a failure no fresh process shows. `modules` are the replay's flags naming
 * them (`--service PATH`, `--client PATH`), as the printed replay line has them; `env`, variables
 * set for the child over this process's (check --app empties RETRYSIM_APP_PER_PROCESS: the file's
 * service.moduleLoads says how the app loads, as the printed line runs it). Resolves to why the file did not
 * reproduce (expect not met, or a divergence), or undefined when it did or
 * when the replay could not judge it (its own error is not this file's).
 * `same`, when given, is what the run the campaign found and printed gave
 * (`traceHash`, or for a retry client `sentHash`: what it sent and got,
 * without header values no check reads): a replay that meets `expect` on
 * another run (the same check broken at other instants or by other
 * requests) did not reproduce it either — a client whose module-level rate
 * limiter kept a `Date.now()` from earlier runs sent its first request at
 * t=1381 ms in the campaign and at t=0 in the replay, and the line and the
 * file's description gave times the file never shows. A client's is not
 * its trace hash because that covers every header's value: an instance id
 * made once at load differs between the campaign's process and a fresh
 * one, and was taken for state carried between runs.
 */
export function freshReplayProblem(file: string, modules: readonly string[], env: Record<string, string> = {}, same?: { field: 'traceHash' | 'sentHash'; value: string }): string | undefined {
  const r = spawnSync(process.execPath, [BIN, 'replay', ...modules, file, '--json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } });
  if (r.status === 0 && same !== undefined) {
    try {
      const got = (JSON.parse(r.stdout) as Record<string, unknown>)[same.field];
      if (typeof got === 'string' && got !== same.value) {
        return same.field === 'traceHash' ? `it met its expect on another run: trace ${got.slice(0, 12)}, where the run found had ${same.value.slice(0, 12)}`
          : `it met its expect on another run: what the client sent and got differs (${got.slice(0, 12)}, where the run found had ${same.value.slice(0, 12)})`;
      }
    } catch {
      // not JSON: nothing to compare
    }
  }
  if (r.status === 1 || r.status === 3) {
    try {
      const j = JSON.parse(r.stdout) as { problems?: string[]; diverged?: { message?: string } };
      if (j.diverged !== undefined) return `it diverged: ${j.diverged.message ?? 'another schedule'}`;
      if (j.problems !== undefined && j.problems.length > 0) return `expect not met: ${j.problems.join('; ')}`;
    } catch {
      // not JSON: the replay's one line on stderr says it
    }
    return r.stderr.trim().split('\n')[0] ?? `exit ${r.status}`;
  }
  return undefined;
}

/** The one line for a module whose counterexample does not reproduce in a fresh process. */
export function notReproducedMessage(subject: string, why: string, stateHome: string): string {
  return `${subject}: its counterexample did not reproduce when replayed in a fresh process (${why}): its behaviour depends on more than the run — most often state kept at module level (a Map, a cache, a counter), which lives on from one simulated run to the next in a campaign; ${stateHome}`;
}

/** {@link notReproducedMessage} for a service or a hosted app, with where its per-process state belongs. */
export function serviceNotReproduced(def: ServiceDefinition, why: string): string {
  return isHostedApp(def)
    ? notReproducedMessage(`app '${def.name}'`, why, APP_STATE_HOME)
    : notReproducedMessage(`service '${def.name}'`, why, SERVICE_STATE_HOME);
}

export { CLIENT_STATE_HOME } from '../client/load.js';
