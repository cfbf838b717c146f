import { describe, expect } from 'vitest';
import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { EventQueue } from './queue.js';

describe('EventQueue', () => {
  test.prop([fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.boolean()), { maxLength: 300 })])(
    'any sequence of pushes and pops yields entries in (time, seq) order',
    (ops) => {
      const q = new EventQueue(4); // tiny capacity so growth is exercised
      const model: Array<[number, number]> = [];
      let seq = 0;
      const popped: Array<[number, number]> = [];
      const expected: Array<[number, number]> = [];
      for (const [t, isPop] of ops) {
        if (isPop && model.length > 0) {
          model.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
          expected.push(model.shift()!);
          q.pop();
          popped.push([q.popTime, q.popA]);
        } else {
          q.push(t, 0, seq, 0);
          model.push([t, seq++]);
        }
      }
      expect(popped).toEqual(expected);
      expect(q.size).toBe(model.length);
    },
  );

  test('pop on an empty queue reports false', () => {
    expect(new EventQueue().pop()).toBe(false);
  });
});
