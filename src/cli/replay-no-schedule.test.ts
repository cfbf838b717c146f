// A scenario file without its schedule (cut out, or written by hand) diverges
// at its first decision: replay follows a recorded schedule exactly. The
// line says that is why (it guessed "the model or its inputs changed, the
// file was edited" and, for a service, that the module may have been fixed).
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('replay of a file with no schedule', () => {
  it('exit 3, and the line names the missing schedule', async () => {
    const src = 'examples/app-plain-http/counterexamples';
    const { readdirSync } = await import('node:fs');
    const name = readdirSync(src).find((f) => f.endsWith('.json'))!;
    const d = JSON.parse(readFileSync(join(src, name), 'utf8')) as Record<string, unknown>;
    expect((d.schedule as unknown[]).length).toBeGreaterThan(0);
    delete d.schedule;
    const file = join(tmp('rs-nosched-'), name);
    writeFileSync(file, JSON.stringify(d, null, 1));
    const r = await runMain(['replay', file]);
    expect(r.code).toBe(3);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain('the file records no schedule (its `schedule` is missing or empty), and replay follows a recorded one exactly');
    expect(r.err).not.toContain('a strict replay cannot say whether the fix works');
  }, 60_000);
});
