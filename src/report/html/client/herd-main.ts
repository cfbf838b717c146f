import { runGridInline, herdJsonRow, type CellResult } from '../../../herd/cells.js';
import { herdSvg } from '../../../herd/svg.js';
import type { StrategyName } from '../../../backoff/strategies.js';
import { el, markReady, readData } from './dom.js';
import type { HerdPageData } from '../herd-types.js';

/**
 * The herd explorer: retrysim's own herd engine (src/herd on the kernel of
 * src/sim, src/random, src/backoff), bundled into the page and run here.
 * A cell is computed exactly as `retrysim herd` computes it — same tasks,
 * same seeds forked from the one seed, same aggregation — so the JSON shown
 * is what `retrysim herd --json` prints for the same parameters.
 */
const data = readData<HerdPageData>();
const app = document.getElementById('app')!;
app.replaceChildren();

const strategy = el('select', { id: 'strategy', name: 'strategy' }, ...data.strategies.map((s) => el('option', { value: s, ...(s === data.defaults.strategy ? { selected: true } : {}) }, s)));
const clients = el('input', { id: 'clients', type: 'number', min: 1, max: data.clientsMax, step: 1, value: data.defaults.clients });
const runs = el('input', { id: 'runs', type: 'number', min: 1, max: data.runsMax, step: 1, value: data.defaults.runs });
const seed = el('input', { id: 'seed', type: 'number', step: 1, value: data.defaults.seed });
const runOne = el('button', { id: 'run', type: 'submit', class: 'primary' }, 'Run');
const runAll = el('button', { id: 'run-all', type: 'button' }, `Run all ${data.strategies.length} strategies`);
const form = el('form', { class: 'herd-form', novalidate: true },
  el('label', {}, 'strategy', strategy), el('label', {}, 'clients', clients), el('label', {}, 'runs per cell', runs), el('label', {}, 'seed', seed), runOne, runAll);
const status = el('p', { class: 'status', id: 'status' }, 'Choose the parameters and press Run.');
const out = el('div', { class: 'herd-out', id: 'out', 'data-state': 'idle' }, status);
app.append(
  el('p', { class: 'crumb' }, 'retrysim · thundering-herd explorer'),
  el('h1', {}, 'The thundering herd under optimistic concurrency'),
  el('p', { class: 'herd-intro' },
    'N clients start at t = 0 and each writes one shared row once: read the version, write with it, and on a conflict back off and start again. ',
    'One-way latency |N(10 ms, 2 ms)|, base 5 ms, cap 2000 ms (SPEC §2). calls = write requests; ms = when the last client succeeded; mean ± standard error over the runs. ',
    'The model has no server overload, so "none" finishes fast but makes by far the most calls.'),
  el('p', { class: 'muted' }, "This page runs retrysim's own herd engine, bundled in from its TypeScript sources; its numbers equal ", el('code', {}, 'retrysim herd --json'), ' for the same seed and parameters.'),
  form, out);

function readInt(input: HTMLInputElement, name: string, min: number, max: number): number {
  const n = Number(input.value);
  if (input.value.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got '${input.value}'`);
  return n;
}

/** Lets the page paint between tasks (a message round trip, not a timer). */
function yieldToPage(): Promise<void> {
  return new Promise((resolve) => {
    const c = new MessageChannel();
    c.port1.onmessage = () => resolve();
    c.port2.postMessage(0);
  });
}

let busy = false;
async function run(strategies: StrategyName[]): Promise<void> {
  if (busy) return;
  let n: number, r: number, s: number;
  try {
    n = readInt(clients, 'clients', 1, data.clientsMax);
    r = readInt(runs, 'runs', 1, data.runsMax);
    s = readInt(seed, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  } catch (e) {
    out.dataset.state = 'error';
    status.textContent = (e as Error).message;
    out.replaceChildren(status);
    return;
  }
  busy = true;
  out.dataset.state = 'running';
  status.textContent = `running ${strategies.length * r} run(s) of ${n} clients…`;
  out.replaceChildren(status);
  const opts = { strategies, clients: [n], runs: r, seed: s, histograms: true, onProgress: (done: number, total: number) => (status.textContent = `running… ${done}/${total} runs`) };
  try {
    const result = await runGridInline(opts, yieldToPage);
    show(result.cells, `retrysim herd --json --seed ${s} --clients ${n} --strategies ${strategies.join(',')} --runs ${r}`);
    out.dataset.state = 'done';
  } catch (e) {
    out.dataset.state = 'error';
    status.textContent = `the run failed: ${(e as Error).message}`;
  } finally {
    busy = false;
  }
}

function show(cells: CellResult[], command: string): void {
  const rows = cells.map(herdJsonRow);
  const events = rows.reduce((a, c) => a + c.events, 0);
  status.textContent = `done: ${rows.length} cell(s), ${events.toLocaleString('en')} kernel events.`;
  const table = el('table', { id: 'cells' },
    el('thead', {}, el('tr', {}, ...['strategy', 'clients', 'runs', 'calls (mean ± se)', 'ms (mean ± se)', 'events'].map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((c) => el('tr', { 'data-strategy': c.strategy },
      el('td', {}, c.strategy), el('td', { class: 'num' }, c.clients), el('td', { class: 'num' }, c.runs),
      el('td', { class: 'num calls' }, `${c.calls.toFixed(1)} ± ${c.callsSe.toFixed(1)}`), el('td', { class: 'num ms' }, `${c.ms.toFixed(0)} ± ${c.msSe.toFixed(0)}`),
      el('td', { class: 'num' }, c.events.toLocaleString('en'))))));
  const pic = el('div', { class: 'svg', id: 'histogram' });
  // The SVG is retrysim's own drawing (src/herd/svg.ts) of these cells: generated text, no user input in it.
  pic.innerHTML = herdSvg(cells);
  // herdSvg sizes itself to its columns; one column is too narrow for its title, so widen the canvas.
  const drawing = pic.querySelector('svg');
  const w = Number(drawing?.getAttribute('width'));
  if (drawing && w < 900) {
    drawing.setAttribute('width', '900');
    drawing.setAttribute('viewBox', `0 0 900 ${drawing.getAttribute('height')}`);
  }
  out.replaceChildren(status, table,
    el('p', {}, el('code', {}, command), ' prints exactly:'),
    el('pre', { id: 'herd-json' }, JSON.stringify(rows)),
    el('h3', {}, 'When do the writes reach the server?'), pic);
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  void run([strategy.value as StrategyName]);
});
runAll.addEventListener('click', () => void run([...data.strategies]));
markReady();
