import { afterEach, describe, expect, it, vi } from 'vitest';
import { failure } from './main.js';

afterEach(() => vi.restoreAllMocks());

function said(e: unknown): { code: number; lines: string[] } {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((m: unknown) => void lines.push(String(m)));
  return { code: failure('check', ['check', '--app', './app.mjs'], e), lines };
}

describe('an unbuilt SQLite addon is an install problem, not a bug in retrysim', () => {
  it('names the addon and the command that builds it, in one line, exit 2', () => {
    // better-sqlite3's own message when npm skipped its install script (npm 11 without allowScripts).
    const r = said(new Error('Could not locate the bindings file. Tried:\n → /tmp/shop/node_modules/better-sqlite3/build/better_sqlite3.node\n → /tmp/shop/node_modules/better-sqlite3/build/Release/better_sqlite3.node'));
    expect(r.code).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^retrysim check: better-sqlite3's native addon is not built .*npm rebuild better-sqlite3/);
    expect(r.lines[0]).not.toMatch(/internal error|a bug in retrysim|\n/);
    const other = said(new Error("The module '/x/node_modules/better-sqlite3/build/Release/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 127."));
    expect(other.code).toBe(2);
    expect(other.lines[0]).toMatch(/was built for another Node or platform/);
  });

  it('anything else is still an internal error, exit 1', () => {
    const r = said(new Error('boom'));
    expect(r.code).toBe(1);
    expect(r.lines[0]).toMatch(/internal error: boom \(a bug in retrysim/);
  });
});
