import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadScenario } from '../../scenario/load.js';
import { runScenario } from '../../scenario/run.js';
import { observeScenario } from './stepper-data.js';
import { keySplitRace, preemptAfterFirstLookup } from './race.fixture.js';
import { htmlPage, jsonForScript } from './page.js';
import { clientScript } from './bundle.js';
import { tempDirs } from '../../testing/temp-dirs.js';

const tmp = tempDirs();

const root = join(import.meta.dirname, '..', '..', '..');
const bin = join(root, 'bin', 'retrysim.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.json') ? [p] : [];
  });
}

describe('observing a run changes nothing about it', () => {
  it.each(walk(join(root, 'scenarios')).map((f) => relative(root, f)))('%s: same trace hash, reports and violations observed or not', async (file) => {
    const s = loadScenario(join(root, file));
    const plain = await runScenario(s);
    const { data, run } = await observeScenario(s, { file });
    expect(run.result.traceHash).toBe(plain.result.traceHash);
    expect(run.reports).toEqual(plain.reports);
    expect(run.violations).toEqual(plain.violations);
    // Every decision of the schedule is a step, with its preemption flag.
    expect(data.steps.filter((st) => st.decision).map((st) => st.decision!.preempted)).toEqual(plain.result.choices.map((c) => c.preempted));
    // Every broken invariant is pinned to a step.
    expect(data.violations.map((v) => v.invariant)).toEqual(plain.violations.map((v) => v.invariant));
    for (const v of data.violations) expect(v.step).toBeLessThan(data.steps.length);
  });
});

describe('the stepper data of the key_split race', () => {
  it('has both requests passing the key check before either registers the key, and pins exactly-one on the second report', async () => {
    const { scenario } = await keySplitRace();
    expect(scenario.schedule.filter((c) => c.preempted)).toHaveLength(1);
    const { data } = await observeScenario(scenario);
    const passes = data.steps.flatMap((st, i) => (st.event === 'check' && st.check?.outcome === 'pass' ? [{ i, actor: st.actor }] : []));
    expect(new Set(passes.map((p) => p.actor)).size).toBe(2);
    const registered = data.steps.findIndex((st) => data.dbStates[st.db]!.keys.length > 0);
    expect(Math.max(...passes.map((p) => p.i))).toBeLessThan(registered);
    const second = data.steps.findIndex((st) => data.dbStates[st.db]!.reports.length === 2);
    expect(data.violations).toEqual([expect.objectContaining({ invariant: 'exactly-one', step: second, why: 'the second report for op1 appears here' })]);
    expect(data.steps[second]).toMatchObject({ kind: 'db', event: 'db: +1 report', dbChange: ['+ report 2 (run run-1)'] });
  });

  it('on key_atomic the same kind of schedule keeps one report: the second claim is refused, nothing is pinned', async () => {
    const { scenario } = await keySplitRace();
    const atomic = { ...scenario, service: { ...scenario.service, variant: 'key_atomic' }, schedule: [] };
    const { data, run } = await observeScenario(atomic, {}, { choices: await preemptAfterFirstLookup(atomic) });
    expect(run.result.choices.filter((c) => c.preempted)).toHaveLength(1);
    expect(run.reports.op1).toBe(1);
    expect(data.violations).toEqual([]);
    expect(data.steps.some((st) => st.event === 'claim' && st.check?.outcome === 'stop')).toBe(true);
  });
});

describe('leases and fences in the stepper data', () => {
  it('slow takeover without fencing: the lease runs out before the second claim, which takes the key over with fence 2', async () => {
    const s = loadScenario(join(root, 'scenarios/canonical/slow_takeover/key_atomic_nofence--tool_call.json'));
    const { data } = await observeScenario(s);
    const lease = data.steps.findIndex((st) => st.kind === 'lease');
    const takeover = data.steps.findIndex((st) => st.dbChange?.some((c) => c.includes('taken over, fence 2')));
    expect(lease).toBeGreaterThan(0);
    expect(data.steps[lease]!.t).toBe(501); // locked at 1 ms, lease 500 ms
    expect(takeover).toBeGreaterThan(lease);
    expect(data.steps[takeover]).toMatchObject({ event: 'claim', check: { outcome: 'pass' } });
  });
});

