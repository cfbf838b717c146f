import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { parseScenario } from '../scenario/load.js';
import { setupLines } from './replay.js';

const TENANTS = 'scenarios/found/key_atomic_unscoped-tenant-isolation-ee4f2a30.json';

describe('replay says what its trace cannot: skewed clocks and tenants', () => {
  it('two tenants with one key: the tenant of each operation, under the scenario line', async () => {
    const r = await runMain(['replay', TENANTS]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')).toContain('tenants: op1 default, op2 globex');
  });

  it('instances whose clocks disagree: each instance\'s offset in a reader\'s unit; nothing for instances on time', async () => {
    const s = parseScenario(readFileSync(TENANTS, 'utf8'));
    const skewed = { ...s, service: { ...s.service, instances: 3, clockOffsetMs: [0, 21_600_000, -250] } };
    expect(setupLines(skewed)[0]).toBe('instances: s0 clock +0, s1 clock +6 h, s2 clock -250 ms');
    expect(setupLines({ ...s, service: { ...s.service, instances: 2, clockOffsetMs: [0, 90_000] } })[0]).toBe('instances: s0 clock +0, s1 clock +1.5 min');
    expect(setupLines({ ...s, service: { ...s.service, instances: 2, clockOffsetMs: [] } }).filter((l) => l.startsWith('instances'))).toEqual([]);
    const plain = await runMain(['replay', 'scenarios/found/key_split-exactly-one-b78c4ffb.json']);
    expect(plain.out).not.toMatch(/^(instances|tenants):/m);
  });
});
