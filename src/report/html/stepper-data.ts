import { KV_TABLE } from '../../kv/store.js';
import { shellArg } from '../shell.js';
import { setupLines } from '../../scenario/setup-lines.js';
import { formatEntry, type TraceEntry } from '../../sim/trace.js';
import { effectsAdded, isEffectLine } from '../../net/sim-network.js';
import type { ChoiceRecord } from '../../sim/choice/source.js';
import { matchesExpect, runScenario, type RunOptions, type ScenarioRun } from '../../scenario/run.js';
import type { RunObserver } from '../../scenario/observe.js';
import type { Scenario } from '../../scenario/schema.js';
import { storeOn, type Store } from '../../tracker/store.js';
import { unscopeKey } from '../../tracker/scope.js';
import { serviceOf } from '../../scenario/service-of.js';
import type { DbState, Decision, KeyView, Lane, Step, StepperData, TableView, ViolationAt } from './stepper-types.js';
import type { ServiceDb } from '../../service/definition.js';
import { summarize } from './stepper-story.js';
import type { RunResult } from '../../sim/kernel.js';
import type { Violation } from '../../checkers/invariants.js';
import type { ServiceDefinition } from '../../service/definition.js';
import { pinClientViolations, withClientSteps, type ClientWorker } from './client-steps.js';
import { keySourceWords } from '../../harness/keys.js';
import { moduleLoadsOf } from '../../app/define.js';
import { KEY_REUSE_PROBE } from '../../scenario/workers.js';
import { ServiceError } from '../../service/errors.js';
import { ClientError } from '../../client/load.js';

/** Where the run came from, for the page's header. */
export interface StepperSource {
  file?: string;
  /** The command that reproduces the run (default: `retrysim replay <file>`). */
  replay?: string;
  /** A link back to the page listing this one (relative to the page), e.g. check --html's `index.html`. */
  index?: string;
}

/** One request as the observer saw it leave its worker. */
export interface RequestInfo {
  worker: string;
  server: number;
  n: number;
  key: string | undefined;
  tenant: string;
  /** Index of its `spawn` entry. */
  entry: number;
  /** As the worker sent it (a user's client may send other requests than the operation, e.g. a GET asking whether it took effect). */
  method: string;
  path: string;
}

const REQUEST_ACTOR = /^s(\d+)\/(.+)#(\d+)$/;

/** The kernel tasks a user's client runs in: the bridge (`clients`) and one per fetch call (`op1.w0.fetch2`). */
const CLIENT_PLUMBING = /^(clients|.+\.fetch\d+)$/;

/**
 * Runs a scenario observed (see {@link RunObserver}) and turns the run into
 * a stepper's data: one step per trace entry (plus derived lease expiries),
 * the database rows after each step, each decision with its candidates and
 * whether it preempted, and each broken invariant pinned to the step that
 * breaks it. Returns the run too, so a command prints and draws the same run.
 */
export async function observeScenario(s: Scenario, source: StepperSource = {}, opts: RunOptions = {}): Promise<{ data: StepperData; run: ScenarioRun }> {
  // The trace is kept for the recovery phase's lines (the page shows them); the hash does not depend on it.
  return observeRun(s, source, opts.service, (observe) => runScenario(s, { ...opts, keepTrace: true, observe }));
}

/** What a run must give back to be drawn: the kernel's result and the checkers' verdict. */
export interface ObservableRun {
  result: RunResult;
  reports: Record<string, number>;
  violations: Violation[];
  /** The recovery phase's trace lines, when kept (service runs). */
  recoveryTrace?: string[];
}

/**
 * A user's retry client, for {@link observeRun}: its name (the page says
 * whose run it is) and how its calls went (each call's start, waits and
 * end, which the trace does not log — the client's own code runs on the
 * bridge's fake clock, not as kernel tasks).
 */
export interface ObservedClient<R> {
  name: string;
  workers(run: R): ClientWorker[];
  /** Its module loaded afresh for each simulated client call (the file's client.moduleLoads): the page says so. */
  moduleLoads?: 'per-process';
}

/**
 * The stepper's data for any observed run: `runWith` runs the scenario
 * with the observer (the built-in harness path, or a user's retry client),
 * and the steps, rows and pinned violations are built the same way for both.
 */
