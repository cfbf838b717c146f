import { describe, expect } from 'vitest';
import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { CalendarQueue } from './calendar-queue.js';
import { EventQueue } from './queue.js';
import { Kernel } from './kernel.js';

describe('CalendarQueue', () => {
  // Times on a coarse grid (many ties), across several ring lengths (32
  // buckets of 0.5 ms: a 16 ms horizon, so the overflow and refills are
  // exercised), with pushes before the last pop (a rewind) and +Infinity.
  const time = fc.oneof(fc.integer({ min: 0, max: 120 }).map((x) => x / 2), fc.constant(Infinity), fc.double({ min: 0, max: 1e6, noNaN: true }));
  test.prop([fc.array(fc.tuple(time, fc.boolean()), { maxLength: 400 }), fc.constantFrom(0.5, 1, 7)])(
    'pops in (time, seq) order, exactly like the tree queue',
    (ops, bucketMs) => {
      const q = new CalendarQueue(bucketMs, 32, 2); // tiny capacity so growth is exercised
      const ref = new EventQueue(2);
      let seq = 0;
      for (const [t, isPop] of ops) {
        if (isPop) {
          const got = q.pop();
          expect(got).toBe(ref.pop());
          if (got) expect([q.popTime, q.popA, q.popKind, q.popB]).toEqual([ref.popTime, ref.popA, ref.popKind, ref.popB]);
        } else {
          q.push(t, seq & 7, seq, -seq);
          ref.push(t, seq & 7, seq, -seq);
          seq++;
        }
        expect(q.size).toBe(ref.size);
        expect(q.peekTime()).toBe(ref.peekTime());
      }
      while (ref.pop()) {
        expect(q.pop()).toBe(true);
        expect([q.popTime, q.popA]).toEqual([ref.popTime, ref.popA]);
      }
      expect(q.pop()).toBe(false);
    },
  );

  test('clear empties it and restarts seq', () => {
    const q = new CalendarQueue(1, 32);
    q.push(5, 0, 1, 0);
    q.push(500, 0, 2, 0);
    q.clear();
    expect(q.size).toBe(0);
    expect(q.pop()).toBe(false);
    q.push(3, 0, 3, 0);
    expect(q.pop()).toBe(true);
    expect(q.popA).toBe(3);
  });

  test('rejects bad shapes', () => {
    expect(() => new CalendarQueue(0, 32)).toThrow(RangeError);
    expect(() => new CalendarQueue(1, 48)).toThrow(RangeError);
  });

  test('a kernel on a calendar queue runs tasks and callbacks like one on the default queue', async () => {
    const run = async (queue?: CalendarQueue) => {
      const k = new Kernel({ seed: 3, ...(queue ? { queue } : {}) });
      const rng = k.fork('t');
      const h = k.on((a) => k.log('cb', 'fire', { a }));
      for (let i = 0; i < 4; i++) {
        k.spawn(`t${i}`, async () => {
          for (let j = 0; j < 5; j++) {
            await k.sleep(Math.floor(rng.next32() * 3) * 10);
            k.after(rng.next32() * 50, h, i * 10 + j);
          }
        });
      }
      return k.run();
    };
    const shared = new CalendarQueue(0.5, 64);
    const a = await run();
    const b = await run(shared);
    const c = await run(shared); // reused after a run
    expect(b.traceHash).toBe(a.traceHash);
    expect(c.traceHash).toBe(a.traceHash);
    expect(b.choices).toEqual(a.choices);
  });
});
