// A module path that is a folder: one line saying so and naming the module
// files in it (Node's "Directory import … is not supported resolving ES
// modules imported from …/dist/service/load.js" named retrysim's own file).
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';

describe('a folder given as the module', () => {
  it('check --service, check --client: one line naming the folder and the modules in it, exit 2', async () => {
    const s = await runMain(['check', '--service', 'examples/payments-atomic', '--runs', '5']);
    expect(s.code).toBe(2);
    expect(s.err.trim()).toMatch(/^retrysim check: service 'examples\/payments-atomic': cannot load: \S+examples\/payments-atomic is a folder, not a module: name the module file in it \(examples\/payments-atomic\/service\.ts\)$/);
    const c = await runMain(['check', '--client', 'examples/fetch-retry-client', '--runs', '5']);
    expect(c.code).toBe(2);
    expect(c.err.trim()).toMatch(/is a folder, not a module: name the module file in it \(examples\/fetch-retry-client\/\S+\.ts/);
    expect(s.err + c.err).not.toMatch(/Directory import|node_modules|dist\//);
  }, 60_000);
});
