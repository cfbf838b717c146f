import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadService } from './load.js';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';

/**
 * A CommonJS service that destructures node:crypto when it loads (before any
 * run): its ids are the run's seeded ones, so a replay answers the same. In
 * a file of its own: a run in the same process before the load would hide
 * the difference (the dispatchers would already be there).
 */
describe('a CommonJS service that takes randomUUID from require("crypto") at load time', () => {
  it('mints the same ids on every run of a scenario, and different ones per request', async () => {
    const file = join(import.meta.dirname, 'fixtures', 'cjs', 'crypto-at-load.cjs');
    const def = await loadService(file);
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'ids', seed: 3, service: { module: file },
      client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }], expect: {},
    }));
    const ids = async () => {
      const r = await runScenario(s, { service: def, keepTrace: true });
      return { hash: r.result.traceHash, ids: r.trace.flatMap((l) => [...l.matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g)].map((m) => m[0])) };
    };
    const a = await ids();
    const b = await ids();
    expect(a.ids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(a.ids).size).toBeGreaterThanOrEqual(2);
    expect(b).toEqual(a);
  });
});
