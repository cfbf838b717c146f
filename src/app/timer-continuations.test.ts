// What a request's code does after awaiting a timer is that request's, even
// when the timer fired in another request's turn: its store commands are its
// own steps and trace lines. Until 2026-12 two duplicates sleeping until one
// instant had both continuations run in the first turn, and the trace (and
// the stepper) credited both orders to one request.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const fixture = 'src/app/fixtures/sleep-then-order-app.ts';

describe('two requests of one process that sleep until the same instant', () => {
  it('each writes its own order on its own trace lines', async () => {
    const found = tmp('rs-timer-cont-');
    expect((await runMain(['check', '--app', fixture, '--found', found])).code).toBe(1);
    const file = join(found, readdirSync(found).find((f) => f.endsWith('.json'))!);
    const r = await runMain(['replay', '--app', fixture, file, '--trace']);
    expect(r.code).toBe(0);
    const added = r.out.split('\n').filter((l) => l.includes('kv.set order:')).map((l) => /(s\d+\/\S+)/.exec(l)![1]);
    expect(added).toHaveLength(2);
    expect(new Set(added).size).toBe(2);
    // Each request answers the id it wrote.
    for (const actor of added) {
      const lines = r.out.split('\n').filter((l) => l.includes(` ${actor} `));
      const wrote = /kv\.set order:(\d+)/.exec(lines.find((l) => l.includes('kv.set order:'))!)![1];
      expect(lines.find((l) => l.includes('answer 201'))).toMatch(new RegExp(`answer 201 \\{"id":${wrote}\\}$`));
    }
  }, 60_000);
});

describe('an app that writes after its request has answered (res.end, then await sleep, then a store command)', () => {
  it('its later commands run in the process (the order is written): holds under lost answers', async () => {
    // Sent to the ended request's queue, which nobody reads, the order was never written: "no order exists" at run 1.
    const r = await runMain(['check', '--app', 'src/app/fixtures/write-after-answer-app.ts', '--runs', '200', '--faults', 'loseResponse', '--found', tmp('rs-after-answer-')]);
    expect(r.code, r.out).toBe(0);
  }, 60_000);
});
