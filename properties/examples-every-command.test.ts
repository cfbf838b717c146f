/**
 * Every example service under examples/ through every command, as a user
 * runs them (`node bin/retrysim.js …`, files in a temp dir): check with each
 * search (random, pct, exhaustive) — table, --json and exit code agree on
 * the verdict its examples/<name>/expect.json states; every file a failing
 * check writes replays (plain, --trace, --json, --html), reads in the
 * service's own words, and is minimal by brute force (no schedule with
 * fewer preemptions fails, no one-step simplification fails at all within
 * as many); serve answers its operation and a retry of it, then stops on
 * SIGTERM; flaky studies it. App examples (app*.ts) go through --app.
 *
 * conformance is run for one example only (two-transactions): it starts real
 * server processes and kill -9s them, tens of seconds per service with all
 * its columns (`retrysim conformance --service examples/<name>/service.ts`).
 * Not here: the vitest helper (each example's own service.test.ts runs it,
 * `npx vitest run --config examples/vitest.config.ts`), and the retry-client
 * example (examples/fetch-retry-client: a client, `check --client`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, ServerProcess } from '../src/real/child.js';
import { httpSend } from '../src/real/http-transport.js';
import { tempDirs } from '../src/testing/temp-dirs.js';
import { loadService } from '../src/service/load.js';
import { loadScenario, parseScenario } from '../src/scenario/load.js';
import { runScenario, type ScenarioRun } from '../src/scenario/run.js';
import { SCENARIO_FORMAT, type Scenario } from '../src/scenario/schema.js';
import { simplifications } from '../src/campaign/minimise.js';
import { searchBounded } from '../src/sim/explore/bounded.js';
import type { ServiceDefinition } from '../src/service/definition.js';

const root = join(import.meta.dirname, '..');
const tmp = tempDirs();

type Verdict = 'holds' | 'fails' | 'inconclusive';
type Explore = 'random' | 'pct' | 'exhaustive';
const EXPLORES: Explore[] = ['random', 'pct', 'exhaustive'];

/** One module of an example, as its expect.json states it. */
interface ModuleExpect {
  path: string;
  /** An unmodified Node app (`--app`), not a ServiceDefinition. */
  app?: boolean;
  verdict: Verdict;
  /** The invariant a failing check names. */
  invariant?: string;
  /** Per search, where it differs (e.g. exhaustive's small scenarios cannot reach the bug). */
  explore?: Partial<Record<Explore, { verdict: Verdict; invariant?: string }>>;
  /** The searches to run (default all three), with why some are left out. */
  searches?: Explore[];
  searchesWhy?: string;
  /** --runs per search, where the default does not fit. */
  runs?: Partial<Record<Explore, number>>;
  /**
   * Bugs found elsewhere in retrysim that this example shows, each with how to
   * reproduce it: the test asserts the bug as it is (and goes red, asking to
   * drop the entry, once it is fixed).
   */
  knownBugs?: {
    /** The minimiser cannot show the counterexample of this search minimal. */
    notMinimal?: Partial<Record<Explore, string>>;
    /** `flaky --service` refuses the service (exit 2) with this message part. */
    flaky?: string;
  };
  /** The status a same-key retry gets under serve, when it is not the first answer's. */
  serveRetryStatus?: number;
}

/** Default --runs: random and pct scenarios; exhaustive schedules per small scenario (enough for the holding examples to finish). */
const RUNS: Record<Explore, number> = { random: 200, pct: 200, exhaustive: 1000 };
const EXIT: Record<Verdict, number> = { holds: 0, fails: 1, inconclusive: 4 };
/** The built-in tracker's words, which a user's service never uses. */
const TRACKER_WORDS = [/\breport(s|_id)?\b/i, /toolu_/, /tool call/i, /\/reports\b/];

const examplesDir = join(root, 'examples');
const exampleDirs = readdirSync(examplesDir).filter((d) => statSync(join(examplesDir, d)).isDirectory()).sort();

