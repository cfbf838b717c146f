import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('a key table not scoped by tenant fails invariant 4', () => {
  it("hands one tenant another tenant's report when their keys coincide; shrinks to two operations in two tenants, no fault", async () => {
    const cx = await expectFailsMinimally('key_atomic_unscoped-tool_call-fails');
    const tenants = cx.scenario.operations.map((o) => o.tenant ?? 'default');
    expect(new Set(tenants).size).toBe(2);
    expect(cx.size.faults).toBe(0);
    expect(cx.violations.find((v) => v.invariant === 'tenant-isolation')!.detail).toMatch(/received report \d+ of tenant/);
  });
});
