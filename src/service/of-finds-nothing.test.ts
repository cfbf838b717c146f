/**
 * A correct service whose effects.of finds nothing it made (it stores a
 * request without an x-tenant header as tenant NULL; of asks for 'default')
 * fails exactly-one with "no order exists" — what of returned is all the
 * checks see. Without effects.owner nothing says whose the acknowledged id
 * is, so check says where to look; with an owner that answers a NULL
 * tenant, the definition is refused in one line naming it.
 */
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { runScenario } from '../scenario/run.js';
import { parseScenario } from '../scenario/load.js';
import nullTenant from './fixtures/null-tenant.js';
import { ServiceError } from './errors.js';

const tmp = tempDirs();

describe('an effects.of that finds nothing the service made', () => {
  it('check --service: exactly-one "no order exists", and a line saying effects.of may not find it (tenant \'default\' without a header; declare effects.owner)', async () => {
    const r = await runMain(['check', '--service', 'src/service/fixtures/null-tenant.ts', '--runs', '100', '--found', tmp('rs-null-tenant-')]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toContain('exactly-one (op1): the client was told it succeeded, but no order exists');
    expect(r.out).toContain("(if the service did make the order, effects.of does not find it: it is asked for the operation's runId and tenant — 'default' for a request sent without an x-tenant header; declare effects.owner(db, id) and the checks say whose an acknowledged id is)");
  }, 60_000);

  it('with an effects.owner that answers the NULL tenant: one line naming effects.owner and what it returned', async () => {
    const withOwner = { ...nullTenant, effects: { ...nullTenant.effects, owner: (db: never, id: unknown) => (db as { prepare(q: string): { get(x: unknown): unknown } }).prepare('SELECT ref AS runId, tenant FROM orders WHERE id = ?').get(id) as never } };
    const s = parseScenario(JSON.stringify({ format: 'retrysim.scenario/2', name: 'one', seed: 1, service: { module: 'null-tenant' }, client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }], expect: {} }));
    const e = await runScenario(s, { service: withOwner }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as Error).message).toMatch(/effects\.owner must return \{ runId, tenant \} \(strings\) or undefined when no effect has the id, got \{.*"tenant":null.*\} for id 1/);
  });
});
