import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServiceDefinition } from './definition.js';
import { runServiceCampaign } from './campaign.js';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

/**
 * A booking service; `column` is the column its INSERT names. With a typo
 * there, every POST throws (SqliteError) and answers 500: nothing is ever
 * written, so exactly-one, id-exists, tenant isolation and the key-reuse
 * probe all hold — about code that never did its work.
 */
function bookings(column: string): ServiceDefinition {
  return {
    name: 'bookings',
    tables: ['bookings'],
    setup: (db) => db.exec('CREATE TABLE bookings (id INTEGER PRIMARY KEY, ref TEXT NOT NULL, tenant TEXT NOT NULL, body TEXT NOT NULL, key TEXT UNIQUE)'),
    steps: ['book'],
    operation: { path: '/bookings', body: (op) => JSON.stringify({ ref: op.runId, seat: op.title }) },
    effects: { noun: 'booking', of: (db, op) => db.prepare('SELECT id FROM bookings WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
    async handle(req, sim) {
      await sim.step('book');
      const tenant = req.headers['x-tenant'] ?? 'default';
      const key = req.headers['idempotency-key'] === undefined ? null : `${tenant}/${req.headers['idempotency-key']}`;
      const prior = key === null ? undefined : (sim.db.prepare('SELECT id, body FROM bookings WHERE key = ?').get(key) as { id: number; body: string } | undefined);
      if (prior !== undefined) return prior.body === req.body ? { status: 201, body: JSON.stringify({ id: prior.id }) } : { status: 422, body: '{"error":"key reused"}' };
      const ref = (JSON.parse(req.body) as { ref: string }).ref;
      const id = Number(sim.db.prepare(`INSERT INTO bookings (ref, tenant, body, ${column}) VALUES (?, ?, ?, ?)`).run(ref, tenant, req.body, key).lastInsertRowid);
      return { status: 201, body: JSON.stringify({ id }) };
    },
  };
}

describe('a campaign in which the service never answered a success', () => {
  it('is inconclusive, not holds: no request of any run was answered 2xx, and the reason names the answers it got', async () => {
    const r = await runServiceCampaign({ def: bookings('kee'), module: 'bookings', runs: 30, seed: 1 });
    expect(r.verdict).toBe('inconclusive');
    expect(r.inconclusive).toMatch(/^no request of the 30 runs was answered 2xx or made a booking \(answers: 500\)/);
    const ex = await runServiceCampaign({ def: bookings('kee'), module: 'bookings', runs: 100, seed: 1, explore: 'exhaustive' });
    expect(ex.verdict).toBe('inconclusive');
    expect(ex.inconclusive).toMatch(/^no request of the \d+ runs was answered 2xx or made a booking/);
  });

  it('names the exception the handler threw, where it threw it: "answers: 500" alone sent the reader off to serve the service by hand', async () => {
    const r = await runServiceCampaign({ def: bookings('kee'), module: 'bookings', runs: 30, seed: 1 });
    expect(r.inconclusive).toContain('(answers: 500); its handler threw SqliteError: table bookings has no column named kee, and a service that does nothing');
    const ex = await runServiceCampaign({ def: bookings('kee'), module: 'bookings', runs: 100, seed: 1, explore: 'exhaustive' });
    expect(ex.inconclusive).toContain('; its handler threw SqliteError: table bookings has no column named kee');
  });

  it('the same service without the typo holds (the canary: the verdict is about the service never succeeding)', async () => {
    expect((await runServiceCampaign({ def: bookings('key'), module: 'bookings', runs: 30, seed: 1 })).verdict).toBe('holds');
  });

  it('check --service: a ? row, exit 4, and --json says why', async () => {
    const dir = tmp('rs-vacuous-');
    const file = join(dir, 'bookings.mjs');
    writeFileSync(file, `export default (${bookings.toString()})('kee');\n`);
    const text = await runMain(['check', '--service', file, '--runs', '30', '--found', dir]);
    expect(text.code, text.err).toBe(4);
    expect(text.out).toMatch(/│ \? │ bookings \/ one key per operation .* inconclusive/);
    expect(text.out).toMatch(/^\? inconclusive: no request of the 30 runs was answered 2xx or made a booking \(answers: 500\)/m);
    expect(text.out).not.toContain('to conclude: raise the schedule limit');
    const json = await runMain(['check', '--service', file, '--runs', '30', '--found', dir, '--json']);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.out)).toMatchObject({ verdict: 'inconclusive', ok: false });
  });
});
