const NOT_MINIMAL = 'counterexample not minimal: ';

/**
 * The reasons a row of `check --service`/`--app`/`--client` is not ✓, as one
 * block under one mark (✗, or ? when the only reason is an inconclusive
 * search): the first reason on the mark's line, the others indented under
 * it. Several "counterexample not minimal" reasons share one heading, so a
 * counterexample not shown minimal in three ways reads as one problem with
 * three parts, not three failures. "expected X, got Y" is left out unless
 * the user asked for a verdict (`--expect`): without it the verdict column
 * already says so. Undefined when nothing is left to say. `--json` keeps
 * every reason in `why`; this only shapes the text.
 */
export function reasonsBlock(why: readonly string[], withExpected: boolean): string | undefined {
  const shown = why.filter((w) => withExpected || !w.startsWith('expected '));
  if (shown.length === 0) return undefined;
  const mark = shown.every((w) => w.startsWith('inconclusive')) ? '?' : '✗';
  const notMinimal = shown.filter((w) => w.startsWith(NOT_MINIMAL)).map((w) => w.slice(NOT_MINIMAL.length));
  const lines = shown.filter((w) => !w.startsWith(NOT_MINIMAL)).map((w) => ({ text: w, depth: 0 }));
  if (notMinimal.length === 1) lines.push({ text: `${NOT_MINIMAL}${notMinimal[0]}`, depth: 0 });
  else if (notMinimal.length > 1) lines.push({ text: NOT_MINIMAL.trimEnd(), depth: 0 }, ...notMinimal.map((text) => ({ text, depth: 1 })));
  // The first line carries the mark; the others sit under it, one level deeper than their own depth
  // (a heading that opens the block has its items directly under it).
  const [first, ...rest] = lines;
  const base = first!.depth === 0 && rest.every((l) => l.depth === 1) ? 0 : 1;
  return [`${mark} ${first!.text}`, ...rest.map((l) => `${'  '.repeat(l.depth + base)}${l.text}`)].join('\n');
}