export async function observeRun<R extends ObservableRun>(s: Scenario, source: StepperSource, service: ServiceDefinition | undefined, runWith: (observe: RunObserver) => Promise<R>, client?: ObservedClient<R>): Promise<{ data: StepperData; run: R }> {
  const entries: TraceEntry[] = [];
  const before: number[] = []; // database state index when entry i was logged
  const states: DbState[] = [];
  const stateIds = new Map<string, number>();
  const pending = new Map<string, Array<{ key: string | undefined; tenant: string; method: string; path: string }>>();
  const requests = new Map<string, RequestInfo>();
  let final = -1;
  const def = serviceOf(s, service);
  const noun = def.effects.noun ?? 'effect';
  // The built-in tracker's rows get their own views (keys with lease and fence); a user's service shows the tables it declares.
  const tracker = s.service.module === undefined;
  const intern = (db: ServiceDb): number => {
    const st = tracker ? snapshot(storeOn(db), s.service.leaseMs) : tablesSnapshot(db, def.tables);
    const text = JSON.stringify(st);
    let id = stateIds.get(text);
    if (id === undefined) {
      id = states.length;
      states.push(st);
      stateIds.set(text, id);
    }
    return id;
  };
  // The kernel's turns: entry i was logged in turn turnOf[i]; turnStart[k] is the database when turn k began.
  const turnOf: number[] = [];
  const turnStart: number[] = [];
  let turn = 0;
  /** The task and time of the current turn; `done` once a line was logged in it or it was closed silent. */
  let current: { task: string; t: number; done: boolean } | undefined;
  /**
   * A turn that ended without a line but with a write (a request that resumed after a pause, wrote, and was
   * killed before it logged again): a row of its own for that task, else its write shows on another's row.
   */
  const closeSilentTurn = (db: ServiceDb) => {
    if (current === undefined || current.done) return;
    current.done = true;
    if (intern(db) === turnStart[turn]) return;
    entries.push({ t: current.t, actor: current.task, event: RESUMED_SILENTLY });
    before.push(turnStart[turn]!);
    turnOf.push(turn);
  };
  const observer: RunObserver = {
    switched(db, t, task) {
      closeSilentTurn(db);
      turnStart[++turn] = intern(db);
      current = { task, t, done: false };
    },
    entry(e, db) {
      // The scheduler's lines come between turns: the one before has ended.
      if (e.actor === 'kernel') closeSilentTurn(db);
      else if (current !== undefined) current.done = true;
      before.push(intern(db));
      turnOf.push(turn);
      entries.push(e);
      const m = REQUEST_ACTOR.exec(e.actor);
      if (m && e.event === 'spawn') {
        // The worker's transport reported the request just before the network spawned its task.
        const sent = pending.get(m[2]!)?.shift();
        requests.set(e.actor, { worker: m[2]!, server: Number(m[1]), n: Number(m[3]), key: sent?.key, tenant: sent?.tenant ?? 'default', entry: entries.length - 1, method: sent?.method ?? def.operation.method ?? 'POST', path: sent?.path ?? (typeof def.operation.path === 'string' ? def.operation.path : '/') });
      }
    },
    request(worker, req) {
      const list = pending.get(worker) ?? [];
      list.push({ key: req.headers['idempotency-key'], tenant: req.headers['x-tenant'] ?? 'default', method: req.method, path: req.path });
      pending.set(worker, list);
    },
    end(db) {
      closeSilentTurn(db);
      final = intern(db);
    },
  };
  let run: R;
  try {
    run = await runWith(observer);
  } catch (e) {
    // A run that stopped on its own course (a request never answered): the page draws it up to the stop.
    if (!((e instanceof ServiceError || e instanceof ClientError) && e.ofTheRun)) throw e;
    throw new StoppedRunPage(e, stoppedData(s, source, def, { entries, before, turns: turnsOf(turnOf, turnStart), requests, states, client, tracker }, e.message));
  }
  const built = buildSteps(s, entries, before, turnsOf(turnOf, turnStart), final, run.result.choices, requests, states, { steps: new Set(def.steps), noun, client: client !== undefined, store: storeLabel(def) });
  const workers = client?.workers(run);
  const steps = workers === undefined ? built.steps : withClientSteps(built.steps, workers, built.lanes, requests, client!.name);
  const m = matchesExpect(s, run, noun);
  const violations = workers === undefined ? pinViolations(s, run, steps, states, requests, noun)
    : pinClientViolations(run.violations, steps, requests, workers, (vs) => pinViolations(s, { reports: run.reports, violations: vs }, steps, states, requests, noun));
  const data: StepperData = {
    ...pageHead(s, source, def, client, tracker),
    summary: summarize({ steps, violations, noun, reports: run.reports }),
    lanes: built.lanes,
    steps,
    dbStates: states,
    violations,
    reports: run.reports,
    expect: { ...(s.expect.reports ? { reports: s.expect.reports } : {}), violations: [...s.expect.violations], met: m.ok, problems: m.problems },
    traceHash: run.result.traceHash,
    decisions: run.result.choices.length,
    preemptions: run.result.choices.filter((c) => c.preempted).length,
    ...(run.recoveryTrace !== undefined && run.recoveryTrace.length > 0 ? { recovery: run.recoveryTrace } : {}),
  };
  return { data, run };
}

/**
 * What {@link observeRun} throws for a run that stopped before it ended: the
 * page of the run up to the stop (`data`), and the stop itself (`error`),
 * which the caller rethrows once the page is written.
 */
export class StoppedRunPage extends Error {
  constructor(
    readonly error: ServiceError | ClientError,
    readonly data: StepperData,
  ) {
    super(error.message);
    this.name = 'StoppedRunPage';
  }
}

/**
 * The page of a stopped run: its steps up to the stop. The decisions it made
 * are the recorded schedule's first ones (a stopped run hands none back;
 * the file a campaign wrote for it records them); no verdict is judged.
 */