/** A folder holding a service or an app module (what a user passes to --service or --app). */
function moduleFiles(dir: string): string[] {
  return readdirSync(join(examplesDir, dir)).filter((f) => /^(service|app[\w-]*)\.ts$/.test(f) && !f.endsWith('.test.ts'));
}

function manifest(dir: string): ModuleExpect[] {
  const f = join(examplesDir, dir, 'expect.json');
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as { modules: ModuleExpect[] }).modules : [];
}

describe('every example module has its expectation', () => {
  it('each examples/<name> with a service.ts or app*.ts lists every one of them in its expect.json', () => {
    for (const d of exampleDirs) {
      const listed = manifest(d).map((m) => m.path).sort();
      expect(listed, `examples/${d}/expect.json`).toEqual(moduleFiles(d).sort());
    }
  });
});

interface CheckJson {
  verdict: Verdict;
  ok: boolean;
  runs: number;
  violations: string[];
  counterexample: string | null;
  shrunkSize: { preemptions: number } | null;
  notMinimal: string[];
  preemptionsMinimal: boolean | null;
  replay: string | null;
}

/** The expectation under one search. */
function expected(m: ModuleExpect, x: Explore): { verdict: Verdict; invariant?: string } {
  return m.explore?.[x] ?? { verdict: m.verdict, ...(m.invariant !== undefined ? { invariant: m.invariant } : {}) };
}

/**
 * The fewest preemptions among the failing schedules of `s` that have at
 * most `bound`, by running every one of them (iterative preemption bounding,
 * src/sim/explore/bounded.ts, with no run budget that could cut it short):
 * undefined when none fails. Throws when the enumeration could not finish.
 */
async function fewestFailingPreemptions(def: ServiceDefinition, s: Scenario, isHit: (r: ScenarioRun) => boolean, bound: number): Promise<number | undefined> {
  const r = await searchBounded((choices) => runScenario(s, { choices, service: def, hashTrace: false }), isHit, { preemptionsMax: bound, runsMax: 200_000 });
  if (!r.complete) throw new Error(`brute force incomplete for ${s.name}: ${r.runs} runs`);
  return r.best?.preemptions;
}

/**
 * Why `s` is not a minimal way to break `invariant` (empty when it is): no
 * schedule of it fails with fewer preemptions than its file has, and no
 * one-step simplification (src/campaign/minimise.ts's list, the one the
 * minimiser tries) fails with as many or fewer. Only schedules within the
 * file's preemption count decide that, so only those are enumerated — all
 * of them — rather than every schedule of the case
 * (src/campaign/minimise.test.ts does that for a few services; for the
 * hosted apps here it would take minutes per file).
 */
async function whyNotMinimal(def: ServiceDefinition, s: Scenario, invariant: string): Promise<string[]> {
  const isHit = (x: ScenarioRun) => x.violations.some((v) => v.invariant === invariant);
  const p = s.schedule.filter((c) => c.preempted).length;
  const why: string[] = [];
  const fewest = await fewestFailingPreemptions(def, s, isHit, p);
  if (fewest !== p) why.push(`the fewest preemptions of a failing schedule is ${fewest ?? 'none within ' + p}, the file has ${p}`);
  for (const simpler of simplifications(s)) {
    const f = await fewestFailingPreemptions(def, simpler.scenario, isHit, p);
    if (f !== undefined) why.push(`${simpler.what} still fails with ${f} preemption(s)`);
  }
  return why;
}

/** A scenario without what only names it: two searches often write the same case. */
function caseKey(s: Scenario): string {
  const { name: _n, description: _d, ...rest } = s as Scenario & { description?: string };
  return JSON.stringify(rest);
}

/** The HTTP request of one logical operation, as the built-in client sends it. */
function operationRequest(def: ServiceDefinition, key: string) {
  const op = { runId: 'sweep-1', module: 'checkout', title: 'Pay fails', steps: 'press Pay', tenant: 'default' };
  return {
    method: def.operation.method ?? 'POST',
    path: typeof def.operation.path === 'string' ? def.operation.path : def.operation.path(op),
    headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': 'default' },
    body: def.operation.body(op),
  };
}

