/**
 * The bug tracker service of SPEC §3 as a transport-independent library:
 * validation, SQLite store, write strategies, faults and server instances.
 */
export type { Deferred, StepEnv } from './env.js';
export { realEnv, plainDeferred } from './real-env.js';
export {
  REPLAY_HEADER,
  jsonResponse,
  errorResponse,
  createdResponse,
  createdBody,
  replayResponse,
  keyReusedResponse,
  inProgressResponse,
  type TrackerRequest,
  type TrackerResponse,
} from './messages.js';
export {
  MAX_BODY_BYTES,
  KEY_LENGTH_MIN,
  KEY_LENGTH_MAX,
  DEFAULT_TENANT,
  validateReportBody,
  validateKey,
  validateTenant,
  type ReportInput,
  type Validated,
} from './validate.js';
export { canonicalJson, fingerprint } from './fingerprint.js';
export { scopeKey, unscopeKey, type KeyScope } from './scope.js';
export { Store, openStore, storeOn, TRACKER_SCHEMA, isSqliteError, type ReportRow, type KeyRow, type KeyStatus, type ReportFilter } from './store.js';
export { NO_FAULTS, resolveFaults, fire, CrashFault, type FaultOptions, type PauseFault } from './faults.js';
export { DEFAULT_LEASE_MS, DEFAULT_CLIENT_TIMEOUT_MS, leaseProblem, assertLease, type LeaseConfig } from './lease.js';
export {
  VARIANTS,
  type Variant,
  type WriteRequest,
  type WriteStrategy,
  type StrategyContext,
} from './strategy.js';
export { createStrategy, STEP_LABELS, CRASH_POINTS, usesLease, type StrategyOptions } from './variants.js';
/** The built-ins by name, as ServiceDefinitions: `export default builtinService('key_atomic')` is the tracker as a user's module. */
export { builtinService, isBuiltinService, BUILTIN_SERVICES, type BuiltinName, type BuiltinOptions } from './builtin.js';
/** The built-in tracker as a service definition: how the simulation hosts and judges every variant. */
export { trackerService, type TrackerDeployment, type TrackerMemory } from './service.js';
export { serveTracker } from './handler.js';
export { NaiveStrategy } from './strategies/naive.js';
export { KeySplitStrategy } from './strategies/key-split.js';
export { KeyAtomicStrategy, claimKey, finishKey, type ClaimResult, type FinishResult } from './strategies/key-atomic.js';
export {
  MemorySingleflightStrategy,
  DEFAULT_COMPLETED_TTL_MS,
  type StoredResult,
} from './strategies/memory-singleflight.js';
export { getReport, listReports, type ReportView } from './reads.js';
export { TrackerInstance, type TrackerInstanceOptions } from './instance.js';
