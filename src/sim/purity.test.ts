import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isRealModeFile, scanSource } from './purity.js';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('no hidden time or randomness in simulated code', () => {
  it('src/ outside the real-mode adapters never reads real time, timers or randomness', () => {
    const root = join(import.meta.dirname, '..', '..');
    const files = walk(join(root, 'src')).map((f) => relative(root, f)).filter((f) => !isRealModeFile(f));
    expect(files.length).toBeGreaterThan(5);
    const violations = files.flatMap((f) => scanSource(f, readFileSync(join(root, f), 'utf8')));
    expect(violations.map((v) => `${v.file}:${v.line} uses ${v.api}: ${v.text}`)).toEqual([]);
  });

  it('the scanner catches each forbidden API (its canary) and ignores comments', () => {
    const bad = ['const t = Date.now();', 'Math.random()', 'setTimeout(f, 1)', 'crypto.randomUUID()', 'performance.now()', 'new Date()'];
    for (const line of bad) expect(scanSource('x.ts', line)).toHaveLength(1);
    expect(scanSource('x.ts', '// Date.now is forbidden here\n/* setTimeout */ const a = 1;')).toEqual([]);
    expect(scanSource('x.ts', 'const t = Date.now(); // real-time: allowed (adapter)')).toEqual([]);
  });
});
