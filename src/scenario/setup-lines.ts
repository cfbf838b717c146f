import type { Scenario } from './schema.js';

/**
 * What the trace does not say and a reader needs to follow it: instances
 * whose clocks disagree (a stored answer's TTL judged by a clock 6 h ahead
 * has expired: the trace shows only that the key was not found), and the
 * tenant of each operation when they differ (two tenants with one key).
 */
export function setupLines(s: Scenario): string[] {
  const out: string[] = [];
  const offsets = Array.from({ length: s.service.instances }, (_, i) => s.service.clockOffsetMs[i] ?? 0);
  if (offsets.some((x) => x !== 0)) out.push(`instances: ${offsets.map((x, i) => `s${i} clock ${offsetText(x)}`).join(', ')}`);
  const tenants = s.operations.map((o) => o.tenant ?? 'default');
  if (new Set(tenants).size > 1) out.push(`tenants: ${s.operations.map((o, i) => `${o.id} ${tenants[i]}`).join(', ')}`);
  return out;
}

/** A clock offset in the unit a reader thinks in: `+0`, `-250 ms`, `+12 s`, `+6 h`. */
export function offsetText(ms: number): string {
  if (ms === 0) return '+0';
  const sign = ms < 0 ? '-' : '+';
  const a = Math.abs(ms);
  const [v, unit] = a < 1_000 ? [a, 'ms'] : a < 60_000 ? [a / 1_000, 's'] : a < 3_600_000 ? [a / 60_000, 'min'] : [a / 3_600_000, 'h'];
  return `${sign}${Number.isInteger(v) ? v : Number(v.toFixed(1))} ${unit}`;
}
