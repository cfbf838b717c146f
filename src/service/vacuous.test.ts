import { readFileSync, writeFileSync } from 'node:fs';
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

  it('quotes the first answer of a service that catches its own error and answers with it (an app\'s `catch (e) { res.status(500).json({ error: String(e) }) }`); the same with a typo-free INSERT holds', async () => {
    const catching = (column: string, pad = ''): ServiceDefinition => {
      const inner = bookings(column);
      return { ...inner, async handle(req, sim) {
        try {
          return await inner.handle(req, sim);
        } catch (e) {
          // With a pad, a plain-text page of many lines (a framework's default error page), else JSON.
          return { status: 500, body: pad === '' ? JSON.stringify({ error: String(e) }) : `${String(e)}${pad}` };
        }
      } };
    };
    const r = await runServiceCampaign({ def: catching('kee'), module: 'bookings', runs: 30, seed: 1 });
    expect(r.verdict).toBe('inconclusive');
    expect(r.inconclusive).toContain('(answers: 500); the first answered 500 {"error":"SqliteError: table bookings has no column named kee"}, and a service that does nothing');
    // One line, at most 200 characters of it.
    const long = await runServiceCampaign({ def: catching('kee', ' and\n' + 'x'.repeat(300)), module: 'bookings', runs: 10, seed: 1 });
    expect(long.inconclusive).toMatch(/; the first answered 500 SqliteError: table bookings has no column named kee and x+…, and a service/);
    expect(long.inconclusive!.split('the first answered ')[1]!.split(', and a service')[0]!.length).toBe(200 + '500 '.length);
    expect((await runServiceCampaign({ def: catching('key'), module: 'bookings', runs: 30, seed: 1 })).verdict).toBe('holds');
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

  it('check --service --html: the index says why it is inconclusive, as the text does (it showed a ? alone)', async () => {
    const dir = tmp('rs-vacuous-html-');
    const file = join(dir, 'bookings.mjs');
    writeFileSync(file, `export default (${bookings.toString()})('kee');\n`);
    const r = await runMain(['check', '--service', file, '--runs', '30', '--found', dir, '--html', join(dir, 'pages')]);
    expect(r.code, r.err).toBe(4);
    const page = readFileSync(join(dir, 'pages', 'index.html'), 'utf8');
    expect(page).toContain('<div class="reasons"><p>? inconclusive: no request of the 30 runs was answered 2xx or made a booking (answers: 500); its handler threw SqliteError: table bookings has no column named kee');
  });
});
