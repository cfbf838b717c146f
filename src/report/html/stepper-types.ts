/**
 * The data a stepper page is drawn from: one observed scenario run, step by
 * step. Built in Node by stepper-data.ts, embedded in the page as JSON and
 * drawn by client/stepper-view.ts. Types only, so the browser bundle and the
 * Node side share them without sharing code.
 */

/** A lane of the sequence diagram: a worker (client), the network, a server instance, the database. */
export interface Lane {
  id: string;
  label: string;
  kind: 'worker' | 'network' | 'server' | 'db';
}

/** What kind of thing a step is; decides how it is drawn. */
export type StepKind =
  | 'worker' // a client worker starts, gets its result, ends
  | 'request' // a request goes on the wire (client → server)
  | 'phase' // a request runs one phase on its server (check, claim, process, insert, register, finish, respond)
  | 'db' // a phase's effect on the database
  | 'answer' // the server answers
  | 'lost' // the answer is lost on the way back
  | 'delivered' // the client receives the answer (or sees the connection close / refused)
  | 'refused' // nobody listening: the server is down
  | 'timeout' // the client gave up waiting
  | 'decision' // the kernel chose who runs next
  | 'kill' // kill -9 of a server
  | 'restart'
  | 'killed' // a request task died with its server
  | 'lease' // a placeholder's lease ran out (derived from the key rows and the lease)
  | 'note' // any other trace line of a request or server (a pause, a slow step, a throttle): its own row, in the trace's words
  | 'resumed' // derived: a task the scheduler resumed changed the database before its next trace line
  | 'error'; // an exception escaped a task

/** A decision of the schedule: the candidates, which one ran, and whether that preempted the running task. */
export interface Decision {
  of: string[];
  chosen: number;
  preempted: boolean;
  /** Each candidate in words (`#2 would run register`), in the order of {@link of}. */
  said: string[];
}

/** One step of the run. */
export interface Step {
  /** Virtual time, ms. */
  t: number;
  kind: StepKind;
  actor: string;
  /** The trace's own words (event name), e.g. `check`, `answer 201`. */
  event: string;
  /** One line for a person: what happened. */
  text: string;
  /** Lane index where the step happens (arrow start). */
  from: number;
  /** Lane index an arrow points to, if the step is a message. */
  to?: number;
  /** Index into {@link StepperData.dbStates}: the database after this step. */
  db: number;
  decision?: Decision;
  /** For check / claim phases: what the lookup found and what the request did next. */
  check?: { key: string; found: string; outcome: 'pass' | 'stop' };
  /**
   * A hosted app's store step, as its code sent it: the command and its key's
   * first segment (`SET NX lock`, `INCRBY seq`, `GETDEL lock`), for the
   * one-line story — the step's name alone (`kv.set`) said neither.
   */
  command?: string;
  /** The database change this step made, in words (diff of the rows before and after). */
  dbChange?: string[];
  /** The trace line, as `retrysim replay --trace` prints it (empty for derived steps). */
  line: string;
}

/** A row of `reports`, as shown. */
export interface ReportView {
  id: number;
  run_id: string;
  tenant: string;
  title: string;
  idem_key: string | null;
}

/** A row of `idempotency_keys`, as shown; `lease_until` is derived (locked_at + lease) for in-progress rows. */
export interface KeyView {
  key: string;
  status: string;
  locked_at: number | null;
  lease_until: number | null;
  fence: number | null;
  response_code: number | null;
  response_body: string | null;
}

/** One of a user service's tables, as shown: its columns and rows (values as SQLite returned them, blobs as text). */
export interface TableView {
  name: string;
  columns: string[];
  rows: Array<Array<string | number | null>>;
}

/**
 * The database's rows at one moment: the built-in tracker's two tables in
 * their own views, or — for a user's service — every table it declares
 * (`tables`), read generically.
 */
export interface DbState {
  reports: ReportView[];
  keys: KeyView[];
  tables?: TableView[];
}

/** A broken invariant and the step where it breaks. */
export interface ViolationAt {
  invariant: string;
  op: string;
  detail: string;
  /** Index into {@link StepperData.steps}. */
  step: number;
  /** Why this step: e.g. "the second report for op1 appears here". */
  why: string;
}

/** Everything one stepper needs. */
export interface StepperData {
  name: string;
  description: string;
  /**
   * What happened, in two sentences generated from this run's steps (the
   * requests' own step names, the service's effect noun): no text is
   * written per variant.
   */
  summary: string[];
  /** The service's word for one effect (its `effects.noun`): `report` for the built-in tracker. */
  noun: string;
  /** A link back to the page that lists this one (check --html's index.html), relative to the page. */
  index?: string;
  /** The scenario file, when the run came from one. */
  file?: string;
  /** A command that reproduces the run. */
  replay: string;
  variant: string;
  keySource: string;
  seed: number;
  /** The service's lease (ms), or null when it does not rely on one. */
  leaseMs: number | null;
  /**
   * A hosted app whose file says its modules load once per simulated process
   * (service.moduleLoads): the page says so, since what the app keeps at
   * module level is then each process's own. Absent: once for the run.
   */
  moduleLoads?: 'per-process';
  /**
   * A retry client whose module was loaded once per simulated client call
   * (the file's client.moduleLoads, or RETRYSIM_APP_PER_PROCESS=1): the
   * page says so, since what the client keeps at module level is then each
   * call's own. Absent: once for the run.
   */
  clientModuleLoads?: 'per-process';
  /**
   * What the steps do not say and a reader needs (replay --trace prints the
   * same lines): instances whose clocks disagree (`instances: s0 clock +0,
   * s1 clock +33.3 s` — a lease judged on a clock ahead has expired), each
   * operation's tenant when they differ. Absent: nothing to say.
   */
  setup?: string[];
  lanes: Lane[];
  steps: Step[];
  /** Distinct database states (steps refer to them by index). */
  dbStates: DbState[];
  violations: ViolationAt[];
  /** Reports held per operation at the end. */
  reports: Record<string, number>;
  /** Expected reports/violations of the scenario, and whether the run met them. */
  expect: { reports?: Record<string, number>; violations: string[]; met: boolean; problems: string[] };
  traceHash: string;
  /** Decisions in the schedule, and how many of them were preemptions. */
  decisions: number;
  preemptions: number;
  /**
   * The recovery phase's timeline (after the faults stopped), when it ran:
   * what a `progress` violation is judged on, which the steps (the main run
   * only) never show.
   */
  recovery?: string[];
  /**
   * The run stopped before it ended (a request never answered, the
   * run-time limit): why, in retrysim's one line. The steps go up to the
   * stop; no verdict is judged (replay exits 2, as check stopped).
   */
  stopped?: string;
}
