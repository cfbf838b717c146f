import { describe, expect, it } from 'vitest';
import { serviceConformanceTable } from './conformance.js';
import type { ServiceConformanceCell } from '../real/service-conformance.js';

/** The table's header and body rows, cell by cell (borders dropped, text trimmed). */
function grid(table: string): string[][] {
  return table.split('\n').filter((l) => l.startsWith('│')).map((l) => l.split('│').slice(1, -1).map((c) => c.trim()));
}

describe('conformance --service table', () => {
  const cell = (column: string, sim: number, real: number, realBroken: string[]): ServiceConformanceCell => ({
    column,
    sim: { effects: sim, violations: [], eventually: 'not judged' },
    real: { effects: real, violations: realBroken, eventually: 'not judged', kills: 0, wallMs: 1, unsettled: [] },
    same: sim === real && realBroken.length === 0,
  });

  it('every column has a header and every cell says something; the last one says whether sim and real agree', () => {
    const rows = grid(serviceConformanceTable([cell('no_fault', 1, 1, []), cell('lost_response', 1, 2, ['exactly-one'])], 'payment'));
    expect(rows[0]).toEqual(['column', 'payments (sim | real)', 'broken (sim | real)', 'sim = real']);
    expect(rows.slice(1)).toEqual([
      ['no_fault', '1 | 1', '- | -', 'yes'],
      ['lost_response', '1 | 2', '- | exactly-one', '≠ no'],
    ]);
    for (const r of rows) for (const c of r) expect(c, r.join(' │ ')).not.toBe('');
  });

  it("a kill column whose process was never killed says so: its 'yes' compares two runs without the fault", () => {
    const killed = { ...cell('kill_at:charge', 1, 1, []), real: { effects: 1, violations: [], eventually: 'succeeded' as const, kills: 1, wallMs: 1, unsettled: [] } };
    const rows = grid(serviceConformanceTable([killed, cell('kill_at:kv.del', 1, 1, [])], 'order'));
    expect(rows.slice(1).map((r) => r.at(-1))).toEqual(['yes', 'yes (no kill: never reached)']);
  });

  it('a service that declares progress gets an "in the end" column: how the operation ended on each side, after the recovery phase', () => {
    const stuck: ServiceConformanceCell = {
      column: 'kill_at:charge',
      sim: { effects: 0, violations: ['progress'], eventually: 'gave_up' },
      real: { effects: 0, violations: ['progress'], eventually: 'gave_up', kills: 1, wallMs: 1, unsettled: [] },
      same: true,
    };
    const ok: ServiceConformanceCell = { ...stuck, column: 'no_fault', sim: { effects: 1, violations: [], eventually: 'succeeded' }, real: { ...stuck.real, effects: 1, violations: [], eventually: 'succeeded', kills: 0 } };
    const rows = grid(serviceConformanceTable([ok, stuck], 'payment'));
    expect(rows[0]).toEqual(['column', 'payments (sim | real)', 'in the end (sim | real)', 'broken (sim | real)', 'sim = real']);
    expect(rows[2]).toEqual(['kill_at:charge', '0 | 0', 'gave_up | gave_up', 'progress | progress', 'yes']);
  });
});
