/**
 * The published package, as a user gets it: `npm pack`, then a fresh
 * project with only its own package.json installs the tarball and runs the
 * example properties, importing `retrysim` by name. Dependencies come from
 * npm's cache when it has them (`--prefer-offline`), and better-sqlite3's
 * native build is copied from this checkout instead of compiled again, so
 * the test takes tens of seconds, not minutes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let dir: string;

function run(cmd: string, args: string[], cwd = dir) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' }, timeout: 600_000 });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

describe('the npm package', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'retrysim-pack-'));
    // prepack builds dist/ (tsc), so the tarball runs on plain Node.
    const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' })) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const tarball = join(dir, packed[0]!.filename);
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain('dist/index.js');
    // The README's links to docs/*.md and examples/ resolve in node_modules/retrysim too.
    expect(files).toContain('docs/services.md');
    expect(files).toContain('examples/payments-atomic/service.ts');
    expect(files.some((f) => f.startsWith('src/'))).toBe(false);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-payments', private: true, type: 'module' }));
    const i = run(npm, ['install', tarball, 'vitest@4.1.12', '@fast-check/vitest@0.5.0', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund']);
    expect(i.code, i.out).toBe(0);
    // The native module: the same platform and Node, already compiled here.
    cpSync(join(root, 'node_modules/better-sqlite3/build'), join(dir, 'node_modules/better-sqlite3/build'), { recursive: true });
    for (const e of ['payments-check-then-insert', 'payments-atomic', 'fetch-retry-client', 'two-transactions']) cpSync(join(root, 'examples', e), join(dir, 'examples', e), { recursive: true });
  }, 600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('exports the library by name, with types, and no TypeScript at run time', () => {
    const r = run(process.execPath, ['-e', "import('retrysim').then((m) => console.log(['runScenario', 'loadService', 'Kernel', 'scenarioArbitrary', 'checkServiceInvariants'].map((n) => typeof m[n]).join(',')))"]);
    expect(r.out.trim()).toBe('function,function,function,function,function');
    expect(existsSync(join(dir, 'node_modules/retrysim/dist/index.d.ts'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules/retrysim/dist/vitest.d.ts'))).toBe(true);
  });

  it('imports zod and @sinonjs/fake-timers from its two pre-bundled files, not from their ~120 modules (the CLI\'s start)', () => {
    const dist = join(dir, 'node_modules/retrysim/dist');
    const js = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js') && !f.startsWith('vendor'));
    const bare = js.filter((f) => /(from\s+|import\s*\(\s*)['"](zod|@sinonjs\/fake-timers)['"]/.test(readFileSync(join(dist, f), 'utf8')));
    expect(bare).toEqual([]);
    const vendored = js.filter((f) => /['"](\.\.?\/)+vendor\/(zod|fake-timers)\.mjs['"]/.test(readFileSync(join(dist, f), 'utf8')));
    expect(vendored.length).toBeGreaterThanOrEqual(5);
    // (The tests below run the installed CLI and library on them: every replay validates its file with zod, every service runs on fake timers.)
  });

  it('a property over check-then-insert fails with a minimised counterexample that the installed CLI replays', () => {
    const r = run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'examples/payments-check-then-insert']);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/Property failed after \d+ tests, shrunk \d+ time\(s\) — seed 1, path "[\d:]*"/);
    // One counterexample: the minimised one, not fast-check's raw one beside it.
    expect(r.out).not.toContain('Counterexample:');
    expect(r.out).toContain('retrysim: minimised counterexample (1 op, 2 workers, 0 faults, 2 attempts, 1 preemption):\n  exactly-one');
    const file = readdirSync(join(dir, '.retrysim/found')).find((f) => f.startsWith('payments-check-then-insert-exactly-one-'));
    expect(file).toBeDefined();
    const replay = run(process.execPath, ['node_modules/retrysim/bin/retrysim.js', 'replay', '--service', 'examples/payments-check-then-insert/service.ts', `.retrysim/found/${file}`]);
    expect(replay.code, replay.out).toBe(0);
    expect(replay.out).toContain('exactly-one (op1): 2 effects (ids 1, 2) for one logical operation');
    expect(replay.out).toContain('expect: met');
  });

  it('two transactions (effect, then key record): with crashes only, the counterexample is the crash window, and it replays', () => {
    const r = run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'examples/two-transactions']);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain('retrysim: minimised counterexample (1 op, 1 worker, 1 fault, 2 attempts, 0 preemptions):\n  exactly-one (op1): 2 orders');
    const file = readdirSync(join(dir, '.retrysim/found')).find((f) => f.startsWith('two-transactions-exactly-one-'));
    const replay = run(process.execPath, ['node_modules/retrysim/bin/retrysim.js', 'replay', `.retrysim/found/${file}`]);
    expect(replay.code, replay.out).toBe(0);
  });

  it('the same property over the atomic claim holds', () => {
    const r = run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'examples/payments-atomic']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/1 passed/);
  });

  it('a fetch retry client with a new key per attempt is refuted with a one-operation, one-fault counterexample; the fixed client holds', () => {
    const bad = run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'examples/fetch-retry-client/buggy.test.ts']);
    expect(bad.code, bad.out).toBe(1);
    expect(bad.out).toMatch(/shrunk \d+ time/);
    expect(bad.out).toMatch(/retrysim: client 'fetch-retry-client' fails \(1 op, 1 worker, 1 instance, faults: [a-zA-Z]+( \d+)?( ms at \w+)?\)/);
    expect(bad.out).toContain('stable-key — call op1.w0 sent 2 different keys');
    const good = run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'examples/fetch-retry-client/fixed.test.ts']);
    expect(good.code, good.out).toBe(0);
    expect(good.out).toMatch(/1 passed/);
  });

  it('without @fast-check/vitest installed, retrysim/vitest says what to install (not only which file asked)', () => {
    const peer = join(dir, 'node_modules/@fast-check/vitest');
    const aside = join(dir, 'node_modules/@fast-check/vitest-aside');
    renameSync(peer, aside);
    try {
      const r = run(process.execPath, ['-e', "import('retrysim/vitest').then(() => console.log('loaded'), (e) => { console.log(e.message); process.exit(3); })"]);
      expect(r.code, r.out).toBe(3);
      expect(r.out).toContain("retrysim/vitest: '@fast-check/vitest' is not installed in this project");
      expect(r.out).toContain('npm install --save-dev vitest @fast-check/vitest');
    } finally {
      renameSync(aside, peer);
    }
    expect(run(process.execPath, ['-e', "import('retrysim/vitest').then((m) => console.log(typeof m.test.prop, typeof m.fc.integer))"]).out.trim()).toBe('function function');
  });
});
