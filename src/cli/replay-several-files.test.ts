/**
 * `retrysim replay .retrysim/found/NAME-*.json` is how the docs name a file
 * whose hash the reader does not know; once a second campaign wrote another
 * file of that name, the shell hands replay both. It said only "expected
 * exactly one scenario file, got 2" above its whole help (found by a newcomer
 * pass through docs/services.md after the README's client command): which
 * files, and that a pattern matched them, it did not say. Now one line names
 * them and what to do.
 */
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';

describe('replay given several files', () => {
  it('names them in one line, says a pattern matched more than one, exit 2', async () => {
    const a = 'scenarios/found/naive-exactly-one-868357af.json';
    const b = 'scenarios/found/key_split-exactly-one-b78c4ffb.json';
    const r = await runMain(['replay', a, b, '--trace']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(`retrysim replay: expected one scenario file, got 2 (${a}, ${b}): a pattern like NAME-*.json matched more than one; name one of them (the 'replay:' line check printed names its file)`);
  });

  it('without a file it still prints the usage below its line', async () => {
    const r = await runMain(['replay']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^retrysim replay: expected exactly one scenario file, got 0\n\nretrysim replay FILE/);
  });
});
