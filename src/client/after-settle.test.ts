// A client's code runs on after its call settled while it keeps its process
// alive — a request it still awaits, a timer that is not unref()ed — as a
// real process does, up to the run's last deadline. Until 2026-12 the
// simulation stopped the client's code at the last settle: a request fired
// 50 ms after a success was dropped unless another operation kept the run
// alive (the failure it causes shrank to two operations and faults), and a
// request in flight at the settle showed "→ no answer" though answered.
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { runClientScenario } from './run.js';
import { parseScenario } from '../scenario/load.js';

const tmp = tempDirs();
const scenario = () => parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'after settle', seed: 1,
  service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
  operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
  expect: {},
}));

describe('a request a client sends after its call settled', () => {
  it('reaches the service: the duplicate order fails exactly-one with one operation and no fault, and the replay shows it answered', async () => {
    const module = 'src/client/fixtures/after-success.ts';
    const r = await runMain(['check', '--client', module, '--runs', '100', '--json', '--found', tmp('rs-after-settle-')]);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { violations: string[]; counterexample: string; shrunkSize: { operations: number; workers: number; faults: number } };
    expect(j.violations).toContain('exactly-one');
    expect(j.shrunkSize).toMatchObject({ operations: 1, workers: 1, faults: 0 });
    const t = await runMain(['replay', '--client', module, j.counterexample, '--trace']);
    expect(t.code, t.err).toBe(0);
    const posts = t.out.split('\n').filter((l) => /^\s+op1\.w0\s+t=[\d.]+ ms\s+POST \/reports/.test(l));
    expect(posts).toHaveLength(2);
    for (const l of posts) expect(l).toMatch(/→ 201/);
    expect(posts[1]).toMatch(/\(sent after the call settled\)$/);
  }, 120_000);

  it('runs on for a timer that keeps the process alive, and not for an unref()ed one or AbortSignal.timeout\'s', async () => {
    /** When the request the timer left behind sends went out (undefined: never), armed by `arm(send, ms)`. */
    const sentAfter = async (arm: (send: () => void, ms: number) => void, ms = 3000) => {
      const r = await runClientScenario(scenario(), {
        name: 'leaves-a-timer', deadlineMs: 10_000,
        async run(fetch, op) {
          const send = () => void fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': 'k-1' }, body: op.body }).catch(() => undefined);
          const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': 'k-1' }, body: op.body });
          arm(send, ms);
          return res.status;
        },
      });
      const w = r.workers[0]!;
      return w.sent.length === 1 ? undefined : w.sent[1]!.atMs - w.endMs;
    };
    expect(await sentAfter((send, ms) => void setTimeout(send, ms))).toBe(3000); // real-time: allowed (the bridge's fake clock)
    expect(await sentAfter((send, ms) => void setTimeout(send, ms).unref())).toBeUndefined(); // real-time: allowed (the bridge's fake clock)
    // AbortSignal.timeout's timer is unref()ed, as Node's is.
    expect(await sentAfter((send, ms) => AbortSignal.timeout(ms).addEventListener('abort', send))).toBeUndefined();
    // Past the last deadline nothing runs on: the process is taken down with the run.
    expect(await sentAfter((send, ms) => void setTimeout(send, ms), 60_000)).toBeUndefined(); // real-time: allowed (the bridge's fake clock)
  }, 60_000);
});
