/**
 * The floor of `npm run bench -- floor`: what N scenarios of a claim's
 * campaign cost with no JavaScript around the work that has to happen.
 * Three parts, each measured in CPU time on this thread:
 *
 * - the SQLite statement stream the service executed during the N scenarios,
 *   recorded statement by statement (with parameters) by wrapping
 *   better-sqlite3's Statement methods and `exec` in a recording pass, then
 *   replayed on a fresh database with nothing in between;
 * - fast-check generation of the same N cases with the claim's arbitrary;
 * - as many bare promise hand-offs as the kernels made task switches in the
 *   recording pass (main run and recovery phase).
 *
 * Nothing here changes how a campaign runs: the wrappers exist only inside
 * {@link recordStream} and are removed before it returns.
 */
import Database from 'better-sqlite3';
import { claimById } from '../src/campaign/claims.js';
import { claimSeed } from '../src/campaign/job.js';
import { arbitraryFor, failsFor } from '../src/campaign/run.js';
import { caseAt } from '../src/campaign/runs.js';
import { runScenario } from '../src/scenario/run.js';
import { ListChoice } from '../src/sim/choice/list.js';
import { Kernel } from '../src/sim/kernel.js';

type Method = 'run' | 'get' | 'all' | 'exec';

/** One recorded call: which statement (or `exec` of which SQL) on which connection, with what parameters. */
interface Call {
  db: number;
  /** Index into {@link Stream.statements}; -1 for `exec`. */
  stmt: number;
  method: Method;
  args: unknown[];
  /** exec's SQL. */
  sql?: string;
  /** The result as JSON (for the replay's fidelity check), or 'throw:<message>'. */
  result: string;
}

/** A recorded statement stream. */
export interface Stream {
  /** Per connection: its content when recording started (SQLite's serialization), what the replay starts from. */
  snapshots: Buffer[];
  statements: Array<{ db: number; source: string; pluck: boolean; raw: boolean; expand: boolean }>;
  calls: Call[];
  /** Kernel task switches (steps), main runs and recovery phases together. */
  taskSwitches: number;
  /** Kernels run (a main run, plus a recovery phase when one was needed). */
  kernels: number;
  scenarios: number;
}

type Stmt = Database.Statement & { database: Database.Database; source: string; reader: boolean };

const json = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)) ?? 'undefined';

/**
 * What the fidelity check compares: rows read, rows changed, and the new
 * row's id of an INSERT (a connection's last insert id otherwise carries
 * over from statements before, which a fresh connection has not seen).
 */
function resultOf(method: Exclude<Method, 'exec'>, source: string, r: unknown): string {
  if (method !== 'run') return json(r);
  const x = r as Database.RunResult;
  return /^\s*INSERT/i.test(source) && x.changes > 0 ? json(x) : `changes ${x.changes}`;
}

/**
 * Runs run indices 0..n-1 of a claim's campaign (as `check --claim ID --seed S`
 * generates and judges them) and records every SQL statement executed and
 * every kernel task switch. `warm` scenarios run first, unrecorded, so the
 * cached database and its prepared statements exist before recording starts.
 */
export async function recordStream(claimId: string, seed: number, n: number): Promise<Stream> {
  const claim = claimById(claimId);
  const arb = arbitraryFor(claim);
  const fails = failsFor(claim);
  const cs = claimSeed(seed, claimId);
  const one = async (i: number) => {
    const c = caseAt(arb, cs, i).value;
    const r = await runScenario(c.scenario, { choices: new ListChoice(c.choices), hashTrace: false });
    if (fails(r)) throw new Error(`floor bench: run ${i + 1} of ${claimId} fails (${r.violations.map((v) => v.invariant).join(', ')}); the floor is measured on a holding claim`);
  };
  const probe = new Database(':memory:');
  const SP = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  const DP = Database.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  const saved = { run: SP.run!, get: SP.get!, all: SP.all!, iterate: SP.iterate!, pluck: SP.pluck!, raw: SP.raw!, expand: SP.expand!, exec: DP.exec! };
  const kernelRun = Kernel.prototype.run;

  const stream: Stream = { snapshots: [], statements: [], calls: [], taskSwitches: 0, kernels: 0, scenarios: n };
  const dbs = new Map<Database.Database, number>();
  const ids = new WeakMap<object, number>();
  const modes = new WeakMap<object, { pluck: boolean; raw: boolean; expand: boolean }>();
  const dbId = (d: Database.Database) => {
    let id = dbs.get(d);
    if (id === undefined) {
      dbs.set(d, (id = dbs.size));
      // Seen for the first time, before its first recorded call runs: the
      // replay's fresh database starts from this content (what the warm-up left).
      stream.snapshots[id] = d.serialize();
    }
    return id;
  };
  const stmtId = (s: Stmt) => {
    let id = ids.get(s);
    if (id === undefined) {
      const m = modes.get(s) ?? { pluck: false, raw: false, expand: false };
      ids.set(s, (id = stream.statements.length));
      stream.statements.push({ db: dbId(s.database), source: s.source, ...m });
    }
    return id;
  };
  const record = (method: Exclude<Method, 'exec'>) =>
    function (this: Stmt, ...args: unknown[]) {
      const call: Call = { db: dbId(this.database), stmt: stmtId(this), method, args, result: '' };
      stream.calls.push(call);
      try {
        const r = saved[method].apply(this, args);
        call.result = resultOf(method, this.source, r);
        return r;
      } catch (e) {
        call.result = `throw:${(e as Error).message}`;
        throw e;
      }
    };
  const mode = (k: 'pluck' | 'raw' | 'expand') =>
    function (this: Stmt, on?: unknown) {
      // A mode changed after the statement's first recorded use would change its results mid-stream: the replay would not be this stream.
      if (ids.has(this)) throw new Error(`floor bench: statement '${this.source}' changed its ${k} mode after it ran`);
      const m = modes.get(this) ?? { pluck: false, raw: false, expand: false };
      // better-sqlite3: pluck/raw/expand are exclusive; turning one on turns the others off.
      const v = on !== false;
      modes.set(this, v ? { pluck: false, raw: false, expand: false, [k]: true } : { ...m, [k]: false });
      return on === undefined ? saved[k].call(this) : saved[k].call(this, on);
    };
  // Modes are watched from the start: the statements the first scenario
  // prepares (and caches for every later one) set theirs before recording.
  SP.pluck = mode('pluck');
  SP.raw = mode('raw');
  SP.expand = mode('expand');
  try {
    await one(0); // creates the cached database and prepares its statements
    SP.run = record('run');
    SP.get = record('get');
    SP.all = record('all');
    SP.iterate = function (this: Stmt) {
      throw new Error(`floor bench: statement '${this.source}' used iterate(), which the recorder does not replay`);
    };
    DP.exec = function (this: Database.Database, sql: unknown) {
      const call: Call = { db: dbId(this), stmt: -1, method: 'exec', args: [], sql: String(sql), result: '' };
      stream.calls.push(call);
      try {
        return saved.exec.call(this, sql);
      } catch (e) {
        call.result = `throw:${(e as Error).message}`;
        throw e;
      }
    };
    Kernel.prototype.run = async function (this: Kernel) {
      stream.kernels++;
      try {
        return await kernelRun.call(this);
      } finally {
        stream.taskSwitches += this.steps;
      }
    };
    for (let i = 0; i < n; i++) await one(i);
  } finally {
    Object.assign(SP, { run: saved.run, get: saved.get, all: saved.all, iterate: saved.iterate, pluck: saved.pluck, raw: saved.raw, expand: saved.expand });
    DP.exec = saved.exec;
    Kernel.prototype.run = kernelRun;
  }
  return stream;
}