const all = exampleDirs.flatMap((d) => manifest(d).map((m) => ({ dir: d, m, module: `examples/${d}/${m.path}` })));

for (const { m, module } of all) {
  const flag = m.app ? '--app' : '--service';
  describe.sequential(`${module} (${flag})`, () => {
    let defP: Promise<ServiceDefinition> | undefined;
    const def = () => (defP ??= loadService(join(root, module)));

    // The searches are independent processes: the first test starts them all, each test reads its own.
    const searches = m.searches ?? EXPLORES;
    type Ran = { r: Awaited<ReturnType<typeof runCli>>; table?: Awaited<ReturnType<typeof runCli>>; found: string; found2: string };
    let started: Map<Explore, Promise<Ran>> | undefined;
    const ran = (x: Explore): Promise<Ran> => {
      started ??= new Map(searches.map((y) => [y, (async (): Promise<Ran> => {
        const found = tmp('rs-sweep-found-');
        const found2 = tmp('rs-sweep-found-');
        // A shrink limit far past any example's shrinking: the files are judged minimal below, on any machine's speed.
        const args = ['check', flag, module, '--runs', String(m.runs?.[y] ?? RUNS[y]), '--seed', '1', '--explore', y, '--shrink-budget', '1h'];
        // Services only, the random search: the table beside --json (an app's check is the same command, at several times the cost).
        const [r, table] = await Promise.all([
          runCli([...args, '--found', found, '--json'], 240_000),
          y === 'random' && !m.app ? runCli([...args, '--found', found2], 240_000) : undefined,
        ]);
        return { r, found, found2, ...(table ? { table } : {}) };
      })()]));
      return started.get(x)!;
    };

    /** The files the failing searches wrote (known-bug ones aside), whichever tests ran before. */
    const filesOf = async (): Promise<Array<{ explore: Explore; file: string; invariant: string }>> => {
      const out: Array<{ explore: Explore; file: string; invariant: string }> = [];
      for (const x of searches) {
        const want = expected(m, x);
        if (want.verdict !== 'fails' || m.knownBugs?.notMinimal?.[x] !== undefined) continue;
        const j = JSON.parse((await ran(x)).r.stdout) as CheckJson;
        if (j.counterexample !== null) out.push({ explore: x, file: j.counterexample, invariant: want.invariant! });
      }
      return out;
    };

    for (const x of searches) {
      const want = expected(m, x);
      it(`check --explore ${x}: ${want.verdict}${want.invariant ? ` on ${want.invariant}` : ''}; --json and exit code agree`, async () => {
        const { r, table: t, found2 } = await ran(x);
        const j = JSON.parse(r.stdout) as CheckJson;
        expect(j.verdict, r.stderr).toBe(want.verdict);
        expect(r.code).toBe(EXIT[want.verdict]);
        if (t !== undefined) {
          // The table says what --json says, with the same exit code, and the same seed writes the same file.
          expect(t.code).toBe(r.code);
          expect(t.stdout).toMatch(new RegExp(`│ ${want.verdict === 'inconclusive' ? '\\?' : '[✓✗]'} │[^\\n]*│ ${want.verdict}\\s+│`));
          if (j.counterexample !== null) {
            expect(t.stdout).toContain(want.invariant);
            const name = j.counterexample.split('/').pop()!;
            expect(readFileSync(join(found2, name), 'utf8')).toBe(readFileSync(j.counterexample, 'utf8'));
          }
        }
        if (want.verdict !== 'fails') {
          expect(j.counterexample).toBeNull();
          return;
        }
        expect(j.violations).toContain(want.invariant);
        expect(j.counterexample).not.toBeNull();
        expect(existsSync(j.counterexample!)).toBe(true);
        const bug = m.knownBugs?.notMinimal?.[x];
        if (bug !== undefined) {
          // A known bug (expect.json says which): the minimiser says what it could not show; no file to hold to minimality.
          expect(j.notMinimal.length, `fixed? drop knownBugs.notMinimal.${x} from examples/…/expect.json: ${bug}`).toBeGreaterThan(0);
          expect(r.code).toBe(1);
          return;
        }
        // The minimiser claims minimality outright: nothing it could not try.
        expect(j.notMinimal, j.notMinimal.join('\n')).toEqual([]);
        expect(j.preemptionsMinimal).toBe(true);
        // The flag the user gave: --app for an app module.
        expect(j.replay).toContain(`${flag} ${module}`);
        expect(loadScenario(j.counterexample!).expect.violations).toContain(want.invariant);
      }, 300_000);
    }

    it('every counterexample replays: plain, --trace (the service\'s own words), --json, --html', async () => {
      const d = await def();
      const files = await filesOf();
      if (expected(m, 'random').verdict !== 'fails') {
        expect(files).toEqual([]);
        return;
      }
      expect(files.length).toBeGreaterThan(0);
      const seen = new Set<string>();
      const distinct = files.filter(({ file, invariant }) => {
        // Two searches often write the same case (another name only): its replay is the same run.
        const key = caseKey(loadScenario(file)) + invariant;
        return !seen.has(key) && seen.add(key);
      });
      // Every replay is its own process: run them side by side.
      const htmlDir = tmp('rs-sweep-html-');
      const html = (file: string) => join(htmlDir, `${file.split('/').pop()}.html`);
      const [plain, ...each] = await Promise.all([
        runCli(['replay', flag, module, files[0]!.file]),
        ...distinct.flatMap(({ file }) => [runCli(['replay', flag, module, file, '--trace', '--html', html(file)]), runCli(['replay', flag, module, file, '--json'])]),
      ]);
      expect(plain!.code, plain!.stdout + plain!.stderr).toBe(0);
      expect(plain!.stdout).toMatch(/expect: met/);
      distinct.forEach(({ file, invariant }, i) => {
        const tr = each[2 * i]!;
        const js = each[2 * i + 1]!;
        expect(tr.code, tr.stdout + tr.stderr).toBe(0);
        expect(tr.stdout).toMatch(/timeline:/);
        expect(tr.stdout).toContain(invariant);
        for (const w of TRACKER_WORDS) expect(tr.stdout, `${file}: the tracker's word ${w} in a trace of ${d.name}`).not.toMatch(w);
        // The attempts and the effects held are named with the service's noun (else "effects").
        if (d.effects.noun !== undefined) expect(tr.stdout).toMatch(new RegExp(`^${d.effects.noun}s? held: `, 'm'));
        const out = html(file);
        expect(statSync(out).size).toBeGreaterThan(1000);
        expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>/i);
        expect(js.code, js.stderr).toBe(0);
        const j = JSON.parse(js.stdout) as { expectMet: boolean; traceHash: string; violations: Array<{ invariant: string }> };
        expect(j.expectMet).toBe(true);
        expect(j.violations.map((v) => v.invariant)).toContain(invariant);
        // One truth: the hash --json reports is the one the text prints.
        expect(tr.stdout).toContain(`trace ${j.traceHash}`);
      });
    }, 180_000);

    it('every counterexample is minimal by brute force', async () => {
      const d = await def();
      const seen = new Set<string>();
      for (const { file, invariant } of await filesOf()) {
        const sc = loadScenario(file);
        if (seen.has(caseKey(sc) + invariant)) continue;
        seen.add(caseKey(sc) + invariant);
        expect(await whyNotMinimal(d, sc, invariant), file).toEqual([]);
      }
    }, 180_000);

    it('serve: the operation answered 2xx, a retry with the same key answered as the service answers it, SIGTERM ends it', async () => {
      const d = await def();
      const s = new ServerProcess({ module, dbPath: join(tmp('rs-sweep-serve-'), 'db.sqlite'), admin: false });
      let stopped = false;
      try {
        const port = await s.start();
        const req = operationRequest(d, 'sweep-key-1');
        const a = await httpSend(port, req, 10_000);
        if (a.kind !== 'response') throw new Error(`${req.method} ${req.path}: ${a.reason}`);
        expect(a.status, a.body).toBeGreaterThanOrEqual(200);
        expect(a.status, a.body).toBeLessThan(300);
        const b = await httpSend(port, req, 10_000);
        if (b.kind !== 'response') throw new Error(`${req.method} ${req.path} again: ${b.reason}`);
        expect(b.status).toBe(m.serveRetryStatus ?? a.status);
        // A replayed 2xx acknowledges the same effect.
        const id = d.operation.resultId ?? ((body: string) => (JSON.parse(body) as { id?: number }).id);
        if (b.status < 300) expect(id(b.body, b.headers)).toBe(id(a.body, a.headers));
        // A clean exit (code 0, no signal) is the check: stop() sends SIGKILL only after its 5 s grace.
        const e = await s.stop(5_000);
        stopped = true;
        expect(e).toEqual({ code: 0, signal: null });
      } finally {
        if (!stopped) await s.stop(1_000);
      }
    }, 60_000);

    // Apps: their virtual-time runs are on the simulation's host (an app's turns are the host's to give).
    it(`flaky ${flag}: the lab runs on it, in its own words`, async () => {
      const d = await def();
      const r = await runCli(['flaky', flag, module, '--runs', '3', '--schedules-max', '100', '--stagger-max-ms', '5', '--json']);
      if (m.knownBugs?.flaky !== undefined) {
        expect(r.code, `fixed? drop knownBugs.flaky from examples/…/expect.json`).toBe(2);
        expect(r.stderr).toContain(m.knownBugs.flaky);
        return;
      }
      const j = JSON.parse(r.stdout) as { verdict: 'holds' | 'fails'; options: { service: { name: string } }; wallClock: { runs: number }; virtualTime: { runs: number; how: string }; simulated: { staggers: unknown[] } };
      // One truth: the lab judges the campaign's invariants and exits 1 when one fails; a service the campaign holds, the lab holds too.
      expect(r.code, r.stderr).toBe(j.verdict === 'fails' ? 1 : 0);
      if (m.verdict === 'holds') expect(j.verdict).toBe('holds');
      expect(j.options.service.name).toBe(d.name);
      expect(j.wallClock.runs).toBe(3);
      expect(j.virtualTime.runs).toBe(3);
      expect(j.virtualTime.how).toBe(m.app ? 'simulation host' : 'fake timers');
      expect(j.simulated.staggers.length).toBeGreaterThan(0);
    }, 60_000);
  });
}

