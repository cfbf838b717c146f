/**
 * An operation whose URL names its resource: `operation.path` as a function
 * of the operation (`(op) => '/orders/' + op.runId`, a PUT idempotent by its
 * URL, a POST under a parent). Until 2026-12 the path was one string for
 * every operation: such a service could not be described at all (its
 * definition was refused), and a service declaring `method: 'PUT'` had its
 * requests drawn as "POST" on its stepper page.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { attemptsByOperation } from '../client/run.js';
import { opRetryClient } from '../client/fixtures/op-retry-client.js';
import { runClientCampaign } from '../client/campaign.js';
import { endpointOf } from './run.js';
import putByUrl, { anyRef } from './fixtures/put-by-url.js';
import type { SentRequest } from '../client/sim-fetch.js';
import type { ServiceDefinition } from './definition.js';

const tmp = tempDirs();
const cli = (...args: string[]) => runMain(args);
const SERVICE = 'src/service/fixtures/put-by-url.ts';
// It reads no Idempotency-Key (its URL is the key), so the key-reuse probe does not apply to it.
const NO_PROBE = 'loseResponse,slow,concurrency,kill,pause,clockOffset,instances,loseAllAnswers,tenants,longSpans,threeWorkers';

/** A retrying client that PUTs to the operation's own URL with what the operation gives it. */
const putClient = opRetryClient('put-client');

