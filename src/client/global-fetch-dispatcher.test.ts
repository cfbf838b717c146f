// The global fetch is one dispatcher however many copies of its module load
// (the package and a checkout, a client loaded afresh per simulated process
// with what it imports): a later copy shares the first's state instead of
// wrapping it, so a reference taken at any time routes, and the runtime's
// fetch under it is what unroutedFetch gives (never a dispatcher, which the
// flakiness lab's recording fetch would call into itself).
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(async () => (await import('./global-fetch.js')).routeFetchDispatcher(undefined));

describe('the global fetch dispatcher', () => {
  it('a second copy of the module installs no second layer, and routes the one dispatcher', async () => {
    const first = await import('./global-fetch.js');
    const dispatcher = globalThis.fetch;
    vi.resetModules();
    const second = await import('./global-fetch.js');
    expect(second).not.toBe(first);
    expect(globalThis.fetch).toBe(dispatcher);
    expect(second.unroutedFetch()).toBe(first.unroutedFetch());
    expect(first.unroutedFetch()).not.toBe(dispatcher);
    const routed = vi.fn(async () => new Response('from the run'));
    second.routeFetchDispatcher(routed as unknown as typeof fetch);
    expect(await (await dispatcher('http://service.sim/x')).text()).toBe('from the run');
    first.routeFetchDispatcher(undefined);
    expect(routed).toHaveBeenCalledTimes(1);
    // Unrouted again: the runtime's fetch (here refusing a non-URL, as Node's does).
    await expect(dispatcher('not a url')).rejects.toThrow();
    expect(routed).toHaveBeenCalledTimes(1);
  });
});