describe('conformance, one example and four of its columns (real processes and kill -9s, seconds each: the others are left out for time)', () => {
  it('two-transactions: the simulation and real server processes agree, cell by cell', async () => {
    // The columns where its two transactions matter: a crash between them, a concurrent twin, a real SIGKILL before the key is remembered.
    const columns = 'no_fault,crash_at:between-transactions,concurrent_duplicate,kill_at:remember';
    const r = await runCli(['conformance', '--service', 'examples/two-transactions/service.ts', '--columns', columns, '--json'], 120_000);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { service: string; cells: Array<{ column: string; same: boolean }>; differences: number };
    expect(j.service).toBe('two-transactions');
    expect(j.differences).toBe(0);
    expect(j.cells.map((c) => c.column)).toEqual(columns.split(','));
  }, 120_000);
});

describe('the brute-force minimality check can fail', () => {
  it('a replay-differs case with a third, unneeded worker is called not minimal (the worker can go)', async () => {
    const def = await loadService(join(root, 'examples/replay-differs/service.ts'));
    const s = parseScenario(JSON.stringify({
      format: SCENARIO_FORMAT,
      name: 'replay-differs: one worker too many',
      seed: 1,
      service: { module: 'examples/replay-differs/service.ts' },
      client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 2000 },
      operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', steps: 'press Pay', workers: 3 }],
      expect: {},
    }));
    const why = await whyNotMinimal(def, s, 'replay-equals-first');
    expect(why.join('\n')).toMatch(/worker of op1 \(3 → 2\) still fails with 0 preemption/);
  }, 60_000);
});
