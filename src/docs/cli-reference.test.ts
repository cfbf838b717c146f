/**
 * The README's CLI reference and the `--help` texts are two views of one
 * command line: a newcomer reads one and types what it says into the other.
 * Each row's commands, main flags and exit codes must be what the command's
 * own help says, every command `retrysim --help` lists must have a row, and
 * every flag a help text offers must be named somewhere in the pages.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pages, read } from './test-markdown.js';

const root = join(import.meta.dirname, '..', '..');

/** One row of the README's command table. */
export interface Row {
  /** The command cell as written, e.g. "check --service PATH (--app PATH)". */
  command: string;
  /** The arguments that ask for its help, e.g. ['check', '--service', 'PATH']. */
  argv: string[];
  flags: Set<string>;
  exits: Set<number>;
}

/** The rows of the table under "## CLI reference" (cells split on unescaped pipes). */
export function cliRows(readme: string): Row[] {
  const at = readme.indexOf('## CLI reference');
  const section = readme.slice(at, readme.indexOf('\n## ', at + 1));
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line
      .replace(/\\\|/g, '\u0000')
      .split('|')
      .map((c) => c.replace(/\u0000/g, '|').trim());
    const command = cells[1]!.replace(/`/g, '');
    const words = command.replace(/\(.*?\)/g, '').trim().split(/\s+/);
    // `check --service PATH` asks for that campaign's help; `replay FILE`, `merge FILE...` for the command's.
    const argv = words[1]?.startsWith('--') ? words.slice(0, 3) : words.slice(0, 1);
    rows.push({ command, argv, flags: new Set(cells[3]!.match(/--[a-z][a-z-]*/g) ?? []), exits: exitCodes(cells[5]!) });
  }
  return rows;
}

/** The exit codes a cell or an `Exit` paragraph names: a lone digit 0–4 that starts a clause. */
export function exitCodes(text: string): Set<number> {
  return new Set([...text.matchAll(/(?:^|Exit:?|[,;])\s*([0-4])(?=\s|,|\)|$)/g)].map((m) => Number(m[1])));
}

/** The `Exit` paragraph of a help text (from its last "Exit" to the next blank line). */
export function exitParagraph(help: string): string | undefined {
  const at = help.lastIndexOf('Exit');
  if (at < 0) return undefined;
  const end = help.indexOf('\n\n', at);
  return help.slice(at, end < 0 ? undefined : end);
}

function help(argv: string[]): string {
  const r = spawnSync('node', [join(root, 'bin', 'retrysim.js'), ...argv, '--help'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, `retrysim ${argv.join(' ')} --help exited ${r.status}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

describe("the README's CLI reference and the --help texts agree", () => {
  const readme = read(root, 'README.md');
  const rows = cliRows(readme);
  const top = help([]);
  const commands = [...top.slice(top.indexOf('Commands:')).matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]!);
  const helps = new Map(rows.map((r) => [r.command, help(r.argv)]));

  it('every command retrysim --help lists has a row, and every row is a command', () => {
    expect(commands.length).toBeGreaterThan(8);
    expect([...new Set(rows.map((r) => r.argv[0]!))].sort()).toEqual([...commands].sort());
  });

  it('retrysim --help names what the README says it does: help CMD and --version', () => {
    expect(readme).toMatch(/`retrysim help CMD`/);
    expect(top).toMatch(/retrysim help <command>/);
    expect(readme).toMatch(/`retrysim --version`/);
    expect(top).toMatch(/--version/);
  });

  it("every flag of a row is in that command's --help", () => {
    const missing = rows.flatMap((r) => [...r.flags].filter((f) => !helps.get(r.command)!.includes(f)).map((f) => `${r.command}: ${f}`));
    expect(missing).toEqual([]);
  });

  it("every row's exit codes are the ones its --help states, and the reverse", () => {
    const byCommand = new Map(rows.map((r) => [r.command, r]));
    const differ: string[] = [];
    for (const r of rows) {
      // "as `check`; 2 a bad shard": merge's codes are check's.
      const inherited = /^as `?check`?/.test(readme.split('\n').find((l) => l.startsWith(`| \`${r.command.split(' (')[0]}`))?.split('|')[5]?.trim() ?? '')
        ? byCommand.get('check')!.exits
        : new Set<number>();
      const documented = [...new Set([...r.exits, ...inherited])].sort();
      const paragraph = exitParagraph(helps.get(r.command)!);
      const stated = paragraph === undefined ? [] : [...exitCodes(paragraph)].sort();
      if (documented.join() !== stated.join()) differ.push(`${r.command}: README ${documented.join(',')}, --help ${stated.join(',') || '(no Exit paragraph)'}`);
    }
    expect(differ).toEqual([]);
  });

  it('every flag a page gives a `retrysim CMD …` line is one that command takes (its --help lists it)', () => {
    const helpOf = (cmd: string, rest: string): string => {
      // check --client takes a --service (the endpoint it talks to): --client decides.
      const campaign = cmd === 'check' ? (/--client\b/.test(rest) ? '--client' : /--(service|app)\b/.test(rest) ? '--service' : undefined) : undefined;
      const row = rows.find((r) => r.argv[0] === cmd && r.argv[1] === campaign);
      return helps.get(row!.command)!;
    };
    const wrong: string[] = [];
    let count = 0;
    for (const page of pages(root)) {
      for (const m of read(root, page).matchAll(new RegExp(`retrysim (${commands.join('|')})\\b([^\`\\n]*)`, 'g'))) {
        for (const flag of m[2]!.match(/--[a-z][a-z-]*/g) ?? []) {
          count++;
          if (flag !== '--help' && !new RegExp(`${flag}(?![a-z-])`).test(helpOf(m[1]!, m[2]!))) wrong.push(`${page}: retrysim ${m[1]}${m[2]!.slice(0, 60)}: ${flag}`);
        }
      }
    }
    expect(count).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });

  it("every check a client campaign reports is named in check --client --help and in docs/model.md's client checks", () => {
    // The checks src/client/ reports by name (`invariant: 'deadline'`), besides the ones it shares with services.
    const own = new Set(
      readdirSync(join(root, 'src', 'client'))
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
        .flatMap((f) => [...readFileSync(join(root, 'src', 'client', f), 'utf8').matchAll(/invariant: '([a-z-]+)'/g)].map((m) => m[1]!)),
    );
    expect(own.size).toBeGreaterThan(3);
    const checks = [...own, 'stable-key', 'exactly-one', 'id-exists', 'replay-equals-first'];
    const clientHelp = helps.get(rows.find((r) => r.argv[1] === '--client')!.command)!;
    const model = read(root, 'docs/model.md');
    const modelChecks = model.slice(model.indexOf('**Client checks**'), model.indexOf('**What "holds" means.**'));
    expect(checks.filter((c) => !clientHelp.includes(c)).map((c) => `check --client --help: ${c}`)).toEqual([]);
    expect(checks.filter((c) => !modelChecks.includes(c)).map((c) => `docs/model.md client checks: ${c}`)).toEqual([]);
  });

  it("check --service --help names every invariant the service campaign judges (docs/model.md §5's six and the key-reuse probe)", () => {
    const model = read(root, 'docs/model.md');
    const section = model.slice(model.indexOf('## §5 Invariants'), model.indexOf('## §6'));
    const six = [...section.matchAll(/^\d\. \*\*([a-z-]+)\*\*/gm)].map((m) => m[1]!);
    expect(six).toHaveLength(6);
    const serviceHelp = helps.get(rows.find((r) => r.argv[1] === '--service')!.command)!;
    expect([...six, 'key-reuse'].filter((i) => !serviceHelp.includes(i))).toEqual([]);
  });

  it('every flag a --help offers is named in README.md or docs/', () => {
    const text = pages(root).map((p) => read(root, p)).join('\n');
    const offered = new Set([...helps.values(), top].flatMap((h) => h.match(/--[a-z][a-z-]*/g) ?? []));
    expect(offered.size).toBeGreaterThan(40);
    expect([...offered].filter((f) => f !== '--help' && !new RegExp(`${f}(?![a-z-])`).test(text))).toEqual([]);
  });

  it('the parsing: rows, exit codes and the Exit paragraph (the check’s canary)', () => {
    const [row] = cliRows('## CLI reference\n\n| `check --client PATH` | x | `--variant V \\| --service PATH`, `--runs` (300) | y | 0 holds (or as `--expect`), 1 fails, 4 inconclusive |\n\n## Next\n| `demo` |');
    expect(row).toEqual({ command: 'check --client PATH', argv: ['check', '--client', 'PATH'], flags: new Set(['--variant', '--service', '--runs']), exits: new Set([0, 1, 4]) });
    expect(exitCodes('Exit: 0 done, 2 bad flags (at most 20 layers, 10 attempts and 3 M requests); killed: exit 137')).toEqual(new Set([0, 2]));
    expect(exitCodes('Exit 0 when every row is ✓, 1 when a row is ✗,\n4 when the only problem, 2 for bad flags.')).toEqual(new Set([0, 1, 2, 4]));
    expect(exitParagraph('x\n\nExit: 0 ok, 1 not\nmore\n\nafter: 3')).toBe('Exit: 0 ok, 1 not\nmore');
    expect(exitParagraph('no such paragraph')).toBeUndefined();
  });
});
