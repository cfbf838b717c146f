/**
 * A word of a command line printed for the reader to paste back into a
 * POSIX shell (`reproduce:`, `replay:`): as it is when the shell would read
 * it back unchanged, else in single quotes. A module in `my svc/` printed
 * bare was two words, and the line ran something else.
 */
export function shellArg(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Words joined into one line, each as {@link shellArg} prints it. */
export function shellLine(words: readonly string[]): string {
  return words.map(shellArg).join(' ');
}
