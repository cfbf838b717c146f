// The vitest helper on a hosted app: appService() turns the descriptor into
// the ServiceDefinition the helper takes. This property holds (a SET NX
// claim); its canary, the same app on a store whose NX is a GET then a SET,
// is in src/app/app.test.ts.
import { expect } from 'vitest';
import { appService } from 'retrysim';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import app from './app-claim.js';

const service = appService(app);
const module = new URL('./app-claim.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 100, seed: 1 })(
  'every order is created exactly once, whatever is lost, slow, paused, killed or concurrent',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  60_000,
);
