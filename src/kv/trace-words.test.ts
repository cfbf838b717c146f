// A hosted app's store commands were traced by name only (`kv.set`): a
// reader of `replay --trace` or the stepper page could not see on which key
// or with which answer — the very thing a SET NX claim is about. The line
// now says `kv.set <key> <value> NX PX 30000 → OK` (or `→ null`), values cut
// past 40 characters. Display only: the entry hashed is `kv.set` as ever,
// so every recorded file keeps its trace hash.
import { describe, expect, it } from 'vitest';
import { loadScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { loadService } from '../service/load.js';
import { observeScenario } from '../report/html/stepper-data.js';
import { kvTraceWords, type KvCommand } from './client.js';

const NODE_IDEM = { file: 'examples/app-node-idempotency/counterexamples/node-idempotency-exactly-one-7150c301.json', app: 'examples/app-node-idempotency/app.ts' };
const PLAIN = { file: 'examples/app-plain-http/counterexamples/orders-check-then-insert-exactly-one-53b9175c.json', app: 'examples/app-plain-http/app.ts' };

async function traced(c: { file: string; app: string }) {
  const s = loadScenario(c.file);
  const def = await loadService(c.app);
  const shown = await runScenario(s, { service: def, keepTrace: true });
  const bare = await runScenario(s, { service: def });
  return { s, def, lines: shown.trace.map(String), hash: shown.result.traceHash, bareHash: bare.result.traceHash };
}

describe("a store command's trace line says its key, arguments and answer", () => {
  it('SET NX: the claim that wins says → OK, the one that loses → null; the hash is the unshown run\'s', async () => {
    const { lines, hash, bareHash } = await traced(NODE_IDEM);
    const sets = lines.filter((l) => / kv\.set node-idempotency:POST:\/orders:run-1:call-1 /.test(l));
    expect(sets.some((l) => / "\{"status":"IN_PROGRESS","fingerPrint":"4…" NX PX 86400000 → OK$/.test(l)), sets.join('\n')).toBe(true);
    expect(sets.some((l) => / NX PX 86400000 → null$/.test(l))).toBe(true);
    // Every store command's line says what it answered.
    expect(lines.filter((l) => / kv\.\w+( |$)/.test(l)).every((l) => / → /.test(l))).toBe(true);
    // The words are not hashed: a run that keeps no lines (none are added to) hashes the same.
    expect(hash).toBe(bareHash);
  });

  it('a step a pause held: its line at the step says the call, a line when it ran says the answer', async () => {
    const { lines, hash, bareHash } = await traced(PLAIN);
    const at = lines.findIndex((l) => / s0\/op1\.w1#2 +kv\.set order:1 "\{"id":1,"order":"run-1","tenant":"defaul…"$/.test(l));
    expect(at, lines.join('\n')).toBeGreaterThan(-1);
    expect(lines[at + 1]).toMatch(/paused 10000 ms at step 'kv\.set'$/);
    expect(lines.find((l) => /^ +10001\.000 ms +s0\/op1\.w1#2 +kv\.set order:1 "\{"id":1,.*…" → OK$/.test(l))).toBeDefined();
    expect(lines.find((l) => / kv\.get idem:\["default","run-1:call-1"\] → null$/.test(l))).toBeDefined();
    expect(lines.find((l) => / kv\.incr orders:seq → 2$/.test(l))).toBeDefined();
    expect(hash).toBe(bareHash);
  });

  it('the stepper page says it too, on the step of the command', async () => {
    const s = loadScenario(NODE_IDEM.file);
    const { data } = await observeScenario(s, {}, { service: await loadService(NODE_IDEM.app) });
    const phases = data.steps.filter((x) => x.kind === 'phase' && x.event === 'kv.set').map((x) => x.text);
    expect(phases.some((t) => /^#\d+ kv\.set node-idempotency:POST:\/orders:run-1:call-1 ".*…" NX PX 86400000 → null$/.test(t)), phases.join('\n')).toBe(true);
    expect(data.steps.filter((x) => x.kind === 'phase' && x.event === 'kv.set').every((x) => / → /.test(x.line))).toBe(true);
  });

  it('words: long values cut with …, the answer as redis-cli shows it, an error named', () => {
    const c = (name: KvCommand['name'], keys: string[], args?: string): KvCommand => ({ name, keys, write: true, ...(args !== undefined ? { args } : {}), run: () => null });
    expect(kvTraceWords(c('set', ['order:k1'], 'NX PX 30000'), { value: 'OK' })).toEqual({ call: 'order:k1 NX PX 30000', answer: 'OK' });
    expect(kvTraceWords(c('set', ['order:k1'], 'NX PX 30000'), { value: null })).toEqual({ call: 'order:k1 NX PX 30000', answer: 'null' });
    expect(kvTraceWords(c('get', ['k']), { value: 'x'.repeat(100) }).answer).toBe(`"${'x'.repeat(40)}…"`);
    expect(kvTraceWords(c('get', ['k']), { value: 'OK' }).answer).toBe('"OK"');
    expect(kvTraceWords(c('del', ['a', 'b']), { value: 2 })).toEqual({ call: 'a b', answer: '2' });
    expect(kvTraceWords(c('incr', ['n']), { error: new Error('ERR value is not an integer') }).answer).toBe('error: ERR value is not an integer');
  });
});
