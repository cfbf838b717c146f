// `retrysim matrix --service PATH | --app PATH`: the fault matrix of the
// user's own code — a line per scenario of `conformance --service`, a column
// per key source, each cell one simulated run. Until 2026-12 the matrix was
// the built-in tracker's only (`--service` was an unknown option).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

interface MatrixJson {
  service: string;
  columns: string[];
  keySources: string[];
  judged: string[];
  rows: Record<string, Record<string, number>>;
  violations: Record<string, Record<string, string[]>>;
  matches: Record<string, Record<string, boolean>>;
  mismatches: number;
}

async function matrix(...args: string[]): Promise<{ code: number; j: MatrixJson; text: string; textCode: number }> {
  const r = await runMain(['matrix', ...args, '--json']);
  const t = await runMain(['matrix', ...args]);
  return { code: r.code, j: JSON.parse(r.out) as MatrixJson, text: t.out, textCode: t.code };
}

describe('retrysim matrix --service: the fault matrix of your own service', () => {
  it('a correct service: every judged cell holds one payment at most and breaks nothing (exit 0); the table, --json and the exit code agree', async () => {
    const { code, j, text, textCode } = await matrix('--service', 'examples/payments-atomic/service.ts');
    expect(code).toBe(0);
    expect(textCode).toBe(0);
    expect(j.mismatches).toBe(0);
    expect(j.keySources).toEqual(['none', 'per_attempt', 'tool_call', 'business']);
    expect(j.judged).toEqual(['tool_call', 'business']);
    expect(j.columns.slice(0, 3)).toEqual(['no_fault', 'lost_response', 'lost_answer']);
    expect(j.columns).toContain('key_reuse');
    // At most one; none where the client gave up on a key still held (a kill mid-charge, its claim not yet expired).
    for (const k of j.judged) for (const c of j.columns) expect(j.rows[k]![c], `${k} ${c}`).toBeLessThanOrEqual(1);
    for (const c of ['no_fault', 'lost_response', 'lost_answer', 'concurrent_duplicate', 'two_instances', 'key_reuse']) expect(j.rows.tool_call![c], c).toBe(1);
    // Without a stable key a retry is a new payment: shown, not judged.
    expect(j.rows.per_attempt!.lost_response).toBe(2);
    expect(j.matches.per_attempt!.lost_response).toBe(true);
    // No key, nothing to reuse: that cell is not run.
    expect(j.rows.none!.key_reuse).toBeUndefined();
    expect(text).toMatch(/│ scenario +│ none \(not judged\) +│ per_attempt \(not judged\) +│ tool_call +│ business +│/);
    expect(text).toMatch(/│ lost_response +│ \d +│ 2 +│ 1 +│ 1 +│/);
    expect(text).toContain('No judged cell holds a second effect or breaks an invariant.');
    expect(text).toContain('judged cell(s) made no effect, and no invariant says the client was told otherwise: it gave up (tool_call kill_at:charge;');
  });

  it('a service that commits its key in a second transaction: the crash between them makes two payments with a stable key (exit 1), each cell a file that replays', async () => {
    const svc = 'examples/two-transactions/service.ts';
    const dir = tmp('rs-matrix-svc-');
    const html = join(dir, 'matrix.html');
    const { code, j, text, textCode } = await matrix('--service', svc);
    expect(code).toBe(1);
    expect(textCode).toBe(1);
    expect(j.rows.tool_call!['crash_at:between-transactions']).toBe(2);
    expect(j.violations.tool_call!['crash_at:between-transactions']).toEqual(['exactly-one']);
    expect(j.matches.tool_call!['crash_at:between-transactions']).toBe(false);
    const missed = j.judged.flatMap((k) => j.columns.filter((c) => j.matches[k]![c] === false));
    expect(j.mismatches).toBe(missed.length);
    expect(text).toMatch(/│ crash_at:between-transactions +│ 2 +│ 2 +│ 2 ! \(exactly-one\) +│ 2 ! \(exactly-one\) +│/);
    expect(text).toContain(`${j.mismatches} judged cell(s) differ from the goal:`);
    expect(text).toContain('  tool_call crash_at:between-transactions: 2 orders; broken: exactly-one');
    // The files and the page are the same runs.
    const w = await runMain(['matrix', '--service', svc, '--write-scenarios', join(dir, 'cells'), '--html', html]);
    expect(w.code).toBe(1);
    const files = readdirSync(join(dir, 'cells'), { recursive: true }).filter((f) => String(f).endsWith('.json'));
    expect(files.length).toBe(Object.values(j.rows).reduce((n, r) => n + Object.keys(r).length, 0));
    const file = join(dir, 'cells', 'crash_at_between-transactions', 'tool_call.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ expect: { reports: { op1: 2 }, violations: ['exactly-one'] } });
    const replay = await runMain(['replay', '--service', svc, file]);
    expect(replay.code, replay.err).toBe(0);
    expect((await runMain(['replay', '--service', svc, join(dir, 'cells', 'kill_at_remember', 'none.json')])).code).toBe(0);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('crash_at_between-transactions--tool_call.json');
    expect(page).toContain('"judged":true');
  });

  it('a right count with a broken invariant is a miss too: the replay answers differently from the first (1 ! (replay-equals-first))', async () => {
    const { code, j, text } = await matrix('--service', 'examples/replay-differs/service.ts');
    expect(code).toBe(1);
    expect(j.rows.tool_call!.concurrent_duplicate).toBe(1);
    expect(j.matches.tool_call!.concurrent_duplicate).toBe(false);
    expect(text).toMatch(/│ concurrent_duplicate +│ .* │ 1 ! \(replay-equals-first\) +│/);
  });

  it('an app (--app): a 5 s lock whose claim answer is lost leaves none, told so — not a miss; a correct app exits 0', async () => {
    const { code, j, text } = await matrix('--app', 'src/app/fixtures/lock-ttl-app.ts');
    expect(code).toBe(0);
    expect(j.rows.tool_call!['crash_at:kv.set: answer lost']).toBe(0);
    expect(j.matches.tool_call!['crash_at:kv.set: answer lost']).toBe(true);
    expect(text).toMatch(/^retrysim matrix --app src\/app\/fixtures\/lock-ttl-app\.ts — app lock-ttl-app, seed 1; orders held/);
    expect(text).toMatch(/judged cell\(s\) made no order, and no invariant says the client was told otherwise: it gave up \(tool_call crash_at:kv\.set: answer lost;/);
  });

  it('a service that never does its work is inconclusive (exit 4), naming why, not "no judged cell misses"', async () => {
    const { code, j, text, textCode } = await matrix('--service', 'src/service/fixtures/crashes-on-every-request.ts');
    expect(code).toBe(4);
    expect(textCode).toBe(4);
    expect(j.mismatches).toBe(0);
    expect((j as unknown as { inconclusive: string }).inconclusive).toMatch(/^inconclusive: no request in the 16 stable-key cells was answered 2xx or made an effect \(answers: none\); its process crashed \(unhandled rejection: Error: config missing: NOTIFY_URL/);
    expect(text).toMatch(/^\? inconclusive: no request in the 16 stable-key cells/m);
    expect(text).not.toContain('No judged cell holds');
  });

  it('bad input is one line, exit 2, nothing written', async () => {
    const dir = tmp('rs-matrix-bad-');
    const cells = join(dir, 'cells');
    const broken = await runMain(['matrix', '--service', 'src/service/fixtures/not-there.ts', '--write-scenarios', cells]);
    expect(broken.code).toBe(2);
    expect(broken.err.trim().split('\n')).toHaveLength(1);
    expect(broken.err).toMatch(/^retrysim matrix: service '.*not-there\.ts': cannot load: no such file/);
    expect(existsSync(cells)).toBe(false);
    const both = await runMain(['matrix', '--app', 'src/app/fixtures/lock-ttl-app.ts', '--service', 'examples/payments-atomic/service.ts']);
    expect(both.code).toBe(2);
    expect(both.err).toContain('--app and --service both name the module to run: give one');
    expect((await runMain(['matrix', '--service', 'examples/payments-atomic/service.ts', '--seed', 'x'])).code).toBe(2);
  });
});
