/**
 * retrysim loaded twice in one process — vitest's `isolate: false` sharing
 * a process between test files, or two copies of the package — must still
 * collect a simulated process's unhandled rejection. Each copy registered a
 * listener of its own; the copy with no run armed threw the rejection again
 * (what Node does outside a simulation), Node called no later listener, and
 * the armed copy's run never saw its crash (src/service/fire-and-forget's
 * "crashes its process" test went red in a shared fork).
 */
import { expect, it } from 'vitest';
import * as first from './rejections.js';

it('a second copy of the module, armed, collects a rejection the first copy listened for too', async () => {
  // A query makes the module loader evaluate the file again: a second copy with its own module state.
  // @ts-expect-error: a module URL with a query (vite's loader runs the file again for it)
  const second = (await import('./rejections.js?copy')) as typeof first;
  expect(second).not.toBe(first);
  first.armRejections();
  first.disarmRejections();
  await new Promise((r) => setImmediate(r)); // real-time: allowed (lets the first copy's drain end)
  second.armRejections();
  try {
    void Promise.reject(new Error('config missing'));
    const got = await second.probeRejection();
    expect((got?.reason as Error | undefined)?.message).toBe('config missing');
  } finally {
    second.disarmRejections();
  }
  expect(process.listeners('unhandledRejection').filter((l) => l.toString().includes('armed')).length).toBe(1);
});