describe('page shell', () => {
  it('embeds data so that no string in it can close the script element', () => {
    const html = htmlPage({ title: '<t>', css: '', data: { evil: '</script><script>alert(1)</script>' }, script: '' });
    expect(html).not.toContain('</script><script>alert');
    expect(JSON.parse(jsonForScript({ a: '</script>\u2028' }))).toEqual({ a: '</script>\u2028' });
    expect(html).toContain("default-src 'none'");
  });

  it('client bundles carry no network calls', async () => {
    for (const entry of ['stepper', 'herd', 'matrix'] as const) {
      const js = await clientScript(entry);
      expect(/\bfetch\(|XMLHttpRequest|WebSocket|sendBeacon|EventSource|importScripts/.exec(js)?.[0] ?? null, entry).toBeNull();
    }
  });
});

describe('the --html flags', () => {
  it('replay --html writes the page; a path that cannot be written is exit 2 and writes nothing', () => {
    const d = tmp('rs-html-');
    const file = 'scenarios/canonical/lost_response/naive--none.json';
    const ok = cli('replay', join(root, file), '--html', join(d, 'p.html'), '--json');
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).expectMet).toBe(true);
    expect(readFileSync(join(d, 'p.html'), 'utf8')).toContain('retrysim-data');
    const bad = cli('replay', join(root, file), '--html', join(d, 'missing', 'p.html'));
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^retrysim replay: --html '.*' cannot be written \(ENOENT: there is no folder .*missing\)\n$/);
    expect(existsSync(join(d, 'missing'))).toBe(false);
    for (const args of [['matrix', '--html', join(d, 'missing', 'm.html')], ['herd', '--html', join(d, 'missing', 'h.html')], ['check', '--html', join(bin, 'x')]]) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^retrysim ${args[0]}: --html`));
    }
  });
});

describe('database changes sit on the step that made them', () => {
  it('key_atomic_racy_claim: the stale claim overwriting the finished key is #2 resuming inside claim-write, not a scheduler decision', async () => {
    const file = join('src', 'report', 'html', 'racy-claim.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file });
    const overwrite = data.steps.filter((st) => st.dbChange?.some((c) => c.includes('done → in_progress')));
    expect(overwrite).toHaveLength(1);
    // Today the pause is silent, so the change gets a derived "resumed inside claim-write" row; once the trace
    // logs the pause's end, the change sits on that line of #2 instead. Either way: #2's, never the scheduler's.
    expect(overwrite[0]!.actor).toBe('s0/op1.w1#2');
    expect(overwrite[0]!.kind).not.toBe('decision');
    if (overwrite[0]!.kind === 'resumed') expect(overwrite[0]!.event).toBe('claim-write');
    // A decision never changes the database, in any checked-in scenario's run.
    for (const f of walk(join(root, 'scenarios'))) {
      const { data: d } = await observeScenario(loadScenario(f));
      expect(d.steps.filter((st) => st.kind === 'decision' && st.dbChange), f).toEqual([]);
    }
  });
});

describe('the summary is written from the run', () => {
  it('tells the key_split race found by check: who inserted first, where the preemption fell, who inserted the second report', async () => {
    const file = join('scenarios', 'found', 'key_split-exactly-one-b78c4ffb.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file });
    expect(data.summary).toEqual([
      '#2 ran check (the key was not registered), process and insert, adding a report, but had not yet run register when the scheduler preempted it.',
      '#1 ran in its place: check (the key was not registered), process and insert added a second report, so exactly-one breaks (2 reports (ids 1, 2) for one logical operation).',
    ]);
  });

  it('tells a different story for a lost answer, from the same code (no text per variant)', async () => {
    const file = join('scenarios', 'found', 'naive-exactly-one-868357af.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file });
    expect(data.summary).toEqual([
      '#1 ran process and insert, adding a report, and answered 201, but its answer was lost on the way back.',
      'The client retried as #2: process and insert added a second report, so exactly-one breaks (2 reports (ids 1, 2) for one logical operation).',
    ]);
  });

  it('says when the second request carried another key: the model resubmitted as a new tool call, so the key check could not match', async () => {
    const file = join('scenarios', 'found', 'key_atomic-exactly-one-066b86b1.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file });
    expect(data.summary).toEqual([
      '#1 ran claim (the key was not registered), process and finish, adding a report, and answered 201, but its answer was lost on the way back.',
      'The client sent it again as #2 under another key (run-1:call-2, where #1 had run-1:call-1): claim (the key was not registered), process and finish added a second report, so exactly-one breaks (2 reports (ids 1, 2) for one logical operation).',
    ]);
  });

  it('a request that wrote before its first step (a claim in a transaction, then sim.step): "a write before its first step", not "resumed its resumed"', async () => {
    const { runMain } = await import('../../testing/cli.js');
    const { loadService } = await import('../../service/load.js');
    const module = 'src/report/html/claim-before-step.fixture.ts';
    const dir = tmp('rs-story-');
    const r = await runMain(['check', '--service', module, '--runs', '100', '--json', '--found', dir]);
    const file = (JSON.parse(r.out) as { counterexample: string | null }).counterexample;
    expect(file, r.err).not.toBeNull();
    const def = await loadService(module);
    const { data } = await observeScenario(loadScenario(file!), { file: file! }, { service: def, strictReplay: true });
    const story = data.summary.join(' ');
    expect(story).not.toMatch(/resumed its resumed/);
    expect(story).toMatch(/#1 ran a write before its first step \(\+ idem default\) and pay/);
  }, 60_000);

  it('says what the first request still wrote after its effect: a DEL that freed the key after the lost answer is the story', async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'examples', 'app-express-idempotency', 'app.ts'));
    const file = join('examples', 'app-express-idempotency', 'counterexamples', 'express-idempotency-exactly-one-539efd7e.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    // Until 2026-12 the sentence went from "adding an order" to "answered 500": the reader never learnt why #2 found the key free.
    expect(data.summary[0]).toMatch(/adding an order, then ran DEL idempotency, and answered 500\.$/);
    // The lost answer said once, in the words of the line that says what the store did. Each store step is
    // the command the app sent and its key's first segment (until 2026-12 the step names: "kv.get, kv.set, …").
    expect(data.summary[0]).toMatch(/^#1 ran GET idempotency, SET NX idempotency, INCR orders and SET order \(answer lost: the store ran it; the app's client saw SocketClosedUnexpectedlyError\), adding an order/);
    expect(data.summary[1]).toMatch(/^The client retried as #2: .* added a second order, so exactly-one breaks/);
  });

  it("a command a pause held is told once, not again as its answer's whole line", async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'examples', 'app-plain-http', 'app.ts'));
    const file = join('examples', 'app-plain-http', 'counterexamples', 'orders-check-then-insert-exactly-one-53b9175c.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    // Until 2026-12: `then kv.set order:1 "{"id":1,"order":"run-1","tenant":"defaul…" → OK added a second order`.
    expect(data.summary[1]).toMatch(/^#2, from another worker, went on: it had run GET idem and INCR orders and it was paused 10000 ms where it reached SET order before that, then SET order \(after the wait\) added a second order, so exactly-one breaks/);
    expect(data.summary.join(' ')).not.toContain(' → ');
  });

  it("an app's store is shown as the redis its code talks to, not retrysim's table for it", async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'examples', 'app-express-idempotency', 'app.ts'));
    const file = join('examples', 'app-express-idempotency', 'counterexamples', 'express-idempotency-exactly-one-539efd7e.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    expect(data.dbStates[data.steps[data.steps.length - 1]!.db]!.tables!.map((t) => t.name)).toEqual(['redis']);
    const changes = data.steps.flatMap((st) => st.dbChange ?? []);
    expect(changes.some((c) => /^\+ redis order:/.test(c))).toBe(true);
    expect(JSON.stringify(data)).not.toMatch(/retrysim_kv/);
  });

  it("an app's tenant-isolation step names its own noun and the answer that carried the other tenant's id (not the tracker's report_id)", async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'examples', 'app-node-idempotency', 'app.ts'));
    const file = join('examples', 'app-node-idempotency', 'counterexamples', 'node-idempotency-exactly-one-7150c301.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    const v = data.violations.find((x) => x.invariant === 'tenant-isolation')!;
    expect(v.detail).toBe("tenant 'globex' received order 1 of tenant 'default'");
    expect(v.why).toBe("op1's client is handed order 1 here");
    const st = data.steps[v.step]!;
    expect(st.kind).toBe('answer');
    expect(st.actor).toMatch(/^s\d+\/op1\.w\d+#\d+$/);
    expect(st.text).toMatch(/[^\d]1[^\d]/);
    for (const x of data.violations) expect(x.why).not.toMatch(/report|undefined/);
    // The summary tells the break that comes first (the other tenant's id handed out), with the requests in the order they ran.
    expect(data.summary[0]).toMatch(/^#2 ran .*\(adding an order\), and answered 201; #1 ran /);
    expect(data.summary[1]).toBe(`tenant-isolation breaks at step ${v.step + 1}: op1's client is handed order 1 here.`);
  });

  it('replay-equals-first is pinned to the answer that differs from the first success, not to the end of the run', async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'examples', 'replay-differs', 'service.ts'));
    // Found by `retrysim check --service examples/replay-differs/service.ts` (seed 1): a retry answered 200 where the first answer was 201.
    const file = join('src', 'report', 'html', 'replay-differs.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    const v = data.violations.find((x) => x.invariant === 'replay-equals-first')!;
    const st = data.steps[v.step]!;
    expect(st.kind).toBe('answer');
    expect(st.text).toMatch(/^#\d+ answers 200 /);
    expect(v.why).toMatch(/^op1's client is answered 200 .* here, where the first success was 201 /);
  });

  it('the key-reuse probe\'s request is told as the probe (not "the client retried"), key-reuse is pinned on its answer, and its row label is short', async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'src', 'report', 'html', 'key-reuse.fixture.ts'));
    // Found by `retrysim check --service src/report/html/key-reuse.fixture.ts` (seed 1): the probe's other body is a second charge.
    const file = join('src', 'report', 'html', 'key-reuse.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    expect(data.summary[1]).toMatch(/^The client sent the key again with another body as #2 \(the key-reuse probe\), where a refusal was due: .* added a second charge, so exactly-one breaks/);
    const v = data.violations.find((x) => x.invariant === 'key-reuse')!;
    const st = data.steps[v.step]!;
    expect({ kind: st.kind, text: st.text }).toMatchObject({ kind: 'answer', text: expect.stringMatching(/^#2 answers 201 /) });
    expect(v.why).toMatch(/^the key sent again with another body is answered 201 .* here, where a refusal \(a 4xx\) was due$/);
    const { shortLabel } = await import('./short-label.js');
    const probe = data.steps.find((x) => x.event.startsWith('key-reuse probe:'))!;
    expect(shortLabel(probe)).toBe('key-reuse probe');
  });

  it('replay-equals-first compares answers the client received: a 201 its server died with as it left is no first success', async () => {
    const { default: def } = await import('./stamped-replay.fixture.js');
    // Found by `retrysim check --service src/report/html/stamped-replay.fixture.ts` (seed 1): the first 201 (#2) dies with its
    // server as it leaves; the client's first success is #10 (w1's 5th attempt), and #11 (w0's 6th) has another served_at.
    const file = join('src', 'report', 'html', 'stamped-replay.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    const v = data.violations.find((x) => x.invariant === 'replay-equals-first')!;
    const st = data.steps[v.step]!;
    expect(st.kind).toBe('answer');
    expect(st.text).toMatch(/^#11 answers 201 .*"served_at":1767225605863/);
    expect(v.why).toMatch(/^op1's client is answered 201 .*"served_at":1767225605863\} here, where the first success was 201 .*"served_at":1767225603026\} \(#10\)$/);
  });

  it('id-exists is pinned on the answer the client received: the same id in answers lost on the way back handed it nothing', async () => {
    const { default: def } = await import('./wrong-id-replay.fixture.js');
    // #1 makes subscription 1; #2, #3 and #4 are replays answering id 2; the answers of #1 to #3 are lost, #4's is received.
    const file = join('src', 'report', 'html', 'wrong-id-replay.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    const v = data.violations.find((x) => x.invariant === 'id-exists')!;
    const st = data.steps[v.step]!;
    expect(st.kind).toBe('answer');
    expect(st.text).toMatch(/^#4 answers 201 /);
    expect(v.why).toBe("op1's client is handed subscription 2 here");
  });

  it('the second effect from the request the client gave up on is told as that earlier request going on, not as a retry', async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'examples', 'payments-check-then-insert', 'service.ts'));
    // #1 is paused inside charge; the client times out and sends #2, which charges and answers 201; then #1 charges again.
    const file = join('src', 'report', 'html', 'payments-paused.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { service: def, strictReplay: true });
    expect(data.summary[0]).toBe('#2 ran check and charge, adding an effect, and answered 201.');
    expect(data.summary[1]).toMatch(/^#1, sent before it, went on \(the client had given up waiting for it and sent #2\): it had run check and it was paused 116 ms where it reached charge before that, then charge added a second effect, so exactly-one breaks/);
  });

  it("a lease is read on the reading server's clock: a take-over by a server whose clock runs ahead says so", async () => {
    // Found by `retrysim check --variant key_atomic_unfenced_release` (seed 1): s1's clock is 1022 ms ahead; at t=801.75 ms
    // it reads 1823.75 ms, past the lease (until 1823 ms by the claimer's clock), and takes the key over.
    const file = join('src', 'report', 'html', 'skewed-takeover.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { strictReplay: true });
    const checks = data.steps.filter((st) => st.check !== undefined).map((st) => st.text);
    expect(checks).toContain('#4 claim: key run-1:call-1 is in progress, fence 1, lease over since 1823 ms by s1\'s clock (1823.75 ms) → goes on');
    expect(checks).toContain('#3 claim: key run-1:call-1 is in progress, fence 1, lease until 1823 ms by s0\'s clock (495.085 ms) → answers without writing');
    expect(data.summary[0]).toMatch(/^#4 ran claim \(the key was in progress, fence 1, lease over since 1823 ms by s1's clock \(1823\.75 ms\)\)/);
  });

  it('the second sentence names a third request whose write freed the key between the two effects', async () => {
    // Same file: #1, paused since 27 ms, crashes at 2423 ms and its unfenced release deletes the key #4 had finished;
    // #5 then finds it not registered. Without #1's release the sentence blamed nothing.
    const file = join('src', 'report', 'html', 'skewed-takeover.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { strictReplay: true });
    expect(data.summary[1]).toMatch(/^#5, from another worker, went on \(after #1's crash at 'after-process' \(after the pause\) \[− key run-1:call-1 \(placeholder released\)\]\): claim \(the key was not registered\)/);
  });

  it('an answer that came after the client timed out is told as such', async () => {
    // Found by `retrysim check --variant key_atomic_early_takeover` (seed 1): the client gives up at 23 ms; #1, slowed
    // 632 ms inside process, crashes and answers 500 at 633 ms, to no one.
    const file = join('src', 'report', 'html', 'late-answer-progress.fixture.json');
    const { data } = await observeScenario(loadScenario(join(root, file)), { file }, { strictReplay: true });
    expect(data.summary[0]).toMatch(/, and answered 500 after its client had given up waiting\.$/);
  });

  it('a progress counterexample carries the recovery phase it is judged on; a run without one carries none', async () => {
    // Found by `retrysim check --variant key_atomic_no_expiry` (seed 1): killed after its claim, the key stays in progress for ever.
    const file = join('src', 'report', 'html', 'no-expiry-progress.fixture.json');
    const { data, run } = await observeScenario(loadScenario(join(root, file)), { file }, { strictReplay: true });
    expect(run.violations.map((v) => v.invariant)).toEqual(['progress']);
    // The steps are the main run: without this the page never showed the resubmissions the violation counts.
    expect(data.steps.some((st) => st.text.includes('recover.'))).toBe(false);
    expect(data.recovery?.some((l) => /recover\.op1#2 +answer 409/.test(l))).toBe(true);
    // Pinned at the main run's last step, and said to be judged on the recovery phase, not on the run's end state.
    const v = data.violations.find((x) => x.invariant === 'progress')!;
    expect(v.step).toBe(data.steps.length - 1);
    expect(v.why).toMatch(/judged on the resubmissions after the faults stopped \(the recovery phase/);
    const race = await observeScenario(loadScenario(join(root, 'src', 'report', 'html', 'racy-claim.fixture.json')), {}, { strictReplay: true });
    expect(race.data.recovery).toBeUndefined();
  });

  it("a user's service: its own path, tables and effect noun, none of the tracker's words", async () => {
    const { loadService } = await import('../../service/load.js');
    const def = await loadService(join(root, 'examples', 'payments-check-then-insert', 'service.ts'));
    const file = join('src', 'report', 'html', 'payments-slow.fixture.json');
    const s = loadScenario(join(root, file));
    // The example declares no noun ("effect"); give it one, as a service would, to see it used.
    const { data, run } = await observeScenario(s, { file }, { service: { ...def, effects: { ...def.effects, noun: 'payment' } }, strictReplay: true });
    expect(run.reports.op1).toBe(2);
    expect(data.noun).toBe('payment');
    // (A trace that also logs the slow step adds it in brackets after `charge`.)
    expect(data.summary.map((t) => t.replace(/ \(slow [^)]*\)/g, ''))).toEqual([
      '#1 ran check and charge, adding a payment, and answered 201, but its client gave up waiting for the answer.',
      'The client retried as #2: it had run check and charge before that, then it added a second payment, so exactly-one breaks (2 payments (ids 1, 2) for one logical operation).',
    ]);
    // (Key values are the client's to choose; only their shape is asserted.)
    expect(data.steps.filter((st) => st.kind === 'request').map((st) => st.text.replace(/key \S+$/, 'key K'))).toEqual([
      '#1 POST /payments → s0, key K',
      '#2 POST /payments → s0, key K',
    ]);
    // Its own tables, read generically; each change on the line of the request that made it.
    expect(data.dbStates[data.steps[data.steps.length - 1]!.db]!.tables!.map((t) => [t.name, t.rows.length])).toEqual([['payments', 2], ['idempotency_keys', 1]]);
    const changes = data.steps.filter((st) => st.dbChange).map((st) => [st.actor, st.event, st.dbChange!.join('; ').replace(/\["default","[^"]+"\]/g, 'K')]);
    expect(changes).toEqual([
      ['s0/op1.w0#1', 'db: +1 payment', '+ payments 1; + idempotency_keys K'],
      ['s0/op1.w0#2', 'db: +1 payment', '+ payments 2; idempotency_keys K: response {"id":1} → {"id":2}'],
    ]);
    expect(data.violations).toEqual([expect.objectContaining({ invariant: 'exactly-one', why: 'the second payment for op1 appears here' })]);
    expect(JSON.stringify(data.summary) + data.steps.filter((st) => st.kind !== 'worker').map((st) => st.text).join(' ')).not.toMatch(/report/);
    // It relies on no lease, so the page shows none (the file's default lease is the tracker's knob).
    expect(data.leaseMs).toBeNull();
  });

  it("a leased service's page shows its lease: the built-in key_atomic's", async () => {
    const s = loadScenario(join(root, 'scenarios', 'canonical', 'slow_takeover', 'key_atomic--tool_call.json'));
    const { data } = await observeScenario(s, {});
    expect(data.leaseMs).toBe(s.service.leaseMs);
  });

  it('every checked-in scenario gets two sentences, and a holding run says so', async () => {
    for (const f of walk(join(root, 'scenarios'))) {
      const { data, run } = await observeScenario(loadScenario(f));
      expect(data.summary, f).toHaveLength(2);
      if (run.violations.length === 0) expect(data.summary[1], f).toMatch(/^Every invariant holds in this run/);
      else expect(run.violations.some((v) => data.summary.join(' ').includes(v.invariant)), f).toBe(true);
    }
  });
});

describe("a hosted app's store step in the story's words", () => {
  it('names the command the app sent and its key\'s first segment, from the trace detail', async () => {
    const { storeCommandSaid } = await import('./stepper-data.js');
    expect(storeCommandSaid('kv.get', 'EXISTS idem:default:run-1:call-1 → 0')).toBe('EXISTS idem');
    expect(storeCommandSaid('kv.set', 'lock:idem:k "1" NX EX 5 → OK')).toBe('SET NX lock');
    expect(storeCommandSaid('kv.set', 'SETEX idem:k 86400 "{}" → OK')).toBe('SETEX idem');
    expect(storeCommandSaid('kv.incr', 'INCRBY seq 1 → 2')).toBe('INCRBY seq');
    expect(storeCommandSaid('kv.del', 'lock:k → 1')).toBe('DEL lock');
    expect(storeCommandSaid('kv.exec', 'order:1 idem:k (SET order:1 "x"; SET idem:k "y") → [OK, OK]')).toBe('EXEC');
    expect(storeCommandSaid('claim', 'whatever')).toBeUndefined();
  });
});
