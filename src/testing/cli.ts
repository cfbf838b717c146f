import { vi } from 'vitest';
import { main } from '../cli/main.js';

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