describe('operation.path as a function of the operation (a URL naming its resource)', () => {
  it('check --service: the correct PUT-by-URL service holds; written check-then-insert it fails exactly-one, its file replays, and its page draws PUT /orders/run-1', async () => {
    const found = tmp('rs-put-found-');
    const ok = await cli('check', '--service', SERVICE, '--runs', '300', '--faults', NO_PROBE, '--found', found, '--json');
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ verdict: 'holds' });

    const racy = await cli('check', '--service', 'src/service/fixtures/put-by-url-racy.ts', '--runs', '300', '--faults', NO_PROBE, '--found', found, '--json');
    expect(racy.code, racy.err).toBe(1);
    const j = JSON.parse(racy.out) as { verdict: string; violations: string[]; counterexample: string };
    expect(j.violations).toContain('exactly-one');
    const trace = await cli('replay', j.counterexample, '--trace');
    expect(trace.code, trace.err).toBe(0);
    const page = `${tmp('rs-put-page-')}/page.html`;
    expect((await cli('replay', j.counterexample, '--html', page)).code).toBe(0);
    const data = JSON.parse(/<script type="application\/json" id="retrysim-data">(.*?)<\/script>/s.exec(readFileSync(page, 'utf8'))![1]!) as { steps: Array<{ kind: string; text: string }> };
    const requests = data.steps.filter((s) => s.kind === 'request').map((s) => s.text);
    expect(requests.length).toBeGreaterThan(1);
    for (const r of requests) expect(r).toMatch(/^#\d+ PUT \/orders\/run-1 → s\d/);
  }, 180_000);

  it('the client sends each operation to its own URL; a request to another operation\'s URL is not its attempt', () => {
    const endpoint = endpointOf(putByUrl);
    const ops = [{ id: 'op1', runId: 'run-1' }, { id: 'op2', runId: 'run-2' }].map((o) => ({ ...o, module: 'm', title: 't', steps: 's' })) as Parameters<typeof attemptsByOperation>[1];
    const attempts = attemptsByOperation(endpoint, ops);
    const req = (method: string, path: string) => ({ method, path }) as SentRequest;
    expect(attempts.get('op1')!(req('PUT', '/orders/run-1'))).toBe(true);
    expect(attempts.get('op1')!(req('PUT', '/orders/run-1?source=web'))).toBe(true);
    expect(attempts.get('op1')!(req('PUT', '/orders/run-2'))).toBe(false);
    expect(attempts.get('op1')!(req('GET', '/orders/run-1'))).toBe(false);
    expect(attempts.get('op2')!(req('PUT', '/orders/run-2'))).toBe(true);
    expect(attempts.get('op2')!(req('PUT', '/orders/run-1'))).toBe(false);
    // A path with a query string of its own: its requests are its attempts, with or without the query.
    const withQuery = attemptsByOperation({ ...endpoint, path: (i) => `/orders/${i.runId}?source=test` }, ops);
    expect(withQuery.get('op1')!(req('PUT', '/orders/run-1?source=test'))).toBe(true);
    expect(withQuery.get('op1')!(req('PUT', '/orders/run-1'))).toBe(true);
    expect(withQuery.get('op1')!(req('PUT', '/orders/run-2?source=test'))).toBe(false);
  });

  it('check --client: a correct client holds against it; against a service answering another operation\'s order it fails exactly-one, each request at its own operation\'s URL', async () => {
    const holds = await runClientCampaign({ client: putClient, service: putByUrl, runs: 200, seed: 1 });
    expect(holds.verdict, JSON.stringify(holds.counterexample?.violations)).toBe('holds');
    const fails = await runClientCampaign({ client: putClient, service: anyRef, runs: 300, seed: 1 });
    expect(fails.verdict).toBe('fails');
    const c = fails.counterexample!;
    expect(c.violations.find((v) => v.invariant === 'exactly-one')?.detail).toMatch(/handed order \d+, another operation's/);
    const sent = c.run.workers.flatMap((w) => w.sent.map((r) => `${w.operation} ${r.method} ${r.path}`));
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const line of sent) expect(line).toMatch(/^op(\d+) PUT \/orders\/run-\1$/);
    // The same with a query string in the operation's path: still each operation's attempts (until 2026-12 a
    // path with a query of its own matched no request, and this campaign held).
    const withQuery = { ...anyRef, operation: { ...anyRef.operation, path: (op: { runId: string }) => `/orders/${op.runId}?source=test` } };
    const q = await runClientCampaign({ client: putClient, service: withQuery, runs: 300, seed: 1 });
    expect(q.verdict).toBe('fails');
    expect(q.counterexample!.violations.find((v) => v.invariant === 'exactly-one')?.detail).toMatch(/handed order \d+, another operation's/);
  }, 180_000);

  it('a path function returning no path, or a path that is neither a string nor a function: one line naming operation.path, exit 2', async () => {
    const dir = tmp('rs-put-bad-');
    const { writeFileSync } = await import('node:fs');
    const base = readFileSync(SERVICE, 'utf8').replace("from '../definition.js'", `from '${process.cwd()}/src/service/definition.js'`);
    const bad = (name: string, path: string) => {
      const f = `${dir}/${name}.ts`;
      writeFileSync(f, base.replace('path: (op) => `/orders/${encodeURIComponent(op.runId)}`,', `path: ${path},`));
      return f;
    };
    const noSlash = await cli('check', '--service', bad('no-slash', '(op) => `orders/${op.runId}`'), '--runs', '5');
    expect(noSlash.code).toBe(2);
    expect(noSlash.err.trim().split('\n')).toHaveLength(1);
    expect(noSlash.err).toContain(`operation.path must return the path of the operation (a string starting with '/'), got "orders/run-1"`);
    const notString = await cli('check', '--service', bad('number', '() => 42'), '--runs', '5');
    expect(notString.code).toBe(2);
    expect(notString.err).toContain('operation.path must return the path of the operation (a string starting with \'/\'), got number');
    const throws = await cli('check', '--service', bad('throws', '(op) => op.missing.id'), '--runs', '5');
    expect(throws.code).toBe(2);
    expect(throws.err).toMatch(/operation\.path threw TypeError/);
    const neither = await cli('check', '--service', bad('neither', '42 as unknown as string'), '--runs', '5');
    expect(neither.code).toBe(2);
    expect(neither.err).toMatch(/operation\.path: path must be a string starting with '\/' or a function \(op\) => path/);
  }, 120_000);
});

// Type-level: a definition may give either form.
const _forms: Array<ServiceDefinition['operation']['path']> = ['/orders', (op) => `/orders/${op.runId}`];
void _forms;
