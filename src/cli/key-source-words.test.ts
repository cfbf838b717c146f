// A user's service was told its keys in the built-in tracker's words: the
// header said "key source tool_call", the table "two-transactions /
// tool_call", replay "(…service.ts)/tool_call" and the stepper page
// "… / tool_call" — a tool call is the tracker's agent's, not the user's.
// These say "one key per operation" now; the id stays where it is read
// back (the --key-source value, --json's keySource, a shard file's, which
// merge compares, and the scenario file's client.keySource, which replay reads).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { KEY_SOURCES, keySourceWords } from '../harness/keys.js';

const tmp = tempDirs();
afterEach(() => vi.restoreAllMocks());
const MODULE = 'examples/two-transactions/service.ts';
/** The tracker's key-source vocabulary: the id, and "tool call" / "tool_use" in any spelling. */
const TRACKER_KEYS = /tool[ _-]?(call|use)/i;

describe("a user's service is told its keys in its words, not the tracker's tool_call", () => {
  it('check --service (table, header, --json, --html page) and replay --service', async () => {
    const found = tmp('ksw-found-');
    const html = tmp('ksw-html-');
    const text = await runMain(['check', '--service', MODULE, '--faults', 'crash', '--found', found, '--html', html]);
    expect(text.code, text.err).toBe(1);
    expect(text.out).toMatch(/explore random, one key per operation\n/);
    expect(text.out).toMatch(/│ ✗ │ two-transactions \/ one key per operation │/);
    expect(text.out).not.toMatch(TRACKER_KEYS);
    // The page of the counterexample: its data's key source, and the page as a whole.
    const pages = readdirSync(html).filter((f) => f !== 'index.html');
    expect(pages).toHaveLength(1);
    const page = readFileSync(join(html, pages[0]!), 'utf8');
    expect(page).toContain('"keySource":"one key per operation"');
    expect(page).not.toMatch(TRACKER_KEYS);

    const json = await runMain(['check', '--service', MODULE, '--faults', 'crash', '--found', found, '--json']);
    const j = JSON.parse(json.out) as { keySource: string; keys: string; counterexample: string };
    // keySource is the --key-source value (a contract: a shard file's is compared by merge); keys is what the table says.
    expect([j.keySource, j.keys]).toEqual(['tool_call', 'one key per operation']);
    // The file keeps the id replay reads back.
    expect(JSON.parse(readFileSync(j.counterexample, 'utf8')).client.keySource).toBe('tool_call');

    const replay = await runMain(['replay', '--service', MODULE, j.counterexample, '--trace']);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out).toContain(`service two-transactions (${MODULE}), one key per operation\n`);
    expect(replay.out).not.toMatch(TRACKER_KEYS);
  }, 60_000);

  it('conformance --service (header and --json)', async () => {
    const args = ['conformance', '--service', 'examples/payments-atomic/service.ts', '--columns', 'no_fault'];
    const text = await runMain(args);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain('service payments-atomic, one key per operation, seed 1;');
    expect(text.out).not.toMatch(TRACKER_KEYS);
    const j = JSON.parse((await runMain([...args, '--json'])).out) as { keySource: string; keys: string };
    expect([j.keySource, j.keys]).toEqual(['tool_call', 'one key per operation']);
  }, 60_000);

  it('every key source has its words, none of them the tracker\'s', () => {
    expect(KEY_SOURCES.map(keySourceWords)).toEqual(['no key', 'a new key per attempt', 'one key per operation', "a key from the operation's content"]);
  });

  it('the built-in tracker keeps its variant/keySource names (its claims and files are named so)', async () => {
    const r = await runMain(['replay', 'scenarios/canonical/lost_response/key_atomic--tool_call.json']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/key_atomic\/tool_call/);
  });

  it('merge refuses a shard file whose key source it does not know, in one line (it would print it raw)', async () => {
    const dir = tmp('ksw-shard-');
    const out = join(dir, 'shard.json');
    const shard = await runMain(['check', '--service', MODULE, '--faults', 'crash', '--runs', '20', '--found', dir, '--shard', '1/1', '--out', out, '--json']);
    expect(shard.code, shard.err).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    expect((await runMain(['merge', out, '--json'])).code).toBe(1);
    file.result.keySource = 'per_tool_call';
    writeFileSync(out, JSON.stringify(file));
    const r = await runMain(['merge', out]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/keySource/);
    expect(r.out).toBe('');
  }, 60_000);
});
