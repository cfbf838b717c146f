/**
 * The examples' READMEs cannot drift from the code either: their shell
 * blocks run and their code snippets are real files, by the rules
 * README.md and docs/ follow (doc-blocks.ts; commands.test.ts). Before this
 * nothing ran them: fetch-retry-client's snippet was no longer buggy.test.ts,
 * sharded-campaign's block ran `--shard I/N` with its placeholders, and
 * eight commands that exit 1 said so as `# fails …, exit 1`, which no
 * runner reads (`# exit 1: …` is the form).
 *
 * One kind of line is not run here: an example's own vitest suite
 * (`npx vitest run -c examples/vitest.config.ts examples/NAME`), which
 * imports `retrysim/vitest` from the package's dist/ and so needs
 * `npm run build` first; src/pack.test.ts runs four of them from the packed
 * tarball. The test prints the lines it left out.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { blocks, examplePages, read, type Block } from './test-markdown.js';
import { CODE, SHELL, commandOf, expectIncludes, removeScratch, root, runPage } from './doc-blocks.js';

const pages = examplePages(root);
const all: Block[] = pages.flatMap((p) => blocks(p, read(root, p)));

afterAll(removeScratch);

/** Why a line is not run here, or undefined when it is. */
function notHere(command: string): string | undefined {
  return /^npx vitest run -c examples\/vitest\.config\.ts examples\//.test(command) ? "the example's vitest suite: needs npm run build (dist/)" : undefined;
}

describe("the examples' READMEs", () => {
  const shell = all.filter((b) => SHELL.has(b.lang));
  const run = shell.filter((b) => !b.marker?.startsWith('not run:'));

  it('every ts/js block follows <!-- include: PATH --> and is that file, character for character', () => {
    expect(all.filter((b) => CODE.has(b.lang)).length).toBeGreaterThan(0);
    expectIncludes(all);
  });

  it('runs a retrysim command from most of them, and says why of every block it skips', () => {
    expect(pages.length).toBeGreaterThan(10);
    const commands = run.flatMap((b) => b.text.split('\n').map(commandOf).filter((c) => c !== undefined && notHere(c.command) === undefined));
    expect(commands.length).toBeGreaterThan(10);
    const skipped = shell.filter((b) => b.marker?.startsWith('not run:'));
    for (const b of skipped) expect(b.marker!.replace(/^not run:\s*/, '').length, `${b.file}:${b.line}`).toBeGreaterThan(10);
    console.log(`not run (${skipped.length} blocks):\n${skipped.map((b) => `  ${b.file}:${b.line}  ${b.marker}`).join('\n')}`);
  });

  // One test per README, so a failure names it; the blocks of one README share a folder, in order.
  for (const page of [...new Set(run.map((b) => b.file))]) {
    it(`${page}: every command exits as documented`, () => {
      const skippedLines: string[] = [];
      runPage(all, page, { notHere, skippedLines });
      if (skippedLines.length > 0) console.log(`not run here:\n${skippedLines.map((l) => `  ${l}`).join('\n')}`);
    }, 240_000);
  }
});
