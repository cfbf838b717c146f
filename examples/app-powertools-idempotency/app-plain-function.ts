/**
 * The same Powertools setup, but the idempotent function is called the way
 * a plain function (not a Lambda handler) is: without a Lambda context, so
 * `registerLambdaContext` never runs and the in-progress record carries no
 * in-progress expiry. Everything else as in app.ts.
 */
import type { AppDescriptor } from 'retrysim';
import base, { createApp } from './app.js';

export default {
  ...base,
  name: 'powertools-no-context',
  app: (env) => createApp(env, { lambdaContext: false }),
} satisfies AppDescriptor;
