// An acknowledged id whose row effects.owner gives to the operation's own run,
// but which effects.of does not list (an effect defined by work a kill lost
// after the answer: an order row without its audit row), read "order 1
// belongs to run 'run-1', not 'run-1'" (found by an outside user's service,
// 2026-12): the sentence now names the two declarations that disagree.
import { expect, test } from 'vitest';
import { openStore } from '../tracker/store.js';
import { trackerService } from '../tracker/service.js';
import { checkServiceInvariants } from './check.js';

test("id-exists: an id effects.owner gives to this run but effects.of does not list is said so, not 'belongs to run r1, not r1'", () => {
  const s = openStore();
  const id = s.insertReport({ run_id: 'r1', module: 'm', title: 't', steps: 's' }, null, 0, 'default');
  const base = trackerService({ variant: 'key_atomic' });
  const def = { ...base, effects: { ...base.effects, of: () => [] } };
  const attempt = { toolUseId: 'toolu_r1_1', attempt: 1, key: 'k', title: 't', startMs: 0, endMs: 1, outcome: { kind: 'http' as const, status: 201 }, replay: false, reportId: id };
  const v = checkServiceInvariants(def, s.db, [{ id: 'op1', runId: 'r1', tenant: 'default', keySource: 'tool_call', attempts: [attempt], results: [] }]);
  expect(v.violations).toEqual([{ invariant: 'id-exists', op: 'op1', detail: `report ${id} is run 'r1''s by effects.owner, but effects.of does not list it` }]);
});
