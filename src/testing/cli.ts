import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';
import { main } from '../cli/main.js';

const BIN = fileURLToPath(new URL('../../bin/retrysim.js', import.meta.url));

/** What one in-process CLI call returned and printed. */
export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs the `retrysim` CLI in this process (no child process: seconds faster
 * per call) and captures what it printed to stdout and stderr, line by line.
 */
export async function runMain(args: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a) => void err.push(a.join(' ')));
  try {
    return { code: await main(args), out: out.join('\n'), err: err.join('\n') };
  } finally {
    vi.restoreAllMocks();
  }
}

/**
 * Runs the `retrysim` CLI in a process of its own, as a user runs it:
 * RETRYSIM_APP_PER_PROCESS unset unless `env` sets it (a file must say by
 * itself how its modules were loaded).
 */
export function runCliProcess(args: string[], env: Record<string, string> = {}): SpawnSyncReturns<string> {
  const e: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (env.RETRYSIM_APP_PER_PROCESS === undefined) delete e.RETRYSIM_APP_PER_PROCESS;
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000, env: e });
}
