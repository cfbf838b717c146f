/**
 * Issue #15: the inputs a new user meets first. Each case ran into a stack
 * trace, a silent no-op or a reproduce line that did not run before; each is
 * now one line naming the input and exit 2 (bad input), or a real result.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkfifoSync } from './test-fifo.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
/** A database path no refused command may create. */
const NEVER_DB = join(tmp('rs-never-'), 'never.db');
const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'retrysim.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000, cwd: root });

/** No stack frame, no "node:internal", no "Error:" dump: a user-facing line. */
function noStack(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at .*(\.m?[jt]s|node:[\w/]+):\d+/m);
  expect(stderr).not.toMatch(/node:internal|triggerUncaughtException|Node\.js v\d/);
}

describe('inputs the simulation cannot run are refused up front: exit 2, one line naming the flag', () => {
  it.each([
    [['amplify', '--layers', '9'], /9 layers of 3 × .* with 200 calls could send 8\.85e\+6 requests .* lower --layers, --attempts or --calls/],
    [['amplify', '--layers', '30'], /--layers must be an integer from 1 to 20, got '30'/],
    [['amplify', '--layers', '1000', '--failure-rate', '0'], /--layers must be an integer from 1 to 20/],
    [['amplify', '--attempts', '50'], /--attempts must be an integer from 1 to 10, got '50'/],
    [['amplify', '--calls', '100000000'], /--calls must be an integer from 1 to 100000/],
    [['herd', '--clients', '10000'], /--clients must be an integer from 1 to 5000, got '10000'/],
    [['herd', '--runs', '100000000'], /--runs 100000000 × --clients 10,50,100 × 6 strategies is about .* lower --runs or --clients/],
    [['flaky', '--slow-ms', '1e8'], /--slow-ms must be an integer from 0 to 1000, got '1e8'/],
    [['serve', '--variant', 'naive', '--db', NEVER_DB, '--slow-ms', '1e10'], /--slow-ms must be a number from 0 to 86400000, got '1e10'/],
    [['serve', '--variant', 'naive', '--db', NEVER_DB, '--name', 'tracker–1'], /--name may hold printable ASCII only .* '–' at index 7/],
    [['serve', '--variant', 'naive', '--db', NEVER_DB, '--name', 'a\r\nb'], /--name may hold printable ASCII only/],
    [['conformance', '--rows', ''], /--rows '' names nothing; known: naive\/none/],
    [['conformance', '--columns', 'lost'], /unknown --columns entry 'lost'/],
  ])('%j', (args, message) => {
    const r = cli(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message as RegExp);
    noStack(r.stderr);
    expect(existsSync(NEVER_DB)).toBe(false);
  });
});

describe('output paths are checked before any work', () => {
  it('an existing file as --found, --write-scenarios; /proc as --svg', () => {
    const file = join(tmp('rs-hard-'), 'existing');
    writeFileSync(file, 'keep me');
    for (const [args, message] of [
      [['check', '--runs', '1', '--found', file], /--found .* is not a writable directory \(ENOTDIR\)/],
      [['matrix', '--write-scenarios', file], /--write-scenarios .* is not a writable directory \(ENOTDIR\)/],
      [['herd', '--runs', '1', '--svg', '/proc/x.svg'], /--svg '\/proc\/x.svg' cannot be written/],
    ] as const) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
      noStack(r.stderr);
    }
    expect(readFileSync(file, 'utf8')).toBe('keep me');
  });

  it('a full disk on stdout is one line and exit 1', () => {
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${bin}" amplify --layers 2 > /dev/full`], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe('retrysim: cannot write output: ENOSPC (no space left on device)');
  });
});

