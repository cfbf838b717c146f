/**
 * Running the shell blocks of the project's Markdown as a reader would:
 * the rules the documentation tests share (README.md and docs/ in
 * commands.test.ts, the examples' READMEs in example-commands.test.ts).
 * Test support only; nothing in the product imports it.
 *
 * - A ```sh block runs line by line in bash, `retrysim` and `npx retrysim`
 *   being this checkout's bin/retrysim.js, in a scratch folder holding a
 *   copy of scenarios/ and examples/ (so nothing is written into the
 *   repository). A line's exit code must be the one its comment announces
 *   (`# exit 1: …`), else 0. Run counts above RUNS_MAX are lowered to it:
 *   a failing claim fails at the same run whatever --runs, and a holding one
 *   still runs; the test prints what it lowered.
 * - A block after `<!-- in a new project -->` runs in an empty folder where
 *   the package is installed as a tarball install leaves it (node_modules/
 *   retrysim and node_modules/.bin/retrysim), with /path/to/retrysim
 *   standing for this checkout.
 * - A block after `<!-- not run: reason -->` is skipped, and the test
 *   prints the list with the reasons.
 * - A block after `<!-- output -->` is what the command just before it
 *   prints: each of its lines in order, `…` standing for any text.
 * - A ```ts block must follow `<!-- include: PATH -->` and equal that file.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Block } from './test-markdown.js';

/** The checkout's root. */
export const root = join(import.meta.dirname, '..', '..');
/** The largest --runs a documented command runs with here. */
export const RUNS_MAX = 300;
/** Languages of the blocks that run. */
export const SHELL = new Set(['sh', 'bash', 'shell']);
/** Languages of the blocks that must be files. */
export const CODE = new Set(['ts', 'typescript', 'js', 'javascript']);

const scratch: string[] = [];

