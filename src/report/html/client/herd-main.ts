import { runGridInline, herdJsonRow, type CellResult } from '../../../herd/cells.js';
import type { StrategyName } from '../../../backoff/strategies.js';
import { el, markReady, readData, readHash, svg, writeHash } from './dom.js';
import type { HerdPageData } from '../herd-types.js';

/**
 * The herd explorer: retrysim's own herd engine (src/herd on the kernel of
 * src/sim, src/random, src/backoff), bundled into the page and run here.
 * A cell is computed exactly as `retrysim herd` computes it — same tasks,
 * same seeds forked from the one seed, same aggregation — so the JSON shown
 * is what `retrysim herd --json` prints for the same parameters.
 *
 * Two ways to run it: one strategy at one client count (with its
 * write-arrival histogram), or a sweep over client counts for every
 * strategy — the AWS backoff article's picture, calls and completion time
 * against the number of clients, one line per strategy. The parameters are
 * in the URL hash, so a link reproduces a picture.
 */
const data = readData<HerdPageData>();
const app = document.getElementById('app')!;
app.replaceChildren();

/** Each strategy's delay, as SPEC §1 and src/backoff/strategies.ts define it (v_n = min(cap, base·2ⁿ), base 5 ms, cap 2000 ms). */
const FORMULAS: Record<StrategyName, string> = {
  none: '0 — retry at once',
  expo: 'vₙ — exponential, no jitter',
  codex: 'vₙ · U[0.9, 1.1) — ±10 % jitter applied after the cap (so up to 1.1 × cap); the herd form of the Codex CLI\'s sampling-layer backoff, 200 ms · 2^(attempt−1) · U[0.9, 1.1) with no cap',
  equal: 'vₙ/2 + U[0, vₙ/2) — "Equal Jitter"',
  full: 'U[0, vₙ) — "Full Jitter"',
  decorrelated: 'min(cap, U[base, 3 · previous)), previous starting at base — "Decorrelated Jitter", state per client',
};
const COLOURS: Record<StrategyName, string> = { none: '#5b6475', expo: '#b91c1c', codex: '#c2410c', equal: '#7c3aed', full: '#2457c5', decorrelated: '#0f766e' };

const num = (id: string, value: number, min: number, max: number) => el('input', { id, name: id, type: 'number', min, max, step: 1, value, inputmode: 'numeric' });
const strategy = el('select', { id: 'strategy', name: 'strategy' }, ...data.strategies.map((s) => el('option', { value: s, ...(s === data.defaults.strategy ? { selected: true } : {}) }, s)));
const clients = num('clients', data.defaults.clients, 1, data.clientsMax);
const runs = num('runs', data.defaults.runs, 1, data.runsMax);
const seed = el('input', { id: 'seed', name: 'seed', type: 'number', step: 1, value: data.defaults.seed, inputmode: 'numeric' });
const from = num('from', data.sweep.from, 1, data.clientsMax);
const to = num('to', data.sweep.to, 1, data.clientsMax);
const by = num('by', data.sweep.step, 1, data.clientsMax);
const sweepRuns = num('sweep-runs', data.sweep.runs, 1, data.runsMax);
const runOne = el('button', { id: 'run', type: 'submit', class: 'primary' }, 'Run');
const runAll = el('button', { id: 'run-all', type: 'button' }, `Run all ${data.strategies.length} strategies`);
const runSweep = el('button', { id: 'run-sweep', type: 'button', class: 'primary' }, 'Run the sweep');
const cancel = el('button', { id: 'cancel', type: 'button', disabled: true }, 'Cancel');
const label = (text: string, input: HTMLElement) => el('label', {}, text, input);
const form = el('form', { class: 'herd-form', novalidate: true, 'aria-label': 'one cell' },
  label('strategy', strategy), label('clients', clients), label('runs per cell', runs), label('seed', seed), runOne, runAll);
const sweepForm = el('form', { class: 'herd-form', novalidate: true, 'aria-label': 'sweep over client counts' },
  el('strong', { class: 'legend' }, 'Sweep, every strategy:'), label('clients from', from), label('to', to), label('step', by), label('runs per point', sweepRuns), runSweep, cancel);
const status = el('p', { class: 'status', id: 'status', role: 'status' }, 'Choose the parameters and press Run.');
const out = el('div', { class: 'herd-out', id: 'out', 'data-state': 'idle' }, status);

