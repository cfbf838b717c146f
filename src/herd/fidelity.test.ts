import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Fidelity to the AWS reference simulator, statistically: `retrysim herd`
 * against the runs of herd_ref.py (a plain Python 3 port of
 * backoff_simulator.py, with Python's own Mersenne Twister and normal
 * sampler — so the streams differ and only the distributions can agree).
 * The data and how it was made: src/herd/reference-data/README.md.
 *
 * For each cell (strategy × clients) and each measure (calls, ms), z is the
 * difference of the two means over its standard error,
 * (m_js − m_py) / √(se_js² + se_py²). 18 cells × 2 measures = 36 tests; with
 * |z| ≤ 3.64 for each (two-sided α = 2.7e-4 apiece) the chance that a
 * faithful model fails any of them is at most 36 × 2.7e-4 ≈ 1 % (Bonferroni;
 * calls and ms of one cell are correlated, which only lowers it).
 */
const Z_MAX = 3.64;
const RUNS = 500;
const SEED = 1;

interface PyRow {
  strategy: string;
  clients: number;
  calls: number;
  calls_se: number;
  ms: number;
  ms_se: number;
}
interface JsRow {
  strategy: string;
  clients: number;
  runs: number;
  calls: number;
  callsSe: number;
  ms: number;
  msSe: number;
}

const root = join(__dirname, '..', '..');
const data = JSON.parse(readFileSync(join(__dirname, 'reference-data', 'herd_ref.runs2000.json'), 'utf8')) as { runs: number; rows: PyRow[] };
/** herd_ref.py calls decorrelated jitter `decorr`. */
const jsName = (py: string): string => (py === 'decorr' ? 'decorrelated' : py);

describe('herd fidelity: retrysim herd against the Python reference simulator’s own runs', () => {
  test(`every cell's calls and completion time agree within |z| ≤ ${Z_MAX} (≈1 % false-alarm rate over all 36)`, () => {
    expect(data.rows).toHaveLength(18);
    expect(data.runs).toBeGreaterThanOrEqual(1000);
    const p = spawnSync(process.execPath, [join(root, 'bin', 'retrysim.js'), 'herd', '--json', '--runs', String(RUNS), '--seed', String(SEED)], { encoding: 'utf8', timeout: 300_000 });
    expect(p.status, p.stderr).toBe(0);
    const js = JSON.parse(p.stdout) as JsRow[];
    expect(js).toHaveLength(18);
    const far: string[] = [];
    for (const py of data.rows) {
      const mine = js.find((r) => r.strategy === jsName(py.strategy) && r.clients === py.clients);
      expect(mine, `${py.strategy}/${py.clients}`).toBeDefined();
      expect(mine!.runs).toBe(RUNS);
      for (const [measure, m, se, pm, pse] of [
        ['calls', mine!.calls, mine!.callsSe, py.calls, py.calls_se],
        ['ms', mine!.ms, mine!.msSe, py.ms, py.ms_se],
      ] as const) {
        // A standard error of 0 on both sides would make any difference
        // infinitely significant; no cell of this model has one (latency is random).
        expect(se + pse, `${py.strategy}/${py.clients} ${measure}`).toBeGreaterThan(0);
        const z = (m - pm) / Math.sqrt(se * se + pse * pse);
        if (!(Math.abs(z) <= Z_MAX)) far.push(`${jsName(py.strategy)}/${py.clients} ${measure}: retrysim ${m.toFixed(1)} ± ${se.toFixed(1)} vs Python ${pm.toFixed(1)} ± ${pse.toFixed(1)}, z = ${z.toFixed(2)}`);
      }
    }
    expect(far).toEqual([]);
  });
});
