import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { ListChoice } from '../sim/choice/list.js';
import type { ServiceDefinition } from './definition.js';
import { ServiceError } from './errors.js';
import { loadService } from './load.js';
import * as broken from './fixtures/broken.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

function scenario(def: ServiceDefinition, workers = 1) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'x', seed: 1, service: { module: def.name },
    client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers }], expect: {},
  }));
}

async function problem(def: ServiceDefinition, workers = 1): Promise<string> {
  try {
    await runScenario(scenario(def, workers), { service: def, choices: new ListChoice([]) });
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return (e as Error).message;
  }
  return 'no error';
}

describe('a broken user service gets one clear sentence naming the problem', () => {
  it('a correct service runs (the fixtures differ from it by one mistake each)', async () => {
    const r = await runScenario(scenario(broken.fine), { service: broken.fine, choices: new ListChoice([]) });
    expect(r.violations).toEqual([]);
    expect(r.reports).toEqual({ op1: 1 });
  });

  it('a handler that throws answers 500, the run goes on, and the exception is one trace line (name: message (at file:line))', async () => {
    const r = await runScenario(scenario(broken.throws), { service: broken.throws, choices: new ListChoice([]), keepTrace: true });
    const threw = r.trace.filter((l) => l.includes('threw TypeError'));
    expect(threw.length).toBeGreaterThan(0);
    expect(threw[0]).toMatch(/threw TypeError: Cannot read properties of undefined \(reading 'id'\) \(at .*broken\.ts:\d+:\d+\)?\)/);
    expect(r.trace.some((l) => /answer 500/.test(l))).toBe(true);
    // Judged, not thrown: the client retried, every answer was a 500, nothing was written.
    expect(r.reports).toEqual({ op1: 0 });
    expect(threw.length).toBe(r.trace.filter((l) => /answer 500/.test(l)).length);
  });

  it('a handler that awaits something outside the simulation never answers', async () => {
    expect(await problem(broken.foreignPromise)).toMatch(/^service 'foreign-promise': never answered request s0\/op1\.w0#1: the handler awaited something outside the simulation/);
  });

  it('a handler that busy-waits on the clock stops in one line naming the request and step, after a bounded number of reads', async () => {
    const m = await problem(broken.dateSpin);
    expect(m).toMatch(/^service 'date-spin': request s0\/op1\.w0#1 \(POST \/items, after step 'write'\) busy-waits on the clock: read it 1,000,001 times while virtual time stood still/);
    expect(globalThis.Date.now()).toBeGreaterThan(1.7e12); // real-time: allowed (the fakes were released)
  });

  it('a handler that waits on a deferred nobody resolves', async () => {
    expect(await problem(broken.neverResolves)).toMatch(/^service 'never-resolves': never answered requests s0\/op1\.w0#1, s0\/op1\.w0#2, .*: the handler waits on something nothing in the simulation settles \(a sim\.defer\(\) nobody resolves, /);
  });

  it('a header HTTP cannot carry (real mode would drop the connection after the commit)', async () => {
    expect(await problem(broken.badHeader)).toMatch(/^service 'bad-header': handle answered POST \/items with header "location": "\/items\/1\/€" that HTTP cannot carry \(Invalid character in header content \["location"\]\)/);
  });

  it('a step that is not declared', async () => {
    expect(await problem(broken.undeclaredStep)).toBe("service 'undeclared-step': handle called sim.step('validate'), which is not declared in steps [write]; declare every interleaving point");
  });

  it('a table outside the declared ones, at setup or at run time', async () => {
    expect(await problem(broken.extraTable)).toMatch(/^service 'extra-table': writes outside its declared tables: setup created 'audit'/);
    expect(await problem(broken.createsTable)).toMatch(/^service 'creates-table': writes outside its declared tables: request POST \/items created 'audit'/);
  });

  it('a step inside an open transaction, and an answer that is not { status, body: string }', async () => {
    expect(await problem(broken.stepInTransaction)).toMatch(/sim\.step\('write'\) was called inside an open transaction/);
    expect(await problem(broken.badAnswer)).toMatch(/handle answered POST \/items with a body of type object \(it must be a string: JSON\.stringify it\)/);
    // A number, as node:http's setHeader takes it: the line says what to write instead.
    expect(await problem(broken.numberHeader)).toMatch(/handle answered POST \/items with header 'retry-after' of type number \(header values are strings: 'retry-after': '3'\); return \{ status, headers\?, body \}$/);
    // Bytes are named as bytes, with the way to a string (they read as "type object" before).
    expect(await problem(broken.bytesAnswer)).toMatch(/handle answered POST \/items with a body of bytes \(a Buffer; it must be a string: decode it, e\.g\. new TextDecoder\(\)\.decode\(body\)\)/);
  });

  it('a wait inside an open transaction names the request that holds it open, not the next request to reach a step', async () => {
    // Alone, it ran and answered; with a twin, the twin's sim.step was blamed for a transaction it never opened.
    const alone = await problem(broken.awaitInTransaction);
    expect(alone).toBe("service 'await-in-transaction': request s0/op1.w0#1 (POST /items, after step 'write') awaited a timer of its own (20 ms) inside an open transaction; other requests on the connection would run their SQL inside it: commit or roll back before waiting");
    // Two at once: the one holding it (whichever the schedule let in first) is named at its wait, before the other reaches a step.
    expect(await problem(broken.awaitInTransaction, 2)).toBe(alone.replace('w0#1', 'w1#2'));
    expect(await problem(broken.sleepInTransaction)).toMatch(/^service 'sleep-in-transaction': request s0\/op1\.w0#1 \(POST \/items, after step 'write'\) called sim\.sleep\(5\) inside an open transaction; /);
  });

  it('an operation.body that returns an object, not text: one sentence naming the service once', async () => {
    const def: ServiceDefinition = { ...broken.fine, name: 'body-object', operation: { ...broken.fine.operation, body: (op) => ({ run: op.runId }) as never } };
    const m = await problem(def);
    expect(m).toBe("service 'body-object': operation.body must return the body text (a string), got object");
  });

  it('an async memory(): one sentence saying memory() returned a Promise, not the handler\'s TypeError on it', async () => {
    // Until 2026-12 every request answered 500 ("Cannot read properties of undefined") and check said inconclusive.
    const asyncMemory = { ...broken.fine, name: 'async-memory', memory: async () => ({ seen: new Map<string, string>() }) } as unknown as ServiceDefinition;
    expect(await problem(asyncMemory)).toMatch(/^service 'async-memory': memory\(\) returned a Promise \(an async function\): it runs synchronously as each simulated process starts, and what it returns is sim\.memory/);
  });

  it('a module that is not a service: the missing field, by path', async () => {
    const dir = tmp('svc-');
    const f = join(dir, 'svc.mjs');
    writeFileSync(f, "export default { name: 'half', tables: ['t'], setup() {}, handle() {}, operation: { path: '/x', body() {} }, effects: { of() {} } };");
    await expect(loadService(f)).rejects.toThrow(`service 'half': ${f}: steps: `);
    // A field left out is "missing", not zod's "Invalid input: … received undefined".
    writeFileSync(join(dir, 'nosteps.mjs'), "export default { name: 'nosteps', tables: ['t'], setup() {}, handle() {}, operation: { path: '/x', body() {} }, effects: { of() {} } , steps: undefined };");
    await expect(loadService(join(dir, 'nosteps.mjs'))).rejects.toThrow(`service 'nosteps': ${join(dir, 'nosteps.mjs')}: steps: missing (expected array)`);
    // A CommonJS module.exports of helpers (the factory not called) is named as what it is, its path said once.
    const cjs = join(dir, 'helpers.cjs');
    writeFileSync(cjs, 'module.exports = { makeService: (scoped) => ({ scoped }) };');
    const m = await loadService(cjs).then(() => 'loaded', (e: Error) => e.message);
    expect(m).toBe(`service '${cjs}': the default export (module.exports in CommonJS) is not a service definition but an object of makeService; export { name, tables, setup, steps, handle, operation, effects } (an app: { name, app, operation, effects })`);
    await expect(loadService(join(dir, 'missing.ts'))).rejects.toThrow(/cannot load: no such file/);
    writeFileSync(join(dir, 'syntax.ts'), 'export default {');
    await expect(loadService(join(dir, 'syntax.ts'))).rejects.toThrow(/cannot load: /);
  });
});
