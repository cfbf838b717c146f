/**
 * retrysim's public API. Everything a user needs to write their own
 * simulations and properties is exported from here.
 */

/** Seeded, platform-independent random numbers ({@link Prng}) and distributions. */
export { Prng, mix32, hashString } from './random/prng.js';
export { standardNormal, normal, absNormal } from './random/normal.js';

/** The discrete-event kernel: virtual clock, (time, seq) queue, tasks, futures. */
export { Kernel, Task, type KernelOptions, type RunResult, type SpawnOptions } from './sim/kernel.js';
export { Future } from './sim/future.js';
export { EventQueue } from './sim/queue.js';
export { Trace, formatEntry, type TraceEntry } from './sim/trace.js';
export { canonicalJson, hashJson } from './sim/canonical.js';
export { SimLimitError, DeadlockError } from './sim/errors.js';
/** Choice sources: who runs next when several tasks could. */
export type { ChoiceSource, ChoiceRecord } from './sim/choice/source.js';
export { RandomChoice } from './sim/choice/random.js';
export { ListChoice } from './sim/choice/list.js';
export { ReplayChoice, ReplayDivergenceError } from './sim/choice/replay.js';
/** Runs unmodified setTimeout/Date.now code on the kernel's clock. */
export { runOnVirtualTime, type BridgeOptions } from './sim/fake-timers.js';
export { PctChoice, taskOf, type PctOptions } from './sim/choice/pct.js';
export { PctProbe } from './sim/choice/pct-probe.js';
/** What a task's next step touches, declared where it parks: the independence partial-order reduction relies on. */
export { conflicts, union, TOUCHES_ALL, TOUCHES_NOTHING, type Footprint } from './sim/footprint.js';
/** Bounded exhaustive exploration: every schedule of a small model. */
export { exploreAll, nextPrefix, type ExploreOptions, type ExploreResult, type ExploredSchedule } from './sim/explore/exhaustive.js';
export { PrefixChoice, ExplorationDivergenceError } from './sim/explore/prefix.js';
export { SleepSetChoice, SleepSetBlocked, backtrackSleep, type SleepNode } from './sim/explore/sleep-sets.js';

/** Backoff strategies (SPEC §1) and the named real-world retry policies. */
export * from './backoff/index.js';
/** The thundering-herd OCC model (SPEC §2) and its grid runner. */
export * from './herd/index.js';
/** The bug-tracker service (SPEC §3): store, validation, write strategies, faults, instances. */
export * from './tracker/index.js';

/** The retrying client (SPEC §4): transport, key sources, harness, model layer. */
export type { Transport, WireOutcome, TransportFailure } from './harness/transport.js';
export { KEY_SOURCES, isStableKeySource, normalizeTitle, businessKey, toolCallKey, attemptKey, type KeySource, type BusinessContent } from './harness/keys.js';
export { submitReport, RETRYABLE_STATUSES, OUTCOME_UNKNOWN_TEXT, type ClientEnv, type ReportIntent, type AttemptRecord, type HarnessResult, type HarnessOptions } from './harness/client.js';
export { runOperation, rewordTitle, type ModelOptions, type OperationResult } from './harness/model-layer.js';
/** The simulated network with kill/restart. */
export { SimNetwork, SimServer, type NetworkOptions, type KillPlan } from './net/sim-network.js';
/** SPEC §5's invariants (judged through a service's declared effects: `checkServiceInvariants`). */
export type { Invariant, Violation, OperationEnd, KeyReuseProbe } from './checkers/invariants.js';

