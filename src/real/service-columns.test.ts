// Conformance's columns send the service's operation in the service's own
// words, as check --service does. They sent a payment's ('Pay order 1',
// module 'shop') whatever the service: found from the packed tarball with a
// refunds service that validates its note as "refund <n>" — every request
// of every column answered 500 in both worlds, and conformance said "No
// differences" while check --service found it working.
import { describe, expect, it } from 'vitest';
import { serviceColumns } from './service-conformance.js';
import { serviceIntent } from '../scenario/arbitraries.js';
import type { ServiceDefinition } from '../service/definition.js';

const refunds: ServiceDefinition = {
  name: 'refunds',
  tables: ['refunds'],
  setup: (db) => db.exec('CREATE TABLE refunds (id INTEGER PRIMARY KEY, ref TEXT, tenant TEXT)'),
  steps: ['write'],
  operation: { path: '/refunds', body: (op) => JSON.stringify({ ref: op.runId, note: op.title }) },
  effects: { noun: 'refund', of: () => [] },
  handle: async () => ({ status: 201, body: '{}' }),
};

describe('conformance columns speak the service\'s words', () => {
  it('every column sends the operation check --service generates first: run-1, "<noun> 1"', () => {
    const cols = serviceColumns(refunds, './refunds.mjs');
    expect(cols.length).toBeGreaterThan(5);
    for (const c of cols) {
      for (const op of c.scenario.operations) {
        expect({ runId: op.runId, module: op.module, title: op.title }).toEqual({ runId: 'run-1', module: 'refund', title: 'refund 1' });
      }
    }
    expect(serviceIntent('refund', 1).title).toBe('refund 1');
  });

  it('a service without a noun gets the default one', () => {
    const cols = serviceColumns({ ...refunds, effects: { of: () => [] } }, './refunds.mjs');
    expect(cols[0]!.scenario.operations[0]!.title).toBe('effect 1');
  });
});

describe('a service that reads no key (operation.readsKey: false) gets no key_reuse column', () => {
  it('as check leaves its key-reuse probe out: a PUT by its URL makes no promise about a key sent again', () => {
    const byUrl: ServiceDefinition = { ...refunds, operation: { ...refunds.operation, method: 'PUT', path: (op) => `/refunds/${op.runId}`, readsKey: false } };
    expect(serviceColumns(refunds, './refunds.mjs').map((c) => c.name)).toContain('key_reuse');
    expect(serviceColumns(byUrl, './refunds.mjs').map((c) => c.name)).not.toContain('key_reuse');
  });
});

describe('a service with a step named answer', () => {
  it('keeps its kill_at:answer step column; the kill as the answer leaves is kill_at:answer-leaves, so no two columns share a name', () => {
    // Found from the packed tarball: an lru-cache service with steps insert, answer printed two kill_at:answer rows.
    const names = serviceColumns({ ...refunds, steps: ['insert', 'answer'] }, './refunds.mjs').map((c) => c.name);
    expect(names.filter((n) => n.startsWith('kill_at:'))).toEqual(['kill_at:insert', 'kill_at:answer', 'kill_at:answer-leaves']);
    expect(new Set(names).size).toBe(names.length);
    expect(serviceColumns(refunds, './refunds.mjs').map((c) => c.name)).toContain('kill_at:answer');
  });
});
