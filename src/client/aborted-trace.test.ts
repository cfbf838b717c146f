// A request the client gave up on (its AbortSignal.timeout fired) is a line
// of the timeline and a row of the stepper: until 2026-12 neither showed it,
// and the stepper drew its answer as received by the worker. The line is
// shown, never hashed: the run's trace hash is the one it had.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { loadScenario } from '../scenario/load.js';
import { observeRun } from '../report/html/stepper-data.js';
import { runClientScenario } from './run.js';
import { shortLabel } from '../report/html/short-label.js';
import client from './fixtures/timeout-new-key.js';

const tmp = tempDirs();
const module = 'src/client/fixtures/timeout-new-key.ts';

describe('a request the client aborts', () => {
  it('is on the --trace timeline and the stepper (an aborted row, the answer not read)', async () => {
    const found = tmp('rs-aborted-');
    expect((await runMain(['check', '--client', module, '--found', found])).code).toBe(1);
    const file = join(found, readdirSync(found).find((f) => f.endsWith('.json'))!);
    const r = await runMain(['replay', '--client', module, file, '--trace']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ +1000\.000 ms {2}op1\.w0\.fetch1 +aborted \(the client gave up on it; an answer that comes later is not read\)$/m);
    const s = loadScenario(file);
    const { data } = await observeRun(s, { file }, undefined, (observe) => runClientScenario(s, client, { observe }), { name: client.name, workers: (x) => x.workers });
    const aborted = data.steps.filter((s) => s.event === 'aborted');
    expect(aborted[0]).toMatchObject({ kind: 'timeout', actor: 'op1.w0', text: expect.stringMatching(/^request #1: the client gives up on it/) });
    expect(shortLabel(aborted[0]!)).toBe('aborted');
    const unread = data.steps.find((s) => s.kind === 'delivered' && s.text.startsWith('#1:'))!;
    expect(unread.text).toBe('#1: the answer arrives as the client gives up on it (not read)');
    expect(shortLabel(unread)).toBe('unread answer');
  }, 120_000);
});
