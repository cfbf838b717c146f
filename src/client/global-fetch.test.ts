// A client's code calls the global fetch (a module-level ky or p-retry
// wrapper does), not the fetch run(fetch, op) hands it: for the simulated
// service's origin it is the calling operation's simulated fetch — known
// through the code's awaits and its timer callbacks — and anything else is
// still refused, as a request leaving the simulation. Until 2026-12 every
// such client was refused outright ("it called the global fetch").
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const MODULE = 'src/client/fixtures/global-fetch-callbacks.ts';

describe('check --client on a client that calls the global fetch', () => {
  it('the correct one holds: every request reaches the simulation as its own operation\'s (two operations at once, retries armed by setTimeout callbacks)', async () => {
    const r = await runMain(['check', '--client', MODULE, '--runs', '150', '--expect', 'holds', '--json', '--found', tmp('rs-gfetch-')]);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; runs: number };
    expect(j).toMatchObject({ verdict: 'holds', runs: 150 });
  }, 120_000);

  it('the one that makes a new key per attempt fails stable-key, shrunk, and replays', async () => {
    const dir = tmp('rs-gfetch-');
    const r = await runMain(['check', '--client', MODULE, '--name', 'global-fetch-key-per-attempt', '--runs', '150', '--json', '--found', dir]);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; violations: string[]; counterexample: string };
    expect(j.verdict).toBe('fails');
    expect(j.violations).toEqual(['stable-key']);
    const replay = await runMain(['replay', '--client', MODULE, j.counterexample, '--json']);
    expect(replay.code, replay.err).toBe(0);
  }, 120_000);

  it('a client that took the global fetch when its module loaded (fetch-retry\'s `require(\'fetch-retry\')(fetch)`) holds: its requests reach the simulation too', async () => {
    // Until 2026-12 that reference was the real fetch: requests to http://service.sim went to the real
    // resolver and failed in real time, so this correct client failed `progress` or was refused as stuck.
    const r = await runMain(['check', '--client', 'src/client/fixtures/fetch-taken-at-load.cjs', '--runs', '60', '--expect', 'holds', '--json', '--found', tmp('rs-gfetch-')]);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; coverage: { rows: Array<{ id: string; runs: number }> } };
    expect(j.verdict).toBe('holds');
    expect(j.coverage.rows.find((x) => x.id === 'client:succeeded')?.runs).toBeGreaterThan(0);
  }, 120_000);

  it('a client whose library sends through node:http (axios\'s default adapter) is refused in one line saying so, exit 2, and writes no counterexample', async () => {
    // Until 2026-12 its requests went to the real resolver for service.sim, and it "failed progress" with a file about DNS.
    const dir = tmp('rs-nodehttp-');
    const r = await runMain(['check', '--client', 'src/client/fixtures/node-http-client.ts', '--runs', '20', '--found', dir]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      "retrysim check: client module 'node-http-client': it sent POST http://service.sim/reports through Node's http module (axios's default adapter in Node, got, node-fetch), which the simulation does not carry: only fetch reaches the simulated service (the fetch run(fetch, op) is handed or the global one; axios: adapter: 'fetch')",
    ]);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it('a client holding Node\'s own fetch (taken before retrysim loaded) is named in one line that says how to import, exit 2, and writes no counterexample', async () => {
    const dir = tmp('rs-ownfetch-');
    const r = await runMain(['check', '--client', 'src/client/fixtures/node-own-fetch.ts', '--runs', '10', '--found', dir]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      "retrysim check: client module 'node-own-fetch': it sent POST http://service.sim/reports through undici — the undici package's fetch or request, or Node's own fetch held from before retrysim was loaded — which the simulation does not carry: only the fetch run(fetch, op) is handed, or the global fetch, reaches the simulated service (in a vitest file, import retrysim/vitest before the client's module)",
    ]);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it('a request to another host still leaves the simulation: one line, exit 2', async () => {
    const dir = tmp('rs-gfetch-');
    const { writeFileSync } = await import('node:fs');
    const file = `${dir}/elsewhere.mjs`;
    writeFileSync(file, `export default { name: 'elsewhere', deadlineMs: 5000, async run(_f, op) { await fetch('https://api.example.com/v1/orders', { method: 'POST', body: op.body }); } };\n`);
    const r = await runMain(['check', '--client', file, '--runs', '5', '--found', dir]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/it called the global fetch \(POST https:\/\/api\.example\.com\/v1\/orders\), which would leave the simulation/);
  }, 60_000);
});
