import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadClient } from './load.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

/**
 * A module that means to export a client but gets its shape wrong is told
 * what is wrong with it, in one line. It used to read "exports no retry
 * client: export default { name, deadlineMs, run(fetch, op) }" whatever was
 * missing, so a user who wrote { name, run } (no deadlineMs, the field the
 * campaign's `deadline` check needs) had to diff the shape by eye.
 */
function moduleWith(source: string): string {
  const dir = tmp('rs-client-load-');
  const file = join(dir, 'client.mjs');
  writeFileSync(file, source);
  return file;
}

describe('a client module whose export is not quite a client', () => {
  it.each([
    ['no deadlineMs', `export default { name: 'c', async run() {} };`, /its default export is not a retry client: deadlineMs is missing \(the ms within which one call settles, a positive number\)$/],
    ['deadlineMs a string', `export default { name: 'c', deadlineMs: '10s', async run() {} };`, /its default export is not a retry client: deadlineMs is '10s', not a finite positive number of ms$/],
    ['deadlineMs Infinity', `export default { name: 'c', deadlineMs: Infinity, async run() {} };`, /its default export is not a retry client: deadlineMs is Infinity, not a finite positive number of ms$/],
    ['no run', `export default { name: 'c', deadlineMs: 1000 };`, /its default export is not a retry client: run\(fetch, op\) is missing$/],
    ['an empty name', `export const client = { name: '', deadlineMs: 1000, async run() {} };`, /its export 'client' is not a retry client: name is empty$/],
    ['an anonymous factory, not called (named \'default\' by JavaScript)', `export default function () { return { name: 'c', deadlineMs: 1000, async run() {} }; }`, /its default export is a function, not a retry client: export the object it returns \(export default makeClient\(\)\)$/],
    ['a factory, not called', `export default function makeClient() { return { name: 'c', deadlineMs: 1000, async run() {} }; }`, /its default export is a function, not a retry client: export the object it returns \(export default makeClient\(\)\)$/],
  ])('%s: the line says what is wrong', async (_what, source, message) => {
    await expect(loadClient(moduleWith(source))).rejects.toThrow(message);
  });

  it('a module exporting nothing like a client keeps the general line', async () => {
    await expect(loadClient(moduleWith(`export const x = 1;`))).rejects.toThrow(/exports no retry client: export default \{ name, deadlineMs, run\(fetch, op\) \}$/);
  });
});
