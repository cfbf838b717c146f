import { describe, expect, it } from 'vitest';
import { commands } from './main.js';
import { writableDir, type DirOps } from './args.js';
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

describe('writableDir while another process checks the same directory (the shards of one campaign given one --found)', () => {
  /** A file system of directories; `between` runs once, before the named call, as another process would. */
  function fakeFs(dirs: Set<string>, between: Partial<Record<keyof DirOps, () => void>>) {
    const calls: string[] = [];
    const once = (op: keyof DirOps) => {
      const f = between[op];
      delete between[op];
      f?.();
    };
    const enoent = (p: string) => Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
    const ops: DirOps = {
      exists: (p) => (once('exists'), dirs.has(p)),
      mkdir: (p) => {
        once('mkdir');
        calls.push(`mkdir ${p}`);
        if (dirs.has(p)) throw Object.assign(new Error('EEXIST'), { code: 'EEXIST' });
        dirs.add(p);
      },
      stat: (p) => {
        once('stat');
        if (!dirs.has(p)) throw enoent(p);
        return { isDirectory: () => true };
      },
      access: (p) => {
        once('access');
        if (!dirs.has(p)) throw enoent(p);
      },
      rmdir: (p) => {
        once('rmdir');
        calls.push(`rmdir ${p}`);
        dirs.delete(p);
      },
    };
    return { ops, calls };
  }

  it('the level the other made and removed between this one\'s steps (ENOENT) is checked again, not refused (a shard exited 2 on CI)', () => {
    const dirs = new Set(['/', '/tmp', '/tmp/rs', '/tmp/rs/f']); // the other shard made f…
    const { ops, calls } = fakeFs(dirs, { stat: () => dirs.delete('/tmp/rs/f') }); // …and removes it before this one's stat
    expect(writableDir('found', '/tmp/rs/f', ops)).toBe('/tmp/rs/f');
    // Checked again: made it, and removed what it made.
    expect(calls).toEqual(['mkdir /tmp/rs/f', 'rmdir /tmp/rs/f']);
  });

  it('a level the other made first (EEXIST) is taken as there and left alone; one it wrote into (rmdir fails) is left too', () => {
    const dirs = new Set(['/', '/tmp']);
    const made = fakeFs(dirs, { mkdir: () => dirs.add('/tmp/g') });
    expect(writableDir('found', '/tmp/g', made.ops)).toBe('/tmp/g');
    expect(made.calls).toEqual(['mkdir /tmp/g']); // not removed: not this check's
    const dirs2 = new Set(['/', '/tmp']);
    const busy = fakeFs(dirs2, {});
    busy.ops.rmdir = () => {
      throw Object.assign(new Error('ENOTEMPTY'), { code: 'ENOTEMPTY' });
    };
    expect(writableDir('found', '/tmp/h', busy.ops)).toBe('/tmp/h');
  });

  it('a directory that is never there (every check ENOENT, as under /proc) is still refused with one line', () => {
    const { ops } = fakeFs(new Set(['/']), {});
    ops.mkdir = () => {
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    };
    expect(() => writableDir('found', '/proc/x', ops)).toThrow("--found '/proc/x' is not a writable directory (ENOENT)");
  });
});
