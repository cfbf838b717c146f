/**
 * The service API: describe your own idempotent endpoint in one module and
 * run retrysim's campaign against it (see definition.ts).
 */
export type { ServiceDefinition, ServiceDeployment, ServiceSim, ServiceRequest, ServiceResponse, ServiceDb, OperationIntent, EffectOwner, EffectId } from './definition.js';
export { ServiceError } from './errors.js';
export { validateDefinition } from './validate.js';
export { ServiceDatabase, simDatabase, releaseDatabase } from './db.js';
export { ServiceHost, type HostFaults } from './host.js';
export { checkServiceInvariants } from './check.js';
export { runServiceScenario, endpointOf } from './run.js';
export { loadService } from './load.js';
export { registerService, registeredService } from './registry.js';