/** Scenario files: schema, load/print, run, record, canonical scenarios, arbitraries. */
export { SCENARIO_FORMAT, scenarioSchema, INVARIANTS, type Scenario, type ScenarioInput, type InvariantName } from './scenario/schema.js';
export { parseScenario, loadScenario, printScenario, ScenarioError, type ScenarioIssue } from './scenario/load.js';
export { runScenario, matchesExpect, type RunOptions, type ScenarioRun } from './scenario/run.js';
export { recordScenario } from './scenario/record.js';
/** Watching a run step by step (`RunOptions.observe`): each trace entry with the store, each request as sent. */
export { ObservedTrace, type RunObserver } from './scenario/observe.js';
/** The HTML pages: a run as stepper data, the stepper page and the herd explorer page. */
export { observeScenario, type StepperSource } from './report/html/stepper-data.js';
export type { StepperData, Step, StepKind, Lane, DbState, Decision, ViolationAt } from './report/html/stepper-types.js';
export { stepperPage } from './report/html/stepper.js';
export { herdPage } from './report/html/herd-page.js';

export { MATRIX_COLUMNS, MATRIX_ROWS, EXPECTED_REPORTS, canonicalScenario, canonicalFileName, rowName, type MatrixColumn, type MatrixRow } from './scenario/canonical.js';
export { scenarioArbitrary, scenarioSize, type ScenarioGenOptions, type GeneratedCase, type FaultKind } from './scenario/arbitraries.js';

/** The service API: your own endpoint (SQLite schema, handler, steps, crash points, effects) under retrysim's campaign. */
export * from './service/index.js';
export type { HostedInstance } from './net/sim-network.js';
/** Your own retry client (fetch + ordinary timers) on virtual time against a simulated service. */
export { runClientScenario, type RetryClient, type ClientOperation, type ClientRun, type ClientRunOptions } from './client/run.js';
export { simFetch, type SentRequest } from './client/sim-fetch.js';
export { runClientsOnVirtualTime, type ClientBridge } from './client/bridge.js';
/** A retry client's campaign and its counterexample files (`retrysim check --client`, `retrysim replay`). */
export { runClientCampaign, recordClientCounterexample, clientCaseArbitrary, CLIENT_FOUND_DIR, type ClientCampaignOptions, type ClientCampaignResult, type ClientCounterexample, type ClientTarget } from './client/campaign.js';
export { loadClient, isRetryClient, ClientError } from './client/load.js';
export type { Endpoint } from './harness/client.js';

/** Property campaigns: claims, fast-check campaigns with shrinking, exhaustive runs. */
export { CLAIMS, HARNESS_FAULTS, LOST_RESPONSES, claimById, type Claim, type MinimalShape } from './campaign/claims.js';
export { runCampaign, saveCounterexample, minimalityProblems, claimSituations, type CampaignOptions, type CampaignResult, type Counterexample, type ExploreMode, type BoundedPart } from './campaign/run.js';
export { runExhaustive, runBounded, withBounded, DEFAULT_SCHEDULES_MAX } from './campaign/exhaustive.js';
/** Verdict words and exit codes shared by every campaign: holds, fails, inconclusive (exit 4). */
export { EXIT, exitCodeOf, shortfallText, verdictWithoutFailure, type Verdict, type Shortfall } from './campaign/verdict.js';
/** Coverage (DESIGN invariant 9): the situations a campaign's runs reached, counted per run (`RunOptions.reached`). */
export { situationsOf, countRun, addCounts, coverageOf, mergeCoverage, neverReached, coverageText, type Coverage, type CoverageRow, type CoverageCounts, type Situation, type FaultSpace } from './campaign/coverage.js';
export { Reached, SPANS } from './service/reached.js';
export { campaignPct, pctStepsEstimate, CAMPAIGN_PCT_DEPTH } from './campaign/pct.js';
export { smallScenarios } from './campaign/small.js';

/** Retry control beyond one call (SPEC §6): classification, the retry loop, retry budget, token bucket, amplification. */
export * from './retry/index.js';

// Hosted Node HTTP apps and the simulated key-value store (src/app/, src/kv/).
export type { AppDescriptor, AppEnv, KvView, RequestListener } from './app/descriptor.js';
export { appService, APP_STEPS, APP_CRASH_POINTS } from './app/define.js';
export { KvClient, KvMulti, kvClient, KV_COMMANDS, ErrorReply, MultiErrorReply, WatchError, type KvCommandName } from './kv/client.js';
export { KvStore, KV_TABLE, type SetOptions } from './kv/store.js';
