/** Retry control beyond one call (SPEC §6): classification, the retry loop, budgets, token buckets, amplification. */
export { GRPC_CODES, isGrpcCode, classifyGrpc, DeliverySemantics, deliverySemantics, MIN_ATTEMPT_MS, type GrpcCode, type ClassifyContext, type RetryDecision } from './classify.js';
export { decideRetry, retryLoop, type AttemptResult, type StopReason, type RetryCheckInput, type RetryCheck, type RetryLoopOptions, type RetryLoopResult } from './loop.js';
export { checkTime, type RetryThrottle, type RetryGrant, type FailureKind } from './throttle.js';
export { RetryBudget, type RetryBudgetOptions } from './budget.js';
export { TokenBucket, type TokenBucketOptions } from './token-bucket.js';
export {
  CONTROLS,
  isControl,
  expectedRequestsPerCall,
  uniformStack,
  simulateAmplification,
  amplificationTable,
  type Control,
  type AmplificationOptions,
  type AmplificationResult,
  type AmplificationRow,
} from './amplification.js';