describe('the command line itself', () => {
  it('--seed -1 works like --seed=-1, and the printed reproduce line runs as printed', () => {
    const a = cli('herd', '--seed', '-1', '--runs', '2', '--clients', '5', '--strategies', 'full');
    const b = cli('herd', '--seed=-1', '--runs', '2', '--clients', '5', '--strategies', 'full');
    expect(a.status).toBe(0);
    expect(a.stdout.split('\n').slice(1, -2)).toEqual(b.stdout.split('\n').slice(1, -2));
    const line = /reproduce: retrysim (.*)\)/.exec(a.stdout)![1]!;
    expect(line).toContain('--seed -1');
    expect(cli(...line.split(' ')).status).toBe(0);
    expect(cli('amplify', '--seed', '-7', '--layers', '2', '--json').status).toBe(0);
    expect(cli('matrix', '--seed', '-2', '--json').status).toBe(0);
  });

  it('--version, help CMD, and the flaky usage line lists every flag', () => {
    const v = cli('--version');
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toBe(`retrysim ${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version}`);
    const h = cli('help', 'check');
    expect(h.status).toBe(0);
    expect(h.stdout).toMatch(/^retrysim check \[--variant V/);
    expect(cli('help', 'nope').status).toBe(2);
    // The usage paragraph (it wraps over lines), up to the first blank line.
    const f = cli('flaky', '--help').stdout.split('\n\n')[0]!;
    for (const flag of ['--runs', '--variant', '--service', '--slow-ms', '--stagger-max-ms', '--schedules-max', '--seed', '--json', '--client', '--name', '--spread-ms']) expect(f).toContain(flag);
  });
});

describe('scenario files', () => {
  const base = JSON.parse(readFileSync(join(root, 'scenarios/canonical/lost_response/naive--none.json'), 'utf8'));
  const write = (s: unknown, text?: string) => {
    const f = join(tmp('rs-scn-'), 's.json');
    writeFileSync(f, text ?? JSON.stringify(s));
    return f;
  };

  it.each([
    ['a start one virtual hour away', { operations: [{ ...base.operations[0], startMs: 3_600_000 }] }, /at operations\[0\]\.startMs: at most 600000 ms/],
    ['slowMs 3.6e6', { faults: { ...base.faults, slowMs: 3.6e6 } }, /at faults\.slowMs: at most 600000 ms/],
    ['latencyMeanMs 1e9', { network: { ...base.network, latencyMeanMs: 1e9 } }, /at network\.latencyMeanMs/],
    ['timeoutMs 1e300', { client: { ...base.client, timeoutMs: 1e300 } }, /at client\.timeoutMs/],
    ['pause at a step the variant lacks', { faults: { ...base.faults, pause: { atStep: 'claim', ms: 5, count: 1 } } }, /at faults\.pause\.atStep: 'claim' is not a step of naive/],
    ['kill at a step that does not exist', { faults: { ...base.faults, kill: { atStep: 'nowhere' } } }, /at faults\.kill\.atStep: 'nowhere' is not a step of naive/],
  ])('%s → exit 2 naming the path', (_name, patch, message) => {
    const r = cli('replay', write({ ...base, ...patch }));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    noStack(r.stderr);
  });

  it('durations that only add up past the kernel limit are a "did not finish" verdict, exit 1', () => {
    const s = { ...base, schedule: [], client: { ...base.client, timeoutMs: 600_000, maxAttempts: 20, model: { resubmits: 5, reword: false } }, network: { ...base.network, latencyMeanMs: 60_000, loseResponses: 1000 } };
    const r = cli('replay', write(s));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/the run did not finish: it reached the simulation limit timeMsMax=3600000/);
    noStack(r.stderr);
    const j = cli('replay', write(s), '--json');
    expect(j.status).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ finished: false, expectMet: false });
  });

  it('a UTF-8 byte-order mark is skipped; a FIFO with no writer is refused at once', () => {
    const f = write(undefined, '\ufeff' + readFileSync(join(root, 'scenarios/canonical/lost_response/naive--none.json'), 'utf8'));
    expect(cli('replay', f).status).toBe(0);
    const fifo = join(tmp('rs-fifo-'), 'pipe');
    mkfifoSync(fifo);
    const r = cli('replay', fifo);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cannot read file: not a regular file/);
  });
});