app.append(
  el('p', { class: 'crumb' }, 'retrysim · thundering-herd explorer'),
  el('h1', {}, 'The thundering herd under optimistic concurrency'),
  el('p', { class: 'herd-intro' },
    'N clients start at t = 0 and each writes one shared row once: read the version, write with it, and on a conflict back off and start again. ',
    'One-way latency |N(10 ms, 2 ms)|, base 5 ms, cap 2000 ms. calls = write requests; ms = when the last client succeeded; mean ± standard error over the runs. ',
    'The model has no server overload, so "none" finishes fast but makes by far the most calls.'),
  el('details', { class: 'formulas' }, el('summary', {}, 'The strategies: delay before retry n'),
    el('table', {}, el('tbody', {}, ...data.strategies.map((s) => el('tr', {}, el('th', {}, s), el('td', {}, FORMULAS[s]))))),
    el('p', { class: 'muted' }, 'vₙ = min(cap, base · 2ⁿ), n = failed attempts so far; U[a, b) a uniform draw from the run\'s seeded generator.')),
  el('p', { class: 'muted' }, "This page runs retrysim's own herd engine, bundled in from its TypeScript sources; its numbers equal ", el('code', {}, 'retrysim herd --json'), ` for the same seed and parameters. Limits as in the CLI: at most ${data.clientsMax.toLocaleString('en')} clients, about ${data.eventsMax.toExponential(0)} simulated events per run of the page.`),
  sweepForm, form, out);

