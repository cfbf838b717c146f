import { describe, expect, it } from 'vitest';
import { fc, clientCases, explainClient, replayable, runClientCase, runServiceCase, serviceCases } from './vitest.js';
import * as clientModule from '../examples/fetch-retry-client/client.js';
import * as serviceModule from '../examples/two-transactions/service.js';
import twoTransactions from '../examples/two-transactions/service.js';
import { buggyClient } from '../examples/fetch-retry-client/client.js';

// Every bad option is one line naming the helper, the option, what it got and what it takes (src/vitest-options.ts).
const refused = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TypeError);
    const m = (e as Error).message;
    expect(m).not.toContain('\n');
    return m;
  }
  throw new Error('expected the call to be refused');
};

describe('the vitest helper checks its options', () => {
  const def = Object.create(twoTransactions) as typeof twoTransactions;

  it('serviceCases: faults must be an array of the service\'s fault names (not per-fault switches, not the CLI\'s string)', () => {
    expect(refused(() => serviceCases(def, { faults: { keyReuseProbe: false } } as never))).toBe(
      'retrysim: serviceCases(two-transactions): option \'faults\' must be an array of fault names ([\'loseResponse\', \'kill\']: the faults to generate; leave it out for all), got {"keyReuseProbe":false}',
    );
    expect(refused(() => serviceCases(def, { faults: 'kill,pause' } as never))).toContain('option \'faults\' must be an array of fault names');
    expect(refused(() => serviceCases(def, { faults: ['kill', 'teleport'] } as never))).toBe(
      `retrysim: serviceCases(two-transactions): option 'faults' has unknown fault 'teleport'; valid for service two-transactions: loseResponse, crash, slow, concurrency, kill, pause, clockOffset, instances, loseAllAnswers, tenants, keyReuseProbe, longSpans, threeWorkers`,
    );
    expect(refused(() => serviceCases(def, { faults: [3] } as never))).toContain('must hold fault names (strings), got 3 in [3]');
  });

  it('serviceCases: an unknown option (a typo, or one of fast-check\'s) and a wrong key source are refused, not dropped', () => {
    expect(refused(() => serviceCases(def, { keysource: 'business' } as never))).toBe("retrysim: serviceCases(two-transactions): unknown option 'keysource'; its options are module, keySource, faults");
    expect(refused(() => serviceCases(def, { numRuns: 50 } as never))).toContain("unknown option 'numRuns' (numRuns is fast-check's: it goes in test.prop's parameters");
    expect(refused(() => serviceCases(def, { keySource: 'per-attempt' } as never))).toBe("retrysim: serviceCases(two-transactions): option 'keySource' must be one of none, per_attempt, tool_call, business, got \"per-attempt\"");
    expect(refused(() => serviceCases(def, { module: 42 } as never))).toContain("option 'module' must be a path or a file URL");
    expect(refused(() => serviceCases(def, 'service.ts' as never))).toContain('its options must be an object ({ module, keySource, faults }), got "service.ts"');
  });

  it('valid options pass, and generate what they say', () => {
    const [c] = fc.sample(serviceCases(def, { module: 'examples/two-transactions/service.ts', keySource: 'business', faults: ['kill'] }), { seed: 1, numRuns: 1 });
    expect(c!.scenario.service?.module).toBe('examples/two-transactions/service.ts');
    expect(c!.scenario.client.keySource).toBe('business');
    const cases = fc.sample(serviceCases(def, { faults: ['kill'] }), { seed: 1, numRuns: 50 });
    expect(cases.every((x) => x.scenario.network.loseResponses === 0 && x.scenario.faults.slowMs === 0)).toBe(true);
    expect(cases.some((x) => x.scenario.faults.kill !== undefined)).toBe(true);
    expect(() => replayable(def, { foundDir: '.retrysim/found', shrinkBudgetMs: 60_000 })).not.toThrow();
    expect(() => explainClient(buggyClient, { module: new URL('../examples/fetch-retry-client/client.ts', import.meta.url) })).not.toThrow();
  });

  it('clientCases: variant, faults of the client space, and not service and variant at once', () => {
    expect(refused(() => clientCases({ variant: 'keyatomic' } as never))).toContain("retrysim: clientCases: option 'variant' must be one of the built-in services naive,");
    expect(refused(() => clientCases({ faults: ['tenants'] } as never))).toBe("retrysim: clientCases: option 'faults' has unknown fault 'tenants'; valid for a client: loseResponse, loseAllAnswers, crash, slow, pause, kill, instances, throttle, answer, sameContent, sameInstant");
    expect(refused(() => clientCases({ variant: 'key_atomic', service: def }))).toBe("retrysim: clientCases: give service or variant, not both (variant 'key_atomic' and service 'two-transactions')");
  });

  it('replayable and explainClient: foundDir, module and clockMs', () => {
    expect(refused(() => replayable(def, { foundDir: '' }))).toBe("retrysim: replayable(two-transactions): option 'foundDir' must be a folder's path, got \"\"");
    expect(refused(() => replayable(def, { clockMs: 5 } as never))).toContain("option 'clockMs' must be a function returning elapsed ms");
    expect(refused(() => explainClient(buggyClient, { module: new URL('https://example.com/client.ts') }))).toBe(`retrysim: explainClient(${buggyClient.name}): option 'module' must be a file: URL, got https://example.com/client.ts`);
    expect(refused(() => explainClient(buggyClient, { seed: 3 } as never))).toContain("unknown option 'seed' (seed is fast-check's");
  });

  it('explainClient and runClientCase refuse what is not a retry client: a module namespace, a factory, a client without deadlineMs', () => {
    expect(refused(() => explainClient(clientModule as never))).toBe('retrysim: explainClient: the client is not a retry client but holds some (a module\'s namespace, from import * as mod?): pass one of them, mod.buggyClient, mod.fixedClient, mod.default');
    expect(refused(() => runClientCase((() => buggyClient) as never, undefined as never))).toContain("retrysim: runClientCase: the client is a function, not a retry client: export the object it returns");
    expect(refused(() => explainClient({ name: 'c', run: async () => undefined } as never))).toBe('retrysim: explainClient: the client is not a retry client: deadlineMs is missing (the ms within which one call settles, a positive number)');
    expect(refused(() => explainClient(undefined as never))).toContain('the client is undefined, not a retry client');
  });

  it('serviceCases refuses a module namespace, naming its default export', () => {
    expect(() => serviceCases(serviceModule as never)).toThrow("service 'two-transactions': service: got a module's namespace (import * as …), not a service definition: pass its default export (import service from '…')");
  });

  it('a case runs only on the kind of target it was made for: no client case on a service, no service case on a client', async () => {
    const [clientCase] = fc.sample(clientCases(), { seed: 1, numRuns: 1 });
    await expect(runServiceCase(def, clientCase!)).rejects.toThrow('retrysim: runServiceCase(two-transactions): this case was made by clientCases(), for a retry client: run it with runClientCase(client, c)');
    const [serviceCase] = fc.sample(serviceCases(def), { seed: 1, numRuns: 1 });
    expect(refused(() => runClientCase(buggyClient, serviceCase!))).toBe(`retrysim: runClientCase(${buggyClient.name}): this case was made by serviceCases(two-transactions), for a service: a client's cases come from clientCases() (clientCases({ service }) runs the client against your service)`);
    // Each on its own kind still runs.
    expect((await runServiceCase(def, serviceCase!)).violations).toBeDefined();
    expect((await runClientCase(buggyClient, clientCase!)).violations).toBeDefined();
  }, 60_000);
});
