import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Temporary directories for one test file, removed when the file's tests
 * end (a suite that leaves /tmp full of `rs-check-*` is a suite nobody runs
 * twice happily). Call at the top level of a test file.
 *
 * @example
 * const tmp = tempDirs();
 * const dir = tmp('rs-check-');
 */
export function tempDirs(): (prefix: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });
  return (prefix) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    made.push(d);
    return d;
  };
}