function stoppedData<R>(s: Scenario, source: StepperSource, def: ServiceDefinition, seen: { entries: TraceEntry[]; before: number[]; turns: Turns; requests: Map<string, RequestInfo>; states: DbState[]; client: ObservedClient<R> | undefined; tracker: boolean }, why: string): StepperData {
  const { entries, before, requests, states } = seen;
  const noun = def.effects.noun ?? 'effect';
  const made = entries.filter((e) => e.actor === 'kernel' && e.event === 'choose').length;
  // Without the decisions to name (a schedule shorter than the run went), the steps stop at the last one known.
  const known = Math.min(made, s.schedule.length);
  const cut = known === made ? entries.length : indexOfChoose(entries, known);
  const shown = entries.slice(0, cut);
  const final = before[cut] ?? before[before.length - 1] ?? 0;
  const choices = s.schedule.slice(0, known);
  const built = buildSteps(s, shown, before.slice(0, cut), { end: seen.turns.end.slice(0, cut), start: seen.turns.start.slice(0, cut) }, final, choices, requests, states, { steps: new Set(def.steps), noun, client: seen.client !== undefined, store: storeLabel(def) });
  // The last step is the stop itself, so that stepping through ends on why (on the lane of the request it names, when it names one).
  const t = shown[shown.length - 1]?.t ?? 0;
  const named = /request (s\d+\/\S+#\d+)/.exec(why)?.[1];
  const lane = named !== undefined ? built.lanes.findIndex((l) => l.id === named.split('/')[0]) : -1;
  const steps = [...built.steps, { t, kind: 'note' as const, actor: named ?? 'kernel', event: 'stopped', from: lane >= 0 ? lane : (built.steps[built.steps.length - 1]?.from ?? 0), db: final, line: '', text: `the run stops here, before it ended: ${why}` }];
  return {
    ...pageHead(s, source, def, seen.client, seen.tracker),
    summary: [`The run stopped at t=${t.toFixed(0)} ms, before it ended: nothing is judged (why, below).`],
    lanes: built.lanes,
    steps,
    dbStates: states,
    violations: [],
    reports: {},
    expect: { ...(s.expect.reports ? { reports: s.expect.reports } : {}), violations: [...s.expect.violations], met: false, problems: ['not judged: the run stopped before it ended'] },
    traceHash: '',
    decisions: choices.length,
    preemptions: choices.filter((c) => c.preempted).length,
    stopped: why,
  };
}

/** What a page says of its run before the steps, the same for a run that ended and one that stopped. */
function pageHead<R>(s: Scenario, source: StepperSource, def: ServiceDefinition, client: ObservedClient<R> | undefined, tracker: boolean) {
  return {
    name: s.name,
    description: s.description,
    noun: def.effects.noun ?? 'effect',
    ...(source.index !== undefined ? { index: source.index } : {}),
    ...(source.file !== undefined ? { file: source.file } : {}),
    replay: source.replay ?? (source.file !== undefined ? `retrysim replay ${shellArg(source.file)} --trace` : `seed ${s.seed}`),
    variant: s.service.variant ?? s.service.module ?? '',
    // A user's client has no key source of the harness: the page names the client instead. A user's
    // service is told its keys in words; the built-in tracker's page keeps its key source's name.
    keySource: client !== undefined ? `retry client '${client.name}'` : tracker ? s.client.keySource : keySourceWords(s.client.keySource),
    seed: s.seed,
    // Only a service that relies on a lease has one to show (a user's service without one said "lease 5000 ms").
    leaseMs: def.progress?.leased === true ? def.progress.settleMs : null,
    ...(moduleLoadsOf(def) === 'per-process' ? { moduleLoads: 'per-process' as const } : {}),
    ...(client?.moduleLoads === 'per-process' ? { clientModuleLoads: 'per-process' as const } : {}),
    ...(setupLines(s).length > 0 ? { setup: setupLines(s) } : {}),
  };
}

/** The index of the `n`-th (0-based) decision entry. */
function indexOfChoose(entries: TraceEntry[], n: number): number {
  let seen = 0;
  for (let i = 0; i < entries.length; i++) {
    if (entries[i]!.actor === 'kernel' && entries[i]!.event === 'choose' && seen++ === n) return i;
  }
  return entries.length;
}

/**
 * What the page calls the service's storage: a hosted app's is the Redis its
 * code talks to (env.redis), as the panel names its table; a service's is its database.
 */
function storeLabel(def: ServiceDefinition): string {
  return def.tables.length === 1 && def.tables[0] === KV_TABLE ? APP_STORE : 'database';
}

/** A hosted app's store, as its code knows it (the panel's table and the lane). */
const APP_STORE = 'redis';

/** A user service's declared tables, every row, in rowid order where there is one (deterministic either way: SQLite's scan order). */
function tablesSnapshot(db: ServiceDb, tables: readonly string[]): DbState {
  const out: TableView[] = tables.map((name) => {
    const stmt = db.prepare(`SELECT * FROM "${name.replace(/"/g, '""')}"`);
    const columns = stmt.columns().map((c) => c.name);
    const rows = (stmt.raw(true).all() as unknown[][]).map((r) => r.map((v) => (v === null || typeof v === 'number' || typeof v === 'string' ? v : typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? `<${v.length} bytes>` : String(v))));
    // The hosted app's store is the Redis its code talks to (env.redis); retrysim_kv is only where retrysim keeps it.
    return { name: name === KV_TABLE ? APP_STORE : name, columns, rows };
  });
  return { reports: [], keys: [], tables: out };
}

/** What changed in a user service's tables, row by row (a row is named by its first column). */
function diffTables(a: TableView[], b: TableView[]): string[] {
  const out: string[] = [];
  for (const t of b) {
    const old = a.find((x) => x.name === t.name);
    const before = new Map((old?.rows ?? []).map((r) => [JSON.stringify(r[0]), r]));
    const after = new Map(t.rows.map((r) => [JSON.stringify(r[0]), r]));
    const show = (v: unknown) => (typeof v === 'string' && v.length > 40 ? `${v.slice(0, 37)}…` : String(v));
    for (const [k, r] of after) {
      const o = before.get(k);
      if (o === undefined) out.push(`+ ${t.name} ${show(r[0])}`);
      else {
        const cols = t.columns.flatMap((c, i) => (JSON.stringify(o[i]) !== JSON.stringify(r[i]) ? [`${c} ${show(o[i])} → ${show(r[i])}`] : []));
        if (cols.length > 0) out.push(`${t.name} ${show(r[0])}: ${cols.join(', ')}`);
      }
    }
    for (const [k, r] of before) if (!after.has(k)) out.push(`− ${t.name} ${show(r[0])}`);
  }
  return out;
}

function snapshot(store: Store, leaseMs: number): DbState {
  return {
    reports: store.allReports().map((r) => ({ id: r.id, run_id: r.run_id, tenant: r.tenant, title: r.title, idem_key: r.idem_key })),
    keys: store.keyRows().map((k): KeyView => ({
      key: k.key,
      status: k.status,
      locked_at: k.locked_at,
      // Instance clock offsets are ignored here: locked_at is the writer's clock.
      lease_until: k.status === 'in_progress' && k.locked_at !== null ? k.locked_at + leaseMs : null,
      fence: k.fence,
      response_code: k.response_code,
      response_body: k.response_body,
    })),
  };
}

/** A scoped key as a person reads it: the raw key, with the tenant when it is not the default. */
export function shortKey(scoped: string): string {
  const k = unscopeKey(scoped);
  if (k === undefined) return scoped;
  return k.tenant === 'default' ? k.key : `${k.key} @${k.tenant}`;
}

function describeRow(row: KeyView | undefined, t: number): string {
  if (row === undefined) return 'not registered';
  if (row.status === 'done') return `done (${row.response_code})`;
  const over = row.lease_until !== null && row.lease_until <= t;
  return `in progress, fence ${row.fence}, lease ${over ? 'over since' : 'until'} ${row.lease_until} ms`;
}

/** What changed between two database states, in words. */
function diffStates(a: DbState, b: DbState): string[] {
  if (b.tables !== undefined) return diffTables(a.tables ?? [], b.tables);
  const out: string[] = [];
  const ids = new Set(a.reports.map((r) => r.id));
  for (const r of b.reports) if (!ids.has(r.id)) out.push(`+ report ${r.id} (run ${r.run_id})`);
  const still = new Set(b.reports.map((r) => r.id));
  for (const r of a.reports) if (!still.has(r.id)) out.push(`− report ${r.id}`);
  const keysA = new Map(a.keys.map((k) => [k.key, k]));
  const keysB = new Map(b.keys.map((k) => [k.key, k]));
  for (const [key, k] of keysB) {
    const old = keysA.get(key);
    const fence = k.fence === null ? '' : `, fence ${k.fence}`;
    if (old === undefined) out.push(`+ key ${shortKey(key)}: ${k.status}${fence}${k.status === 'done' ? ` ${k.response_code}` : ''}`);
    else if (old.status !== k.status || old.fence !== k.fence || old.locked_at !== k.locked_at) {
      const how = old.status === 'in_progress' && k.status === 'in_progress' ? 'taken over' : `${old.status} → ${k.status}`;
      out.push(`key ${shortKey(key)}: ${how}${fence}${k.status === 'done' ? ` ${k.response_code}` : ''}`);
    }
  }
  for (const key of keysA.keys()) if (!keysB.has(key)) out.push(`− key ${shortKey(key)} (placeholder released)`);
  return out;
}

function answerText(e: TraceEntry): string {
  const body = typeof e.data?.body === 'string' ? e.data.body : '';
  let shown = body;
  try {
    const v = JSON.parse(body) as { report_id?: number; error?: string };
    if (v.report_id !== undefined) shown = `report_id ${v.report_id}`;
    else if (v.error !== undefined) shown = v.error;
  } catch {
    // not JSON: show as is
  }
  return `${e.event.slice('answer '.length)} ${shown}${e.data?.replay ? ' (replay)' : ''}`;
}

/** Phases that look a key up in the database before deciding whether to go on. */
const LOOKUPS = new Set(['check', 'claim']);

/** A decision's candidate label (`s0/op1.w1#2:register`) in words, from the scheduler's side. */
function candidateWords(label: string, requests: Map<string, RequestInfo>): { who: string; what: string } {
  const cut = label.lastIndexOf(':');
  const task = cut < 0 ? label : label.slice(0, cut);
  const next = cut < 0 ? '' : label.slice(cut + 1);
  const r = requests.get(task);
  const who = r !== undefined ? `#${r.n}` : task;
  // start/sleep/wait are the kernel's own resumption points; anything else is the service's step name.
  const what = next === 'start' ? 'starts' : next === 'sleep' ? 'wakes up after its wait' : next === 'wait' ? 'resumes waiting' : `runs ${next}`;
  return { who, what };
}

/** A decision in words: who runs, who could have, and whether that preempted the running task. */
function decisionWords(c: ChoiceRecord, requests: Map<string, RequestInfo>): { decision: Decision; text: string } {
  const words = c.of.map((l) => candidateWords(l, requests));
  const said = words.map((w, i) => (i === c.chosen ? `${w.who} ${w.what} — chosen` : i === 0 && c.preempted ? `${w.who} could have gone on: ${w.what.replace(/^runs /, 'run ')}` : `${w.who} could have: ${w.what}`));
  const ran = words[c.chosen]!;
  const text = c.preempted
    ? `preemption: ${words[0]!.who} was about to ${words[0]!.what.replace(/^runs /, 'run ')}; the scheduler let ${ran.who} go first: ${ran.who} ${ran.what}`
    : `${ran.who} ${ran.what} (${c.of.length} could run)`;
  return { decision: { of: [...c.of], chosen: c.chosen, preempted: c.preempted, said }, text };
}

/** The event of a row the page adds for a turn that wrote without logging a line (never a trace line). */
const RESUMED_SILENTLY = '\u0000resumed';

/** The database at the kernel's task switches around each entry (undefined where it is not needed). */
interface Turns {
  /**
   * Where the entry's task's turn ended before the next entry was logged:
   * the database when that turn ended (the next turn's start). What the
   * tasks of the turns in between wrote belongs to the rows they log.
   */
  end: Array<number | undefined>;
  /**
   * Where the entry is its turn's first: the database when the turn began.
   * A held store command runs, then logs its line, so the line found its
   * own change already made; this is the database before it.
   */
  start: Array<number | undefined>;
}

function turnsOf(turnOf: readonly number[], turnStart: readonly number[]): Turns {
  return {
    end: turnOf.map((k, i) => (i + 1 < turnOf.length && turnOf[i + 1] !== k ? turnStart[k + 1] : undefined)),
    start: turnOf.map((k, i) => (i === 0 || turnOf[i - 1] !== k ? turnStart[k] : undefined)),
  };
}

function buildSteps(s: Scenario, entries: TraceEntry[], before: number[], turns: Turns, final: number, choices: ChoiceRecord[], requests: Map<string, RequestInfo>, states: DbState[], service: { steps: ReadonlySet<string>; noun: string; client: boolean; store: string }): { lanes: Lane[]; steps: Step[] } {
  const serviceSteps = service.steps;
  const workers = s.operations.flatMap((op) => Array.from({ length: op.workers }, (_, w) => `${op.id}.w${w}`));
  const lanes: Lane[] = [
    ...workers.map((w): Lane => ({ id: w, label: w, kind: 'worker' })),
    { id: 'net', label: 'network', kind: 'network' },
    ...Array.from({ length: s.service.instances }, (_, i): Lane => ({ id: `s${i}`, label: `server s${i}`, kind: 'server' })),
    { id: 'db', label: service.store, kind: 'db' },
  ];
  const laneOf = new Map(lanes.map((l, i) => [l.id, i]));
  const NET = laneOf.get('net')!;
  const DB = laneOf.get('db')!;
  const lane = (task: string): number => {
    const m = REQUEST_ACTOR.exec(task);
    if (m) return laneOf.get(`s${m[1]}`) ?? NET;
    return laneOf.get(task) ?? laneOf.get(task.split('/')[0]!) ?? NET;
  };
  // The database after entry i: what the next entry saw, or, when other tasks ran in between, what its task's
  // turn left (turns.end: a request a fault held runs its store command, then logs it). A phase whose report
  // insert is logged by an effect line (`db:`, an app's `store:`) right after it shows its effect on that
  // entry (the arrow to the database), so its own state is the one before (its turn's start, for a held
  // command's line logged once the command ran).
  const after = entries.map((_, i) => turns.end[i] ?? (i + 1 < entries.length ? before[i + 1]! : final));
  entries.forEach((e, i) => {
    const next = entries[i + 1];
    if (next && next.actor === e.actor && isEffectLine(next.event) && !isEffectLine(e.event)) after[i] = turns.start[i] ?? before[i]!;
    // An effect line of another task right after: that task ran in between (resumed with no decision, as the only one runnable)
    // and made the change, so it shows on its line, not on this one.
    if (next && next.actor !== e.actor && isEffectLine(next.event)) after[i] = before[i]!;
    // A decision changes nothing: what changes after it is the chosen task's doing
    // (its effect line when it logs one, else a derived "resumed" step on its own lane).
    if (e.actor === 'kernel' && e.event === 'choose') after[i] = before[i]!;
  });
  /** The step each request task logged last: a task the scheduler resumes goes on with it. */
  const lastStep = new Map<string, string>();
  const steps: Step[] = [];
  const state = { answered: new Map<string, 'answered' | 'lost' | 'refused'>(), timedOut: new Set<number>(), leases: new Set<string>() };
  let decision = 0;
  let prevDb = before[0] ?? final;
  const push = (st: Omit<Step, 'dbChange'>): void => {
    const change = diffStates(states[prevDb]!, states[st.db]!);
    steps.push(change.length > 0 ? { ...st, dbChange: change } : st);
    prevDb = st.db;
  };
  /** A derived row: `task` resumed and wrote without a line of its own saying so (after a decision, or in a turn that logged none). */
  const resumed = (task: string, t: number, db: number): Omit<Step, 'dbChange'> => {
    const r = requests.get(task);
    const was = lastStep.get(task);
    return {
      t, kind: 'resumed', actor: task, event: was ?? 'resumed', from: lane(task), ...(r !== undefined ? { to: DB } : {}), db, line: '',
      text: `${r !== undefined ? `#${r.n}` : task} resumes${was !== undefined ? ` inside its ${was} step` : ''} and writes to ${service.store === 'database' ? 'the database' : service.store}`,
    };
  };
  /** Request number → its `delivered` step (an abort at the same instant says the answer was not read). */
  const delivered = new Map<number, number>();
  entries.forEach((e, i) => {
    // A user's client: the bridge's task and each fetch's task are plumbing (the request and its delivery are their own steps).
    if (service.client && CLIENT_PLUMBING.test(e.actor)) {
      // Except where the client gave up on a request (its fetch task's `aborted` line): a row of its own, and the
      // answer that comes later is told as late (it was drawn as an answer the worker received).
      const m = /^(.+)\.fetch(\d+)$/.exec(e.actor);
      if (m !== null && e.event.startsWith('aborted')) {
        const r = [...requests.values()].filter((q) => q.worker === m[1]).sort((x, y) => x.n - y.n)[Number(m[2]) - 1];
        if (r !== undefined) {
          state.timedOut.add(r.n);
          // An answer that reached the worker at this very instant was not read: the abort settled the fetch first.
          const d = delivered.get(r.n);
          if (d !== undefined && steps[d]!.t === e.t) steps[d] = { ...steps[d]!, text: `#${r.n}: the answer arrives as the client gives up on it (not read)` };
          push({ t: e.t, actor: m[1]!, event: 'aborted', db: after[i]!, line: formatEntry(e), kind: 'timeout', from: lane(m[1]!), text: `request #${r.n}: the client gives up on it (its own timeout or signal aborted the fetch)` });
        }
      }
      return;
    }
    addLeaseExpiries(states[prevDb], e.t, prevDb, state.leases, DB, push);
    const base = { t: e.t, actor: e.actor, event: e.event, db: after[i]!, line: formatEntry(e) };
    const req = requests.get(e.actor);
    if (e.event === RESUMED_SILENTLY) {
      push(resumed(e.actor, e.t, after[i]!));
      return;
    }
    if (e.actor === 'kernel' && e.event === 'choose') {
      const c = choices[decision++]!;
      const chosen = c.of[c.chosen]!;
      const task = chosen.slice(0, chosen.lastIndexOf(':'));
      const words = decisionWords(c, requests);
      // No raw `choose {…}` JSON on the page: the decision is said in words (the trace line stays in `retrysim replay --trace`).
      push({ ...base, line: '', kind: 'decision', from: lane(task), decision: words.decision, text: words.text });
      const nextDb = i + 1 < entries.length ? before[i + 1]! : final;
      const next = entries[i + 1];
      const logsItsOwn = next !== undefined && next.actor === task && isEffectLine(next.event);
      if (nextDb !== before[i] && !logsItsOwn) push(resumed(task, e.t, nextDb));
      return;
    }
    if (/^s\d+$/.test(e.actor)) {
      // kill and restart are the simulated network's; anything else a server logs is shown as it is, on its own row.
      const k = e.event === 'kill' ? 'kill' : e.event === 'restart' ? 'restart' : 'note';
      const text = k === 'kill' ? `kill -9 of ${e.actor} (${e.data?.inflight ?? 0} in flight; restarts after ${e.data?.restartAfterMs} ms)` : k === 'restart' ? `${e.actor} restarts (SQLite rows survive, memory is empty)` : `${e.actor}: ${e.event}`;
      push({ ...base, kind: k, from: lane(e.actor), text });
      return;
    }
    if (req === undefined) {
      // A worker (client) task.
      const from = lane(e.actor);
      if (e.event === 'timeout') {
        const n = Number(e.data?.request);
        state.timedOut.add(n);
        push({ ...base, kind: 'timeout', from, text: `request #${n}: no answer within ${e.data?.afterMs} ms — timeout` });
      } else if (e.event.startsWith('result ')) {
        const d = e.data ?? {};
        // The worker names the id after the service's noun (reportId for the tracker, paymentId, or id when there is no noun).
        const id = d.reportId ?? d[`${service.noun}Id`] ?? d.id;
        const text = e.event === 'result success' ? `result: success, ${id === undefined ? `an answer that names no ${service.noun}` : `${service.noun} id ${id}`}${d.replay ? ' (a replay)' : ''}` : `result: ${e.event.slice(7)} — ${String(d.error ?? '')}`;
        push({ ...base, kind: 'worker', from, text });
      } else if (e.event === 'threw' || e.event === 'killed') {
        push({ ...base, kind: 'error', from, text: `${e.event} ${String(e.data?.error ?? '')}` });
      } else {
        push({ ...base, kind: 'worker', from, text: e.event === 'spawn' ? `${e.actor} starts` : e.event === 'done' ? `${e.actor} ends` : e.event });
      }
      return;
    }
    const srv = lane(e.actor);
    const wl = lane(req.worker);
    const name = `#${req.n}`;
    if (e.event === 'spawn') {
      push({ ...base, kind: 'request', from: wl, to: srv, text: `${name} ${req.method} ${req.path} → s${req.server}${req.key !== undefined ? `, key ${req.key}` : ', no key'}` });
    } else if (e.event === 'refused') {
      state.answered.set(e.actor, 'refused');
      push({ ...base, kind: 'refused', from: srv, text: `${name}: connection refused (s${req.server} is down)` });
    } else if (isEffectLine(e.event)) {
      push({ ...base, kind: 'db', from: srv, to: DB, text: `${name} ${e.event}` });
    } else if (e.event.startsWith('answer ')) {
      state.answered.set(e.actor, 'answered');
      push({ ...base, kind: 'answer', from: srv, to: NET, text: `${name} answers ${answerText(e)}` });
    } else if (e.event === 'response lost') {
      state.answered.set(e.actor, 'lost');
      push({ ...base, kind: 'lost', from: NET, text: `${name}: the answer is lost on the way back` });
    } else if (e.event === 'done') {
      const how = state.answered.get(e.actor);
      const late = state.timedOut.has(req.n) ? ' (the client had already timed out)' : '';
      const text = how === 'answered' ? `${name}: the client receives the answer${late}` : how === 'lost' ? `${name}: the client sees the connection close${late}` : how === 'refused' ? `${name}: the client sees the refusal${late}` : `${name} ends`;
      push({ ...base, kind: 'delivered', from: NET, to: wl, text });
      delivered.set(req.n, steps.length - 1);
    } else if (e.event === 'killed') {
      push({ ...base, kind: 'killed', from: srv, text: `${name} dies with its server (no response, nothing after this point runs)` });
    } else if (e.event === 'threw') {
      push({ ...base, kind: 'error', from: srv, text: `${name} threw ${String(e.data?.error ?? '')}` });
    } else if (!serviceSteps.has(e.event)) {
      // Not one of the service's declared steps: a line the simulation adds (a pause, a slow step, a throttle). Its own row, in its own words.
      push({ ...base, kind: 'note', from: srv, text: `${name} ${e.event}` });
    } else {
      lastStep.set(e.actor, e.event);
      // A store command's step says on what and with which answer (`#2 kv.set order:k1 … → OK`), as replay's line does.
      const command = e.detail === undefined ? undefined : storeCommandSaid(e.event, e.detail);
      const step: Omit<Step, 'dbChange'> = { ...base, kind: 'phase', from: srv, text: `${name} ${e.event}${e.detail === undefined ? '' : ` ${e.detail}`}`, ...(command === undefined ? {} : { command }) };
      const scoped = req.key === undefined ? undefined : findKey(states[before[i]!]!, req);
      if (LOOKUPS.has(e.event) && req.key !== undefined && usesKeyTable(s.service.variant ?? '')) {
        const row = scoped;
        // A lease is judged on the reading server's clock (the run's time plus its instance's offset): with clocks apart,
        // "lease until 1823 ms → goes on" at t=802 ms read as a take-over before its time.
        const off = s.service.clockOffsetMs?.[req.server] ?? 0;
        const found = `${describeRow(row, e.t + off)}${off !== 0 && row?.status === 'in_progress' ? ` by s${req.server}'s clock (${Math.round((e.t + off) * 1000) / 1000} ms)` : ''}`;
        const outcome = nextPhase(entries, i) ? 'pass' : 'stop';
        step.check = { key: req.key, found, outcome };
        step.text = `${name} ${e.event}: key ${req.key} is ${found} → ${outcome === 'pass' ? (e.event === 'check' ? 'passes the check' : 'goes on') : 'answers without writing'}`;
      }
      push(step);
    }
  });
  addLeaseExpiries(states[prevDb], Infinity, prevDb, state.leases, DB, push);
  return { lanes, steps };
}

function usesKeyTable(variant: string): boolean {
  return variant.startsWith('key_');
}

function findKey(st: DbState, req: RequestInfo): KeyView | undefined {
  return st.keys.find((k) => {
    const u = unscopeKey(k.key);
    return u === undefined ? k.key === req.key : u.key === req.key && u.tenant === req.tenant;
  });
}

/** Whether the request went on after entry i (it logged another phase, or died) rather than answering. */
function nextPhase(entries: TraceEntry[], i: number): boolean {
  const actor = entries[i]!.actor;
  for (let j = i + 1; j < entries.length; j++) {
    const e = entries[j]!;
    if (e.actor !== actor || isEffectLine(e.event)) continue;
    // Killed or crashed after the lookup still means it went on; only an answer means it stopped there.
    return !e.event.startsWith('answer ') && e.event !== 'done';
  }
  return false;
}

/** Adds a derived step for every in-progress placeholder whose lease ran out before time `t`. */
function addLeaseExpiries(st: DbState | undefined, t: number, db: number, seen: Set<string>, DB: number, push: (s: Omit<Step, 'dbChange'>) => void): void {
  if (st === undefined) return;
  const due = st.keys
    .filter((k) => k.lease_until !== null && k.lease_until <= t && !seen.has(`${k.key}|${k.fence}|${k.locked_at}`))
    .sort((a, b) => a.lease_until! - b.lease_until!);
  for (const k of due) {
    seen.add(`${k.key}|${k.fence}|${k.locked_at}`);
    push({ t: k.lease_until!, kind: 'lease', actor: 'db', event: 'lease expired', from: DB, db, line: '', text: `lease of key ${shortKey(k.key)} (fence ${k.fence}, locked at ${k.locked_at} ms) runs out: the key can be taken over` });
  }
}

/** The requests whose answer reached their client in time (the `delivered` step that says so). */
function receivedAnswers(steps: readonly Step[]): Set<string> {
  return new Set(steps.filter((st) => st.kind === 'delivered' && st.text.endsWith(': the client receives the answer')).map((st) => st.actor));
}

export function pinViolations(s: Scenario, run: Pick<ObservableRun, 'reports' | 'violations'>, steps: Step[], states: DbState[], requests: Map<string, RequestInfo>, noun: string): ViolationAt[] {
  return run.violations.map((v) => {
    const op = s.operations.find((o) => o.id === v.op);
    const tenant = op?.tenant ?? 'default';
    const mine = (r: { run_id: string; tenant: string }) => op !== undefined && r.run_id === op.runId && r.tenant === tenant;
    const isOpActor = (actor: string) => actor.startsWith(`${v.op}.w`) || requests.get(actor)?.worker.startsWith(`${v.op}.w`) === true;
    const at = (step: number, why: string): ViolationAt => ({ ...v, step: step < 0 ? steps.length - 1 : step, why: step < 0 ? 'the end state breaks it' : why });
    if (v.invariant === 'exactly-one') {
      if (run.reports[v.op]! > 1) {
        // The tracker's rows say which report is whose; for any service, the operation's second effect line (`db: +N <noun>`, an app's `store: +N <noun>`) is where it appears.
        let added = 0;
        const i = s.service.module === undefined
          ? steps.findIndex((st) => states[st.db]!.reports.filter(mine).length >= 2)
          : steps.findIndex((st) => st.kind === 'db' && isOpActor(st.actor) && (added += effectsAdded(st.event) ?? 0) >= 2);
        return at(i, `the second ${noun} for ${v.op} appears here`);
      }
      const i = steps.findIndex((st) => isOpActor(st.actor) && st.event === 'result success');
      return at(i, `the client is told it succeeded, but no ${noun} for ${v.op} exists`);
    }
    if (v.invariant === 'id-exists' || v.invariant === 'tenant-isolation') {
      // The checkers name the id with the service's own noun (`received order 1`, `given payment id 3`);
      // the answer that carried it is the operation's first one whose body holds that number — or that
      // text: a text id (a UUID) is quoted in the detail (`received order '3f2a…'`) and found verbatim.
      const id = new RegExp(`\\b${noun.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:_id| id)? (\\d+|'[^']+')`).exec(v.detail)?.[1];
      const carries = (text: string) => id !== undefined && (id.startsWith("'")
        ? text.replace(/^#\d+ answers \d+/, '').includes(id.slice(1, -1))
        : new RegExp(`(^|[^\\d])${id}([^\\d]|$)`).test(text.replace(/^#\d+ answers \d+/, '')));
      // Only an answer the client received hands it anything: the same id in an answer lost on the way back (or one its
      // server died with) came before, and pinning that one shows a hand-over that never happened.
      const received = receivedAnswers(steps);
      const i = steps.findIndex((st) => st.kind === 'answer' && isOpActor(st.actor) && received.has(st.actor) && carries(st.text));
      return at(i, id === undefined ? `${v.op}'s client is handed another's ${noun} here` : `${v.op}'s client is handed ${noun} ${id} here`);
    }
    if (v.invariant === 'replay-equals-first') {
      // The first 2xx answer of the operation is the one every later 2xx must repeat; the step is the first that does not.
      const said = (st: Step) => st.text.replace(/^#\d+ answers /, '').replace(/ \(replay\)$/, '');
      // Only answers the client received count (as for the checker): one its server died with as it left, one lost on
      // the way back or one that came after the client's timeout is no success of the operation's.
      const received = receivedAnswers(steps);
      const ok = steps.map((st, i) => ({ st, i })).filter(({ st }) => st.kind === 'answer' && isOpActor(st.actor) && received.has(st.actor) && /^#\d+ answers 2\d\d\b/.test(st.text));
      const first = ok[0];
      const other = first === undefined ? undefined : ok.slice(1).find(({ st }) => said(st) !== said(first.st));
      if (first !== undefined && other !== undefined) return at(other.i, `${v.op}'s client is answered ${said(other.st)} here, where the first success was ${said(first.st)} (${/#\d+$/.exec(first.st.actor)?.[0] ?? first.st.actor})`);
      return at(-1, '');
    }
    if (v.invariant === 'key-reuse') {
      // The probe's request (the first of the operation sent after its `key-reuse probe` note) is answered here:
      // its last answer the client received, the acceptance (or the last of its 5xx). "The end state" named no request.
      const probe = steps.findIndex((st) => st.kind === 'worker' && isOpActor(st.actor) && st.event.startsWith(KEY_REUSE_PROBE));
      const received = receivedAnswers(steps);
      const answers = steps.map((st, i) => ({ st, i })).filter(({ st, i }) => i > probe && st.kind === 'answer' && isOpActor(st.actor) && received.has(st.actor));
      const last = probe < 0 ? undefined : answers[answers.length - 1];
      return last === undefined ? at(-1, '') : at(last.i, `the key sent again with another body is answered ${last.st.text.replace(/^#\d+ answers /, '')} here, where a refusal (a 4xx) was due`);
    }
    // progress is judged after the main run, on the resubmissions once the faults stopped: "the end state breaks it"
    // blamed this run's end, where the operation may hold nothing wrong yet (the second effect came in recovery).
    if (v.invariant === 'progress') return { ...v, step: steps.length - 1, why: 'the main run ends here; progress is judged on the resubmissions after the faults stopped (the recovery phase, folded below)' };
    if (v.invariant !== 'stable-key') return at(-1, '');
    // stable-key: the first request of the operation whose key differs from an earlier one of its worker.
    const firstKey = new Map<string, string | undefined>();
    const i = steps.findIndex((st) => {
      const r = st.kind === 'request' ? requests.get(st.actor) : undefined;
      if (r === undefined || !r.worker.startsWith(`${v.op}.w`)) return false;
      if (!firstKey.has(r.worker)) {
        firstKey.set(r.worker, r.key);
        return false;
      }
      return firstKey.get(r.worker) !== r.key;
    });
    return at(i, `${v.op} sends a different key on a retry here`);
  });
}

/** The command a store step ran when its line names none (a plain `get`, `set`, `del`, `incr`, …): Redis's name for it. */
const STORE_VERBS: Record<string, string> = { 'kv.get': 'GET', 'kv.set': 'SET', 'kv.del': 'DEL', 'kv.incr': 'INCR', 'kv.pexpire': 'PEXPIRE', 'kv.pttl': 'PTTL', 'kv.putIf': 'putIf', 'kv.exec': 'EXEC', 'kv.watch': 'WATCH' };

/**
 * A hosted app's store step in a few words, from its trace detail
 * (`kv.set lock:idem:k "1" NX EX 5 → OK` is `SET NX lock`; `kv.incr INCRBY
 * seq 1 → 2` is `INCRBY seq`): the command, SET's NX or XX, and the first
 * segment of its key. Undefined for a step that is not the store's.
 */
export function storeCommandSaid(event: string, detail: string): string | undefined {
  const plain = STORE_VERBS[event];
  if (plain === undefined) return undefined;
  const call = detail.split(' → ')[0]!;
  const words = call.split(' ');
  const named = /^[A-Z][A-Z]+$/.test(words[0] ?? '');
  const verb = named ? words[0]! : plain;
  // EXEC's line lists its keys and then its commands in brackets: the command is the story.
  if (event === 'kv.exec') return verb;
  const key = words[named ? 1 : 0];
  const mode = event === 'kv.set' && !named ? / (NX|XX)\b/.exec(call)?.[1] : undefined;
  const head = key === undefined || key === '' || key.startsWith('"') ? '' : ` ${key.split(':')[0]}`;
  return `${verb}${mode ? ` ${mode}` : ''}${head}`;
}
