// How an app's modules were loaded is part of a scenario file's contract
// (service.moduleLoads): a counterexample `check --app` found with one
// module load per simulated process replays so with a bare `retrysim
// replay`, where until 2026-12 it replayed only when the user set
// RETRYSIM_APP_PER_PROCESS=1 by hand (the printed line said so). The probe
// on every path that judges an app: src/app/module-probe.test.ts.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { parseScenario, printScenario, ScenarioError } from '../scenario/load.js';

const tmp = tempDirs();
const fixture = 'src/app/fixtures/module-store-app.ts';
const claimApp = 'examples/app-plain-http/app-claim.ts';
const FAULTS = ['--faults', 'instances,kill,loseResponse'];
/** The CLI in a process of its own, as a user runs it: RETRYSIM_APP_PER_PROCESS unset. */
const cli = runCliProcess;

describe('service.moduleLoads: a per-process counterexample replays as found', () => {
  it('check --app writes it into the file, and a bare replay (no environment variable) gives the same verdict, exit 0', () => {
    const found = tmp('rs-modloads-');
    const c = cli(['check', '--app', fixture, '--runs', '30', ...FAULTS, '--json', '--found', found, '--html', join(found, 'html')]);
    expect(c.status, c.stderr).toBe(1);
    // check's own page of the counterexample runs it as found: one module load per process, the failure drawn.
    const checkPage = readFileSync(join(found, 'html', readdirSync(join(found, 'html')).find((f) => f !== 'index.html')!), 'utf8');
    expect(checkPage).toContain('"moduleLoads":"per-process"');
    expect(checkPage).toContain('"invariant":"exactly-one"');
    const j = JSON.parse(c.stdout) as { counterexample: string; replay: string; violations: string[]; moduleLoads: string; moduleProbe: unknown };
    expect(j).toMatchObject({ moduleLoads: 'per-process', moduleProbe: { runs: 30, verdict: 'fails' } });
    // The printed replay line is the whole command: nothing to set before it.
    expect(j.replay).toMatch(/^retrysim replay --app src\/app\/fixtures\/module-store-app\.ts /);
    const file = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { service: Record<string, unknown> };
    expect(file.service.moduleLoads).toBe('per-process');
    const r = cli(['replay', '--app', fixture, j.counterexample, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const rj = JSON.parse(r.stdout) as { moduleLoads: string; expectMet: boolean; violations: Array<{ invariant: string }> };
    expect(rj.moduleLoads).toBe('per-process');
    expect(rj.expectMet).toBe(true);
    expect([...new Set(rj.violations.map((v) => v.invariant))]).toEqual(j.violations);
    const text = cli(['replay', '--app', fixture, j.counterexample]);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain("module loads: one per simulated process (what the app keeps at module level is each process's own) — the file's service.moduleLoads");
    // RETRYSIM_APP_PER_PROCESS=0 overrides the file: loaded once, the app holds, so the file's expect is not met.
    const once = cli(['replay', '--app', fixture, j.counterexample, '--json'], { RETRYSIM_APP_PER_PROCESS: '0' });
    expect(once.status).toBe(1);
    expect(JSON.parse(once.stdout)).toMatchObject({ moduleLoads: 'once', expectMet: false, violations: [] });
    // The stepper page says it too.
    const page = join(found, 'page.html');
    expect(cli(['replay', '--app', fixture, j.counterexample, '--html', page]).status).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain('"moduleLoads":"per-process"');
  }, 120_000);

  it('a bad value, the field on a built-in variant, or on a service module: one issue, exit 2, nothing on stdout', () => {
    const dir = tmp('rs-modloads-');
    const base = JSON.parse(readFileSync('scenarios/found/key_atomic-exactly-one-066b86b1.json', 'utf8')) as { service: Record<string, unknown> };
    const write = (name: string, service: Record<string, unknown>) => {
      const f = join(dir, name);
      writeFileSync(f, JSON.stringify({ ...base, service }));
      return f;
    };
    const bad = cli(['replay', '--app', claimApp, write('bad.json', { module: claimApp, moduleLoads: 'twice' })]);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/at service\.moduleLoads: expected 'once' \(the app's modules loaded once for the run\) or 'per-process' \(once per simulated process\), got "twice"\n$/);
    expect(bad.stderr.trim().split('\n')).toHaveLength(2); // the file's heading and its one issue, as for every field
    const builtin = cli(['replay', write('builtin.json', { variant: 'key_atomic', moduleLoads: 'per-process' })]);
    expect(builtin.status).toBe(2);
    expect(builtin.stderr).toMatch(/at service\.moduleLoads: service\.moduleLoads says how a hosted app's modules load; a built-in variant has none/);
    const svc = cli(['replay', '--service', 'examples/payments-atomic/service.ts', write('svc.json', { module: 'examples/payments-atomic/service.ts', moduleLoads: 'per-process' })]);
    expect(svc.status).toBe(2);
    expect(svc.stdout).toBe('');
    expect(svc.stderr.trim().split('\n')).toHaveLength(1);
    expect(svc.stderr).toMatch(/svc\.json says service\.moduleLoads 'per-process', which is how a hosted app's modules load \(--app\); examples\/payments-atomic\/service\.ts is a service definition/);
  }, 60_000);

  it('absent, the field is not printed: an existing file parses and prints byte-identical; present, parse ∘ print keeps it', () => {
    const text = readFileSync('examples/app-powertools-idempotency/counterexamples/powertools-no-context-progress-6e6f8b27.json', 'utf8');
    const s = parseScenario(text);
    expect('moduleLoads' in s.service).toBe(false);
    expect(printScenario(s)).toBe(text);
    const per = printScenario({ ...s, service: { ...s.service, moduleLoads: 'per-process' } });
    expect(printScenario(parseScenario(per))).toBe(per);
    expect(() => parseScenario(per.replace('"per-process"', '"per-thread"'))).toThrow(ScenarioError);
  });
});