/** A stream ready to replay: a fresh database per recorded connection, every statement prepared (not timed). */
export function prepareReplay(s: Stream, keep: (source: string) => boolean = () => true): { run: (check: boolean) => { mismatches: string[] }; close: () => void } {
  const conns = s.snapshots.map((snap) => new Database(snap));
  const stmts = s.statements.map((st) => {
    const p = conns[st.db]!.prepare(st.source);
    if (st.pluck) p.pluck();
    else if (st.raw) p.raw();
    else if (st.expand) p.expand();
    return p as unknown as Record<Method, (...a: unknown[]) => unknown>;
  });
  const calls = s.calls.filter((c) => c.stmt < 0 || keep(s.statements[c.stmt]!.source)).map((c) => ({ c, st: c.stmt >= 0 ? stmts[c.stmt]! : undefined, throws: c.result.startsWith('throw:'), db: conns[c.db]! }));
  return {
    run(check: boolean) {
      const mismatches: string[] = [];
      for (const { c, st, throws, db } of calls) {
        let r: unknown;
        if (throws) {
          try {
            if (st) st[c.method](...c.args);
            else db.exec(c.sql!);
          } catch (e) {
            r = `throw:${(e as Error).message}`;
          }
        } else if (st) r = st[c.method](...c.args);
        else db.exec(c.sql!);
        if (check && st !== undefined && !s.statements[c.stmt]!.source.includes('total_changes')) {
          const got = throws ? (r as string) : resultOf(c.method as Exclude<Method, 'exec'>, s.statements[c.stmt]!.source, r);
          if (got !== c.result && mismatches.length < 5) mismatches.push(`${s.statements[c.stmt]!.source} ${json(c.args)}: recorded ${c.result}, replayed ${got}`);
        }
      }
      return { mismatches };
    },
    close() {
      for (const d of conns) d.close();
    },
  };
}

/** CPU µs (user + system) that `fn` takes. */
export async function cpuUs(fn: () => unknown): Promise<number> {
  const t0 = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(t0);
  return d.user + d.system;
}

/** fast-check generation alone: run indices 0..n-1 of the claim's arbitrary, nothing run. */
export function generate(claimId: string, seed: number, n: number): number {
  const arb = arbitraryFor(claimById(claimId));
  const cs = claimSeed(seed, claimId);
  let sink = 0;
  for (let i = 0; i < n; i++) sink += caseAt(arb, cs, i).value.choices.length;
  return sink;
}

/**
 * `switches` minimal task switches: a scheduler loop and one task handing
 * control back and forth through promises, as the kernel's step does (the
 * loop awaits "parked", the task awaits its resume) with nothing else.
 */
export async function handOffs(switches: number): Promise<void> {
  let parked: (() => void) | undefined;
  let resume: (() => void) | undefined;
  const park = () =>
    new Promise<void>((r) => {
      resume = r;
      const p = parked;
      parked = undefined;
      p?.();
    });
  const task = async () => {
    for (;;) await park();
  };
  void task(); // parks at once: resume is set
  for (let i = 0; i < switches; i++) {
    const done = new Promise<void>((r) => (parked = r));
    const go = resume!;
    resume = undefined;
    go();
    await done;
  }
}
