/**
 * `operation.headers(op)`: headers of the service's own on every request of
 * an operation — the credentials an authenticated endpoint asks for. Until
 * 2026-12 the campaign sent only content-type, the key and the tenant, so a
 * service (or an unmodified app) behind authentication answered every
 * request 401 and a campaign could only say inconclusive.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { runClientCampaign } from '../client/campaign.js';
import { opRetryClient } from '../client/fixtures/op-retry-client.js';
import authed from './fixtures/authed-orders.js';

const tmp = tempDirs();
const cli = (...args: string[]) => runMain(args);
const SERVICE = 'src/service/fixtures/authed-orders.ts';

/** A retrying client that sends what the operation gives it (its headers included, or only the key and the tenant). */
const client = (sendsOpHeaders: boolean) => opRetryClient(sendsOpHeaders ? 'with-op-headers' : 'without-op-headers', sendsOpHeaders ? undefined
  : (op, key) => ({ 'content-type': 'application/json', 'idempotency-key': key, ...(op.headers['x-tenant'] ? { 'x-tenant': op.headers['x-tenant'] } : {}) }));

describe('operation.headers: the credentials of an authenticated endpoint', () => {
  it('check --service: the authenticated service holds (every request carries its tenant\'s token); its split-key variant fails exactly-one and replays', async () => {
    const found = tmp('rs-auth-found-');
    const ok = await cli('check', '--service', SERVICE, '--runs', '300', '--found', found, '--json');
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ verdict: 'holds' });
    const bad = await cli('check', '--service', 'src/service/fixtures/authed-orders-split.ts', '--runs', '300', '--found', found, '--json');
    expect(bad.code, bad.err).toBe(1);
    const j = JSON.parse(bad.out) as { violations: string[]; counterexample: string };
    expect(j.violations).toContain('exactly-one');
    expect((await cli('replay', j.counterexample)).code).toBe(0);
  }, 180_000);

  it('check --client: op.headers carries them, so a client sending op.headers holds; one that drops them is told 401 and is inconclusive', async () => {
    const holds = await runClientCampaign({ client: client(true), service: authed, runs: 200, seed: 1 });
    expect(holds.verdict, JSON.stringify(holds.counterexample?.violations)).toBe('holds');
    const dropped = await runClientCampaign({ client: client(false), service: authed, runs: 20, seed: 1 });
    expect(dropped.verdict).toBe('inconclusive');
    expect(dropped.inconclusive).toMatch(/→ 401 \{"error":"unauthorized"\}/);
  }, 180_000);

  it('headers that are not an object of strings, not header names, or the campaign\'s own: one line naming operation.headers, exit 2', async () => {
    const dir = tmp('rs-auth-bad-');
    const cases: Array<[string, RegExp]> = [
      ['() => "Bearer x"', /operation\.headers must return an object of header names to string values, got string$/],
      ['() => ({ authorization: 42 })', /operation\.headers: header 'authorization' of type number \(header values are strings\)$/],
      ['() => ({ "bad name": "x" })', /operation\.headers: "bad name" is not a header name$/],
      ['() => ({ "Idempotency-Key": "mine" })', /operation\.headers: 'idempotency-key' is the campaign's own header .*; leave it out$/],
      ['() => ({ authorization: "a\\nb" })', /operation\.headers: header 'authorization' has a value HTTP cannot carry \(a line break, a control character, or a character outside Latin-1\)$/],
      ['() => ({ authorization: "Bearer €" })', /operation\.headers: header 'authorization' has a value HTTP cannot carry/],
    ];
    for (const [i, [fn, message]] of cases.entries()) {
      const f = `${dir}/bad-${i}.ts`;
      writeFileSync(f, `import authed from '${process.cwd()}/src/service/fixtures/authed-orders.ts';\nexport default { ...authed, operation: { ...authed.operation, headers: ${fn} } };\n`);
      const r = await cli('check', '--service', f, '--runs', '5');
      expect(r.code, `${fn}: ${r.err}`).toBe(2);
      expect(r.err.trim().split('\n'), fn).toHaveLength(1);
      expect(r.err.trim(), fn).toMatch(message);
    }
  }, 120_000);
});
