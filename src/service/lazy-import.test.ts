// A handler that loads a module lazily (`await import(...)` in the
// request) waits on real I/O: the run stops, and its line says where to
// look — a dynamic import() among real I/O's usual forms, with the fix
// (import it at the top of the module). src/service/fixtures/lazy-import.ts.
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('a handler that imports a module on its first request', () => {
  it('stops the campaign with one line that names a dynamic import(), exit 2', () => {
    const r = runCliProcess(['check', '--service', 'src/service/fixtures/lazy-import.ts', '--runs', '50', '--found', tmp('rs-lazy-')]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^retrysim check: service 'lazy-import': never answered request \S+: the handler awaited something outside the simulation \(real I\/O, such as a file read or a dynamic import\(\) — import the module at the top of the file instead;/m);
  }, 120_000);
});
