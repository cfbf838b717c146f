import { describe, expect, it } from 'vitest';
import { commands } from './main.js';
import { runMain } from '../testing/cli.js';

// A wrong flag is one line naming it and where the options are (exit 2,
// nothing on stdout), for every command: the help page printed after it
// buried the line, and under --service its tracker examples were not the
// user's words.
describe('a wrong flag', () => {
  it.each(Object.keys(commands).map((c) => [c]))('%s --bogus: one line on stderr, exit 2', async (command) => {
    const r = await runMain([command, '--bogus']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')).toEqual([expect.stringMatching(new RegExp(`^retrysim ${command}: Unknown option '--bogus'.* \\(retrysim ${command} --help lists the options\\)$`))]);
  });

  // `check --client --help` (no path yet) said "argument is ambiguous": --help
  // asks for the help wherever it stands, the same page as with a path given.
  it.each([
    ['check', '--client'], ['check', '--service'], ['check', '--app'], ['check', '--variant'],
    ['replay', '--service'], ['replay', '--app'], ['replay', '--client'],
    ['serve', '--service'], ['serve', '--app'], ['conformance', '--service'], ['conformance', '--app'],
    ['flaky', '--service'], ['herd', '--seed'], ['amplify', '--seed'], ['matrix', '--seed'], ['demo', '--seed'],
  ])('%s %s --help (the value missing) prints that help, exit 0', async (command, flag) => {
    const withValue = await runMain([command, flag!, 'x.ts', '--help']);
    expect(withValue.code).toBe(0);
    for (const help of ['--help', '-h']) {
      const r = await runMain([command, flag!, help]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toBe(withValue.out);
    }
  });

  it('check --client --help is the help of check --client, not of check', async () => {
    const r = await runMain(['check', '--client', '--help']);
    expect(r.out).toMatch(/^retrysim check --client PATH /);
  });

  it('a flag missing its value is one line too (parseArgs says it in three)', async () => {
    const r = await runMain(['check', '--client', '--json']);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^retrysim check: Option '--client' argument is ambiguous\. Did you forget to specify the option argument for '--client'\?/);
  });
});

// `--app PATH` is `--service PATH` underneath; a mistake in it must still be
// told in the flag the user typed (it read "Option '--service <value>'
// argument missing" for `check --app`), and naming both is refused rather
// than the last one silently winning.
describe('--app', () => {
  it.each([['check'], ['replay'], ['serve'], ['conformance']])('%s --app without a value names --app', async (command) => {
    const r = await runMain([command, '--app']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')).toEqual([`retrysim ${command}: Option '--app <value>' argument missing (retrysim ${command} --help lists the options)`]);
  });

  it('--app and --service together are refused in one line', async () => {
    const r = await runMain(['check', '--app', 'a.mjs', '--service=b.ts', '--runs', '1']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')).toEqual(["retrysim check: --app and --service both name the module to run: give one (retrysim check --help lists the options)"]);
  });
});
