// The canary of service.ts, as a module of its own: `check --service` reads
// a module's default export (or, without one, its named `service` export),
// so this file is how the command line checks the named export `canary`.
export { canary as default } from './service.js';
