/**
 * A request a fault held (a pause or a slow request at its step) goes on
 * when the kernel resumes it: an app's store command runs and then logs its
 * line (`#2 kv.set order:1 … → OK`); a service writes, then logs its answer.
 * The page read the database at each line's logging and took it as the
 * previous row's result, so that write was drawn on whatever row came before
 * — a worker's "op1.w1 ends", another request's "slow …" note — where
 * nothing wrote (until 2026-12: both checked-in app examples' pages, and a
 * two-transactions counterexample's). The observer now also reads the
 * database at every task switch (Trace.switched), and a row whose task's
 * turn ended before the next row gets the database as that turn left it.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadScenario } from '../../scenario/load.js';
import { loadService } from '../../service/load.js';
import { observeScenario } from './stepper-data.js';
import type { Step } from './stepper-types.js';

const root = join(import.meta.dirname, '..', '..', '..');

async function stepsOf(file: string): Promise<Step[]> {
  const s = loadScenario(join(root, file));
  // The built-in tracker's files name no module.
  const def = s.service.module === undefined ? undefined : await loadService(join(root, s.service.module));
  return (await observeScenario(s, { file }, { ...(def ? { service: def } : {}), strictReplay: true })).data.steps;
}

/** Rows that cannot have written: a worker's (the client's side) and a fault's note on a request that then waits. */
const writesNothing = (st: Step) => /^op\d+\.w\d+$/.test(st.actor) || (st.kind === 'note' && /\b(paused|slow) \d+ ms\b/.test(st.text));

describe('a store change is drawn on the row of the command that made it, also when a fault held the command', () => {
  it('app-plain-http: the order #2 writes after its 10 s pause is on #2\'s rows, not on op1.w1\'s "ends" row', async () => {
    const steps = await stepsOf('examples/app-plain-http/counterexamples/orders-check-then-insert-exactly-one-53b9175c.json');
    const ends = steps.find((st) => st.actor === 'op1.w1' && / ends$/.test(st.text))!;
    expect(ends.dbChange).toBeUndefined();
    const late = steps.findIndex((st) => st.actor === 's0/op1.w1#2' && st.t > 10_000 && /kv\.set order:1 .* → OK/.test(st.text));
    expect(late).toBeGreaterThan(steps.indexOf(ends));
    // On its `store: +1 order` row, as an order written without a fault is (the command's row says what it ran).
    expect(steps[late]!.dbChange).toBeUndefined();
    expect(steps[late + 1]!.text).toMatch(/store: \+1 order/);
    expect(steps[late + 1]!.dbChange).toEqual(['+ redis order:1']);
  });

  it('app-powertools-idempotency: #2\'s held kv.incr is on its own row, not on #1\'s answer', async () => {
    const steps = await stepsOf('examples/app-powertools-idempotency/counterexamples/powertools-no-context-exactly-one-40532341.json');
    expect(steps.find((st) => st.actor === 's0/op1.w0#1' && st.kind === 'answer')!.dbChange).toBeUndefined();
    expect(steps.find((st) => st.actor === 's0/op1.w1#2' && /kv\.incr orders:seq → 2/.test(st.text))!.dbChange).toEqual(['redis orders:seq: value 1 → 2']);
    // A turn that wrote without logging a line: its own row, naming the store as the app's code knows it.
    expect(steps.filter((st) => st.kind === 'resumed').map((st) => st.text)).toEqual(['#1 resumes inside its kv.incr step and writes to redis']);
  });

  it('app-fastify: the counter #1 increments after its pause is on that kv.incr\'s row, not on op1.w0\'s "ends" row', async () => {
    const steps = await stepsOf('examples/app-fastify/counterexamples/fastify-orders-exactly-one-c36e88b8.json');
    expect(steps.find((st) => st.actor === 'op1.w0' && / ends$/.test(st.text))!.dbChange).toBeUndefined();
    const incr = steps.find((st) => st.actor === 's0/op1.w0#1' && /kv\.incr orders:seq → 2/.test(st.text))!;
    expect(incr.dbChange).toEqual(['redis orders:seq: value 1 → 2']);
  });

  it('a service (two-transactions): the key #1 remembers after its slow stretch is on #1\'s answer at 130 ms, not on #2\'s "slow" note at 115 ms; #2\'s on its answer, not on "op1.w0 ends"', async () => {
    const steps = await stepsOf('src/report/html/held-write.fixture.json');
    const changed = steps.filter((st) => st.dbChange !== undefined).map((st) => `${st.t.toFixed(0)} ${st.text.slice(0, 20)}: ${st.dbChange!.join('; ')}`);
    expect(changed).toEqual([
      '1 #1 db: +1 order: + orders 1',
      '115 #2 db: +1 order: + orders 2',
      '130 #1 answers 201 {"id": + idempotency_keys ["default","run-1:call-1"]',
      '244 #2 answers 201 {"id": idempotency_keys ["default","run-1:call-1"]: response {"id":1} → {"id":2}',
    ]);
  });

  it('the built-in tracker: a request paused at its claim writes its key when it resumes, 800 ms later — a row of its own then, not the pause note\'s at 1 ms', async () => {
    const steps = await stepsOf('src/report/html/paused-claim.fixture.json');
    expect(steps.find((st) => st.kind === 'note' && /paused 800 ms/.test(st.text))!.dbChange).toBeUndefined();
    const resumed = steps.find((st) => st.kind === 'resumed')!;
    expect(resumed).toMatchObject({ t: 801, actor: 's0/op1.w0#1', text: '#1 resumes inside its claim step and writes to the database', dbChange: ['+ key run-1:call-1: in_progress, fence 1'] });
  });

  const files = [...readdirSync(join(root, 'examples')).flatMap((d) => {
    try {
      return readdirSync(join(root, 'examples', d, 'counterexamples')).map((f) => `examples/${d}/counterexamples/${f}`);
    } catch {
      return [];
    }
  }), 'src/report/html/held-write.fixture.json', 'src/report/html/paused-claim.fixture.json'];
  it.each(files)('%s: no worker row and no fault note carries a change', async (file) => {
    const wrong = (await stepsOf(file)).filter((st) => st.dbChange !== undefined && writesNothing(st));
    expect(wrong.map((st) => `${st.t} ${st.actor}: ${st.text} ${JSON.stringify(st.dbChange)}`)).toEqual([]);
  }, 60_000);
});
