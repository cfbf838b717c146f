// An app factory that also listens on a real port. Found from the packed
// tarball: `createApp()` ending in `app.listen(3457)` made `check --app`
// bind the port from inside the simulation, and the second simulated
// process died of EADDRINUSE as an unhandled 'error' event: Node's stack,
// exit 1. Fastify's `await app.listen({ port })` read "never answered POST
// /orders: the app waits on … real I/O" (exit 2), which names the wrong
// thing. Now the factory's listen() is refused in one line naming it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PORT } from './fixtures/listening-factory-app.js';

const bin = fileURLToPath(new URL('../../bin/retrysim.js', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/listening-factory-app.ts', import.meta.url));

describe('a hosted app whose factory listens on a real port', () => {
  it('check --app: one line naming the listen() and where, exit 2, no stack', () => {
    const p = spawnSync(process.execPath, [bin, 'check', '--app', fixture, '--runs', '10', '--faults', 'instances,kill,loseResponse', '--found', fileURLToPath(new URL('../../.retrysim/test-no-listen', import.meta.url))], { encoding: 'utf8', timeout: 120_000 });
    expect(p.stderr.trim()).toMatch(new RegExp(`^retrysim check: app 'listening-factory-app': app\\(\\{ redis \\}\\) called listen\\(${PORT}\\) on a real server: retrysim delivers each request to the listener app\\(\\) returns, .* call listen\\(\\) in your server's entry point \\(at .*listening-factory-app\\.ts:\\d+:\\d+\\)+$`));
    expect(p.status).toBe(2);
  }, 120_000);
});
