// A retry client's file with client.deadlineMs: the deadline judged is the
// client module's own, so a file that sets one (edited by hand) is refused
// in one line — until 2026-12 it was accepted and ignored, and its expected
// `deadline` violation read as fixed ("if … is a fix").
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const module = 'src/client/fixtures/timeout-new-key.ts';

describe("client.deadlineMs in a retry client's file", () => {
  it('is refused in one line, exit 2; the file as found replays', async () => {
    const found = tmp('rs-client-deadline-');
    expect((await runMain(['check', '--client', module, '--found', found])).code).toBe(1);
    const file = join(found, readdirSync(found).find((f) => f.endsWith('.json'))!);
    expect((await runMain(['replay', file])).code).toBe(0);
    const s = JSON.parse(readFileSync(file, 'utf8')) as { client: Record<string, unknown> };
    s.client.deadlineMs = 100;
    const edited = join(found, 'edited.json');
    writeFileSync(edited, JSON.stringify(s, null, 1));
    const r = await runMain(['replay', edited]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trim()).toBe(`retrysim replay: ${edited}: client.deadlineMs (100 ms) is not used in a retry client's file — the client's own deadlineMs (its module's) is what deadline judges; remove it, or change the client`);
  }, 60_000);
});
