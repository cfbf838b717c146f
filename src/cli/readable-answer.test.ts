/**
 * `replay --trace` shows an answer's body as the service sent it, where the
 * trace holds it escaped inside its data (`{"body":"{\"report_id\":1}"}`): a
 * reader stepping through a counterexample reads `answer 201
 * {"report_id":1} (replay)`. Only the text changes: the trace, its hash and
 * every recorded file's hash are the trace's own form.
 */
import { describe, expect, it } from 'vitest';
import { readableTimeline } from './replay.js';
import { formatEntry } from '../sim/trace.js';
import { runMain } from '../testing/cli.js';

const line = (actor: string, event: string, data?: Record<string, unknown>) => formatEntry({ t: 1, actor, event, ...(data ? { data } : {}) } as Parameters<typeof formatEntry>[0]);

describe('an answer in the readable timeline', () => {
  it('shows the body as sent, marks a stored answer replayed, keeps time and actor', () => {
    const [a, b] = readableTimeline([
      line('s0/op1.w0#1', 'answer 201', { body: '{"report_id":1}' }),
      line('s0/recover.op1#2', 'answer 201', { body: '{"report_id":1}', replay: true }),
    ]);
    expect(a).toBe('     1.000 ms  s0/op1.w0#1    answer 201 {"report_id":1}');
    expect(b).toBe('     1.000 ms  s0/recover.op1#2 answer 201 {"report_id":1} (replay)');
  });

  it('a body that is not JSON as it is; one with a line break stays one line (a JSON string); an empty one says so', () => {
    const [html, multi, empty] = readableTimeline([
      line('s0/op1.w0#1', 'answer 500', { body: '<h1>Internal Server Error</h1>' }),
      line('s0/op1.w0#1', 'answer 500', { body: 'Error: boom\n    at handler' }),
      line('s0/op1.w0#1', 'answer 201', { body: '' }),
    ]);
    expect(html).toMatch(/answer 500 <h1>Internal Server Error<\/h1>$/);
    expect(multi).toMatch(/answer 500 "Error: boom\\n    at handler"$/);
    expect(multi).not.toContain('\n');
    expect(empty).toMatch(/answer 201 \(empty body\)$/);
  });

  it('other lines, and an answer line whose data says more than body and replay, are left as the trace has them', () => {
    const kept = [
      line('s0/op1.w0#1', 'answer 429 (injected)'),
      line('s0/op1.w0#1', 'response lost', { status: 201 }),
      line('s0/op1.w0#1', 'answer 201', { body: '{}', extra: 1 }),
      line('op1.w0', 'result success', { body: 'x' }),
    ];
    expect(readableTimeline(kept)).toEqual(kept);
  });

  it('replay --trace of a checked-in counterexample: the answers readable, the hash the file records', async () => {
    const file = 'scenarios/found/key_split-exactly-one-b78c4ffb.json';
    const r = await runMain(['replay', file, '--trace']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/s0\/op1\.w0#1 +answer 201 \{"report_id":2\}\n/);
    expect(r.out).toContain('answer 500 {"error":"idempotency key was registered concurrently by another request"}');
    expect(r.out).not.toContain('{"body":');
    const j = JSON.parse((await runMain(['replay', file, '--json'])).out) as { traceHash: string };
    expect(r.out).toContain(`trace ${j.traceHash}`);
    expect(r.out).toMatch(/expect: met/);
  });
});