/** Removes the scratch folders the runs made (call it in afterAll). */
export function removeScratch(): void {
  for (const d of scratch.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A documented command line: the command, the exit code its comment announces. */
export function commandOf(line: string): { command: string; exit: number } | undefined {
  const hash = line.search(/(^|\s)#\s/);
  const command = (hash < 0 ? line : line.slice(0, hash)).trim();
  if (command === '') return undefined;
  const comment = hash < 0 ? '' : line.slice(hash).replace(/^\s*#\s*/, '');
  const announced = /^exit (\d+)\b/.exec(comment);
  return { command, exit: announced ? Number(announced[1]) : 0 };
}

/**
 * Lowers every --runs above RUNS_MAX, and gives a random-search `check`
 * that names no run count or time budget (by default 3,000 runs per claim,
 * 10,000 with --service) RUNS_MAX; returns the line and what it changed. Exhaustive
 * searches keep their count: there --runs bounds the schedules of one
 * scenario, and cutting it would change the verdict.
 */
export function smallRuns(command: string): { command: string; lowered: string | undefined } {
  let lowered: string | undefined;
  let out = command.replace(/--runs(=|\s+)(\d+)/g, (whole, sep: string, n: string) => {
    if (Number(n) <= RUNS_MAX) return whole;
    lowered = `--runs ${n} → ${RUNS_MAX}`;
    return `--runs${sep}${RUNS_MAX}`;
  });
  if (/\bretrysim check\b/.test(out) && !/--runs|--time-budget|--explore exhaustive|--help/.test(out)) {
    out = out.replace(/\bretrysim check\b/, `retrysim check --runs ${RUNS_MAX}`);
    lowered = `default run count → --runs ${RUNS_MAX}`;
  }
  return { command: out, lowered };
}

/**
 * Checks a documented output against the real one: every documented line
 * must appear, in order, with `…` standing for any text. Returns the first
 * line that does not, or undefined.
 */
export function outputMismatch(documented: string, actual: string): string | undefined {
  const lines = actual.split('\n').map((l) => l.trimEnd());
  let at = 0;
  for (const want of documented.split('\n').map((l) => l.trimEnd())) {
    if (want === '') continue;
    const re = new RegExp(`^${want.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    while (at < lines.length && !re.test(lines[at]!)) at++;
    if (at === lines.length) return want;
    at++;
  }
  return undefined;
}

function scratchDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(d);
  return d;
}

/**
 * A folder with copies of the files documented commands read, and the
 * checkout's node_modules (the app examples import their libraries —
 * fastify, express — as they do in the checkout after `npm ci`).
 */
function checkoutLike(): string {
  const d = scratchDir('retrysim-docs-');
  for (const f of ['scenarios', 'examples']) cpSync(join(root, f), join(d, f), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(d, 'node_modules'), 'dir');
  return d;
}

/** An empty project with the package installed the way `npm install <tarball>` leaves it. */
function newProject(): string {
  const d = scratchDir('retrysim-docs-project-');
  mkdirSync(join(d, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(root, join(d, 'node_modules', 'retrysim'), 'dir');
  symlinkSync('../retrysim/bin/retrysim.js', join(d, 'node_modules', '.bin', 'retrysim'));
  return d;
}

/** Runs one line in bash with `retrysim` and `npx retrysim` as this checkout's CLI. */
function sh(command: string, cwd: string) {
  const bin = join(root, 'bin', 'retrysim.js');
  const prelude = [
    `retrysim() { node '${bin}' "$@"; }`,
    // npx resolves node_modules/.bin first, as npm does; the docs run nothing else through npx.
    `npx() { if [ "$1" = retrysim ]; then shift; if [ -x node_modules/.bin/retrysim ]; then node_modules/.bin/retrysim "$@"; else node '${bin}' "$@"; fi; else echo "docs test: only npx retrysim is run" >&2; return 97; fi; }`,
  ].join('\n');
  const r = spawnSync('bash', ['-c', `${prelude}\n${command}`], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
    timeout: 120_000,
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}`.trim() };
}

/** Every ts/js block follows `<!-- include: PATH -->` and is that file, character for character. */
export function expectIncludes(all: readonly Block[]): void {
  for (const b of all.filter((x) => CODE.has(x.lang))) {
    const include = /^include:\s*(\S+)$/.exec(b.marker ?? '');
    expect(include, `${b.file}:${b.line}: a ${b.lang} block must be a file under examples/, marked <!-- include: PATH -->`).not.toBeNull();
    const path = include![1]!;
    expect(existsSync(join(root, path)), `${b.file}:${b.line}: ${path} does not exist`).toBe(true);
    expect(b.text, `${b.file}:${b.line}: the block differs from ${path}`).toBe(readFileSync(join(root, path), 'utf8').replace(/\n$/, ''));
  }
}

/**
 * Runs one page's shell blocks in order, in one scratch folder, checking
 * each line's exit code and each `<!-- output -->` block. `notHere` names
 * the lines this runner does not run (with the reason), which it collects
 * in `skippedLines` for the test to print.
 */
export function runPage(all: readonly Block[], page: string, o: { notHere?: (command: string) => string | undefined; skippedLines?: string[] } = {}): void {
  const plain = checkoutLike();
  const lowered: string[] = [];
  const times: string[] = [];
  let last = '';
  const run = (b: Block) => SHELL.has(b.lang) && !b.marker?.startsWith('not run:');
  for (const b of all.filter((x) => x.file === page && (run(x) || x.marker === 'output'))) {
    if (b.marker === 'output') {
      // A documented output is what the command just before it prints, line for line, in order.
      const missing = outputMismatch(b.text, last);
      expect(missing, `${b.file}:${b.line}: the documented output differs from what the command prints`).toBeUndefined();
      continue;
    }
    const project = b.marker === 'in a new project';
    expect(b.marker === undefined || project, `${b.file}:${b.line}: unknown marker <!-- ${b.marker} -->`).toBe(true);
    const cwd = project ? newProject() : plain;
    for (const line of b.text.split('\n')) {
      const c = commandOf(line);
      if (c === undefined) continue;
      const why = o.notHere?.(c.command);
      if (why !== undefined) {
        o.skippedLines?.push(`${b.file}:${b.line}  ${c.command}  (${why})`);
        continue;
      }
      const small = smallRuns(c.command.replaceAll('/path/to/retrysim', root));
      if (small.lowered) lowered.push(`${b.file}:${b.line}  ${c.command}  (${small.lowered})`);
      const t0 = performance.now(); // real-time: allowed (how long a documented command took, printed for the reader)
      const r = sh(small.command, cwd);
      last = r.out;
      times.push(`${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s  ${c.command}`); // real-time: allowed (the same timing)
      expect(r.code, `${b.file}:${b.line}: \`${c.command}\` exited ${r.code}, the docs say ${c.exit}\n${r.out.slice(-3000)}`).toBe(c.exit);
    }
  }
  if (lowered.length > 0) console.log(`run with fewer runs:\n${lowered.map((l) => `  ${l}`).join('\n')}`);
  console.log(`${page}, time per command:\n${times.join('\n')}`);
}
