/**
 * The README and docs/ cannot drift from the code: every shell block runs
 * and every code snippet is a real file — by the rules in doc-blocks.ts
 * (exit codes announced as `# exit 1: …`, run counts lowered to RUNS_MAX,
 * `<!-- in a new project -->`, `<!-- not run: reason -->`, `<!-- output -->`,
 * `<!-- include: PATH -->`). The examples' READMEs: example-commands.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blocks, pages, read, type Block } from './test-markdown.js';
import { CODE, RUNS_MAX, SHELL, commandOf, expectIncludes, outputMismatch, removeScratch, root, runPage, smallRuns } from './doc-blocks.js';

const all: Block[] = pages(root).flatMap((p) => blocks(p, read(root, p)));

afterAll(removeScratch);

describe('the code snippets of README.md and docs/ are real files', () => {
  it('every ts/js block follows <!-- include: PATH --> and is that file, character for character', () => {
    expect(all.filter((b) => CODE.has(b.lang)).length).toBeGreaterThan(0);
    expectIncludes(all);
  });

  it('a block that differs from its file is caught (the check’s canary)', () => {
    const [b] = blocks('x.md', '<!-- include: examples/payments-atomic/service.test.ts -->\n```ts\n// edited\n```\n');
    expect(b!.marker).toBe('include: examples/payments-atomic/service.test.ts');
    expect(b!.text).not.toBe(readFileSync(join(root, 'examples/payments-atomic/service.test.ts'), 'utf8').replace(/\n$/, ''));
  });
});

describe('the shell blocks of README.md and docs/ run as documented', () => {
  const shellBlocks = all.filter((b) => SHELL.has(b.lang));
  const skipped = shellBlocks.filter((b) => b.marker?.startsWith('not run:'));
  const run = shellBlocks.filter((b) => !b.marker?.startsWith('not run:'));

  it('the parsing: commands, announced exit codes, lowered run counts', () => {
    expect(commandOf('retrysim check --runs 3000       # every claim')).toEqual({ command: 'retrysim check --runs 3000', exit: 0 });
    expect(commandOf('npx retrysim check --service ./service.ts   # exit 1: fails')).toEqual({ command: 'npx retrysim check --service ./service.ts', exit: 1 });
    expect(commandOf('   # only a comment')).toBeUndefined();
    expect(smallRuns('retrysim check --runs 1000000 --seed 7')).toEqual({ command: `retrysim check --runs ${RUNS_MAX} --seed 7`, lowered: `--runs 1000000 → ${RUNS_MAX}` });
    expect(outputMismatch('a\nc …', 'a\nb\nc d e')).toBeUndefined();
    expect(outputMismatch('c\na', 'a\nb\nc')).toBe('a');
    expect(smallRuns('retrysim check --runs 100')).toEqual({ command: 'retrysim check --runs 100', lowered: undefined });
    expect(smallRuns('retrysim check --claim x')).toEqual({ command: `retrysim check --runs ${RUNS_MAX} --claim x`, lowered: `default run count → --runs ${RUNS_MAX}` });
    expect(smallRuns('retrysim check --variant x --explore exhaustive').lowered).toBeUndefined();
  });

  it('every skipped block says why', () => {
    for (const b of skipped) expect(b.marker!.replace(/^not run:\s*/, '').length, `${b.file}:${b.line}`).toBeGreaterThan(10);
    console.log(`not run (${skipped.length} blocks):\n${skipped.map((b) => `  ${b.file}:${b.line}  ${b.marker}`).join('\n')}`);
  });

  // One test per page, so a failure names the page; blocks of one page share a folder, in order.
  for (const page of [...new Set(run.map((b) => b.file))]) {
    it(`${page}: every command exits as documented`, () => {
      runPage(all, page);
    }, 480_000);
  }

  it('runs at least the quick start', () => {
    expect(run.some((b) => b.file === 'README.md' && b.marker === 'in a new project')).toBe(true);
    expect(run.filter((b) => b.file === 'README.md').length).toBeGreaterThan(5);
  });
});