function readInt(input: HTMLInputElement, name: string, min: number, max: number): number {
  const n = Number(input.value);
  if (input.value.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got '${input.value}'`);
  return n;
}

/** The CLI's estimate (src/cli/herd.ts estimatedEvents): runs × strategies × Σ (c² + 4c). */
function estimatedEvents(r: number, counts: readonly number[], strategies: number): number {
  return r * strategies * counts.reduce((s, c) => s + c * c + 4 * c, 0);
}

class Cancelled extends Error {}
let cancelled = false;
/** Lets the page paint between tasks (a message round trip, not a timer), and stops there when Cancel was pressed. */
function yieldToPage(): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = new MessageChannel();
    c.port1.onmessage = () => (cancelled ? reject(new Cancelled('cancelled')) : resolve());
    c.port2.postMessage(0);
  });
}
cancel.addEventListener('click', () => (cancelled = true));

interface Job { mode: 'cell' | 'sweep'; strategies: StrategyName[]; counts: number[]; runs: number; seed: number }

function readJob(mode: 'cell' | 'sweep', all: boolean): Job {
  const s = readInt(seed, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  if (mode === 'cell') {
    const n = readInt(clients, 'clients', 1, data.clientsMax);
    const r = readInt(runs, 'runs', 1, data.runsMax);
    return { mode, strategies: all ? [...data.strategies] : [strategy.value as StrategyName], counts: [n], runs: r, seed: s };
  }
  const a = readInt(from, 'clients from', 1, data.clientsMax);
  const b = readInt(to, 'clients to', a, data.clientsMax);
  const st = readInt(by, 'step', 1, data.clientsMax);
  const r = readInt(sweepRuns, 'runs per point', 1, data.runsMax);
  const counts: number[] = [];
  for (let c = a; c <= b; c += st) counts.push(c);
  return { mode, strategies: [...data.strategies], counts, runs: r, seed: s };
}

function command(j: Job): string {
  return `retrysim herd --json --seed ${j.seed} --clients ${j.counts.join(',')} --strategies ${j.strategies.join(',')} --runs ${j.runs}`;
}

let busy = false;
async function run(mode: 'cell' | 'sweep', all = false): Promise<void> {
  if (busy) return;
  let j: Job;
  try {
    j = readJob(mode, all);
    const events = estimatedEvents(j.runs, j.counts, j.strategies.length);
    if (events > data.eventsMax) throw new Error(`${j.runs} runs × clients ${j.counts.length > 3 ? `${j.counts[0]}…${j.counts[j.counts.length - 1]}` : j.counts.join(',')} × ${j.strategies.length} strategies is about ${events.toExponential(1)} simulated events (limit ${data.eventsMax.toExponential(0)}, as in the CLI); lower the runs or the clients`);
  } catch (e) {
    out.dataset.state = 'error';
    status.textContent = (e as Error).message;
    out.replaceChildren(status);
    return;
  }
  writeHash({ mode, strategy: all ? 'all' : strategy.value, clients: clients.value, runs: runs.value, seed: seed.value, from: from.value, to: to.value, step: by.value, 'sweep-runs': sweepRuns.value });
  busy = true;
  cancelled = false;
  cancel.disabled = false;
  for (const b of [runOne, runAll, runSweep]) b.disabled = true;
  out.dataset.state = 'running';
  status.textContent = `running ${(j.strategies.length * j.counts.length * j.runs).toLocaleString('en')} run(s)…`;
  out.replaceChildren(status);
  const began = performance.now(); // real-time: allowed (the page reports how long the browser took)
  try {
    const result = await runGridInline({
      strategies: j.strategies, clients: j.counts, runs: j.runs, seed: j.seed, histograms: mode === 'cell',
      onProgress: (done, total) => (status.textContent = `running… ${done.toLocaleString('en')}/${total.toLocaleString('en')} runs`),
    }, yieldToPage);
    const secs = (performance.now() - began) / 1000; // real-time: allowed (as above)
    if (mode === 'sweep') showSweep(result.cells, j, secs);
    else showCells(result.cells, j, secs);
    out.dataset.state = 'done';
  } catch (e) {
    out.dataset.state = e instanceof Cancelled ? 'cancelled' : 'error';
    status.textContent = e instanceof Cancelled ? 'cancelled: nothing shown (a partial sweep would not equal the CLI\'s numbers)' : `the run failed: ${(e as Error).message}`;
  } finally {
    busy = false;
    cancel.disabled = true;
    for (const b of [runOne, runAll, runSweep]) b.disabled = false;
  }
}

function jsonBlock(rows: unknown, j: Job, id: string): HTMLElement[] {
  return [el('p', {}, el('code', { class: 'cmd' }, command(j)), ' prints exactly:'), el('pre', { id }, JSON.stringify(rows))];
}

function showCells(cells: CellResult[], j: Job, secs: number): void {
  const rows = cells.map(herdJsonRow);
  const events = rows.reduce((a, c) => a + c.events, 0);
  status.textContent = `done in ${secs.toFixed(2)} s: ${rows.length} cell(s), ${events.toLocaleString('en')} kernel events.`;
  const table = el('div', { class: 'wide' }, el('table', { id: 'cells' },
    el('thead', {}, el('tr', {}, ...['strategy', 'clients', 'runs', 'calls (mean ± se)', 'ms (mean ± se)', 'events'].map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((c) => el('tr', { 'data-strategy': c.strategy },
      el('td', {}, c.strategy), el('td', { class: 'num' }, c.clients), el('td', { class: 'num' }, c.runs),
      el('td', { class: 'num calls' }, `${c.calls.toFixed(1)} ± ${c.callsSe.toFixed(1)}`), el('td', { class: 'num ms' }, `${c.ms.toFixed(0)} ± ${c.msSe.toFixed(0)}`),
      el('td', { class: 'num' }, c.events.toLocaleString('en')))))));
  out.replaceChildren(status, table, ...jsonBlock(rows, j, 'herd-json'),
    el('h2', {}, 'When do the writes reach the server?'),
    el('p', { class: 'muted' }, 'Writes arriving over time, all runs of each cell, from t = 0 to that cell\'s last write (nothing cut off; each panel has its own time axis). Spikes are clients still in lock-step.'),
    histograms(cells));
}

/** One wide panel per cell, each over its whole time range (to its last write: nothing is cut off). */
function histograms(cells: CellResult[]): HTMLElement {
  // Drawn at the width there is, so the axis labels keep their size on a phone.
  const W = Math.max(300, Math.min(1200, app.clientWidth));
  const H = 110;
  const bins = Math.round(W / 3);
  const box = el('div', { class: 'hists', id: 'histogram' });
  for (const c of cells) {
    const last = Math.max(1, c.hist.length);
    const perBin = last / bins;
    const counts = new Float64Array(bins);
    for (let t = 0; t < c.hist.length; t++) counts[Math.min(bins - 1, Math.floor(t / perBin))]! += c.hist[t]!;
    // Every strategy starts with the same burst (all first writes near 20 ms): scale to the tallest bar after it, so later structure shows.
    const after = counts.slice(Math.ceil(35 / perBin));
    const top = Math.max(1, ...(after.length > 0 ? after : counts));
    const bw = W / bins;
    const path: string[] = [];
    counts.forEach((n, b) => {
      const h = Math.min(H, (n / top) * (H - 6));
      if (h > 0) path.push(`M${(b * bw).toFixed(1)} ${H}h${bw.toFixed(2)}v${(-h).toFixed(1)}h${(-bw).toFixed(2)}z`);
    });
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => svg('text', { x: f * W, y: H + 14, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle' }, fmtMs(f * last)));
    box.append(el('figure', { class: 'hist', 'data-strategy': c.strategy },
      el('figcaption', {}, el('strong', {}, `${c.strategy}, ${c.clients} clients`), ` — ${c.calls.toFixed(1)} calls, done at ${fmtMs(c.ms)} (mean of ${c.runs} runs); last write at ${fmtMs(c.hist.length)}`),
      svg('svg', { viewBox: `0 0 ${W} ${H + 18}`, width: '100%', preserveAspectRatio: 'none', role: 'img', 'aria-label': `write arrivals over time for ${c.strategy}` },
        svg('rect', { x: 0, y: 0, width: W, height: H, fill: '#f6f7f9' }),
        svg('path', { d: path.join(''), fill: COLOURS[c.strategy] }), ...ticks)));
  }
  return box;
}

function showSweep(cells: CellResult[], j: Job, secs: number): void {
  const rows = cells.map(herdJsonRow);
  status.textContent = `done in ${secs.toFixed(2)} s: ${j.strategies.length} strategies × ${j.counts.length} client counts × ${j.runs} runs.`;
  out.replaceChildren(status,
    el('div', { class: 'charts' }, chart(rows, 'calls', 'write calls per run (mean)'), chart(rows, 'ms', 'completion time, ms (mean)')),
    el('p', { class: 'legend-line' }, ...j.strategies.map((s) => el('span', { class: 'key' }, el('span', { class: 'swatch', style: `background:${COLOURS[s]}` }), s))),
    el('details', {}, el('summary', {}, 'the numbers'), ...jsonBlock(rows, j, 'sweep-json')));
}

type Row = ReturnType<typeof herdJsonRow>;
/** A line chart of one figure against the client count, one line per strategy (the AWS article's plot). */
function chart(rows: Row[], y: 'calls' | 'ms', title: string): HTMLElement {
  // Drawn at the width a chart gets (two side by side on a laptop, one on a phone), so its labels keep their size.
  const W = Math.max(300, Math.min(560, app.clientWidth - 16));
  const H = 300;
  const L = 56;
  const B = 34;
  const T = 10;
  const R = 12;
  const xs = [...new Set(rows.map((r) => r.clients))];
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const yMax = niceCeil(Math.max(1, ...rows.map((r) => r[y])));
  const px = (c: number) => L + (xMax === xMin ? 0.5 : (c - xMin) / (xMax - xMin)) * (W - L - R);
  const py = (v: number) => T + (1 - v / yMax) * (H - T - B);
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': `${title} against the number of clients, one line per strategy`, 'data-figure': y });
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    g.append(svg('line', { x1: L, x2: W - R, y1: py(f * yMax), y2: py(f * yMax), stroke: '#d7dbe3' }),
      svg('text', { x: L - 6, y: py(f * yMax) + 4, 'text-anchor': 'end', class: 'tick' }, fmtNum(f * yMax)));
  }
  for (const c of xs.length <= 11 ? xs : xs.filter((_, i) => i % Math.ceil(xs.length / 10) === 0)) g.append(svg('text', { x: px(c), y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, c));
  g.append(svg('text', { x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis' }, 'clients'));
  for (const s of [...new Set(rows.map((r) => r.strategy))]) {
    const mine = rows.filter((r) => r.strategy === s);
    g.append(svg('polyline', { points: mine.map((r) => `${px(r.clients).toFixed(1)},${py(r[y]).toFixed(1)}`).join(' '), fill: 'none', stroke: COLOURS[s], 'stroke-width': 2, 'data-strategy': s }));
  }
  return el('figure', { class: 'chart' }, el('figcaption', {}, title), g);
}

function niceCeil(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}
function fmtNum(x: number): string {
  return x >= 10000 ? `${+(x / 1000).toFixed(0)}k` : x >= 1000 ? `${+(x / 1000).toFixed(1)}k` : `${+x.toFixed(0)}`;
}
function fmtMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(2)} s` : `${+ms.toFixed(0)} ms`;
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  void run('cell');
});
runAll.addEventListener('click', () => void run('cell', true));
runSweep.addEventListener('click', () => void run('sweep'));
sweepForm.addEventListener('submit', (e) => {
  e.preventDefault();
  void run('sweep');
});

// The URL holds the parameters: a link opens the same form and runs the same job.
const h = readHash();
const set = (input: HTMLInputElement | HTMLSelectElement, k: string) => { const v = h.get(k); if (v !== undefined && v !== 'all') input.value = v; };
set(strategy, 'strategy'); set(clients, 'clients'); set(runs, 'runs'); set(seed, 'seed'); set(from, 'from'); set(to, 'to'); set(by, 'step'); set(sweepRuns, 'sweep-runs');
const mode = h.get('mode');
markReady();
// With no parameters the page opens drawing the default sweep (cancel stops it); a link runs what it names.
if (mode === 'cell') void run('cell', h.get('strategy') === 'all');
else if (mode !== 'none') void run('sweep');
