import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// DESIGN invariant 1: simulated code never reads real time or randomness.
// real-env.ts is the one adapter allowed to; this test file names the
// patterns, so it is skipped too.
const ALLOWED = new Set(['real-env.ts', 'no-hidden-time.test.ts']);
const FORBIDDEN = [/\bDate\b/, /\bsetTimeout\b/, /\bsetInterval\b/, /\bsetImmediate\b/, /Math\.random/, /performance\.now/, /randomUUID/];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('src/tracker has no hidden time or randomness', () => {
  const here = dirname(fileURLToPath(import.meta.url));
  it.each(files(here).filter((f) => !ALLOWED.has(f.slice(f.lastIndexOf('/') + 1))))('%s', (file) => {
    const text = readFileSync(file, 'utf8');
    for (const re of FORBIDDEN) expect(text, `${file} matches ${re}`).not.toMatch(re);
  });
});
