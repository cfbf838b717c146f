import { execFileSync } from 'node:child_process';

/** Makes a named pipe (node has no mkfifo; tests only). */
export function mkfifoSync(path: string): void {
  execFileSync('mkfifo', [path]);
}
