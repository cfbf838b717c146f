export {
  STRATEGY_NAMES,
  StrategyCode,
  strategyCode,
  isStrategyName,
  expoMs,
  strategyDelayMs,
  createBackoff,
} from './strategies.js';
export type { StrategyName, Backoff, BackoffOptions } from './strategies.js';
export {
  codexSamplingPolicy,
  anthropicSdkPolicy,
  javaRetryPolicy,
  bugReportHarnessPolicy,
  NAMED_POLICIES,
  DELAY_MS_MAX,
  retryDelayMs,
} from './policies.js';
export type { RetryPolicy, RetryContext } from './policies.js';
