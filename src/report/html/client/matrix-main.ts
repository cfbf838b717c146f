import type { MatrixPageData } from '../matrix-types.js';
import { el, markReady, readData, readHash, writeHash } from './dom.js';
import { mountStepper, type StepperHandle } from './stepper-view.js';

/**
 * The fault matrix: every canonical cell as a button; a click opens that
 * cell's run in the stepper below. The hash holds the cell and the step
 * (`#cell=slow_takeover%2Fkey_atomic%2Ftool_call&step=4`), so a link points
 * at one moment of one cell.
 */
const data = readData<MatrixPageData>();
const app = document.getElementById('app')!;
app.replaceChildren();

const cellClass = (n: number): string => (n === 1 ? 'good' : n > 1 ? 'dup' : 'none');
const view = el('section', { id: 'cell-view' }, el('p', { class: 'muted' }, 'Click a cell to step through its run.'));
const buttons = new Map<string, HTMLTableCellElement>();
const table = el('table', { class: 'matrix', id: 'matrix' },
  el('thead', {}, el('tr', {}, el('th', {}, 'variant / key source'), ...data.columns.map((c) => el('th', { class: 'col' }, c.replace(/_/g, ' '))))),
  el('tbody', {}, ...data.rows.map((row) => el('tr', {}, el('th', {}, row), ...data.columns.map((col) => {
    const c = data.cells[row]![col]!;
    const differs = c.expected !== undefined && c.expected !== c.reports;
    const b = el('button', { type: 'button', 'data-row': row, 'data-col': col, title: `${row} · ${col}: ${c.reports} report(s)${c.expected !== undefined ? `, documented ${c.expected}` : ''}${c.violations.length ? `; broken: ${c.violations.join(', ')}` : ''}` },
      String(c.reports), differs ? el('span', { class: 'diff' }, ' !') : null);
    b.addEventListener('click', () => open(row, col, 0));
    const td = el('td', { class: `cell ${cellClass(c.reports)}` }, b);
    buttons.set(`${col}/${row}`, td);
    return td;
  })))));

app.append(
  el('p', { class: 'crumb' }, 'retrysim · the fault matrix'),
  el('h1', {}, 'Reports held for one logical operation (goal: 1)'),
  el('p', { class: 'matrix-intro' },
    `Each cell is one deterministic run (seed ${data.seed}) of a canonical scenario (columns) against a write strategy and key source (rows), on the simulated network and real SQLite; `,
    'the number is how many reports the server holds at the end — counted from that run, not copied from a table. ',
    'Green: exactly one. Red: a duplicate. Amber: none (the client never learned the outcome). "!" marks a cell that differs from the documented expectation in src/scenario/canonical.ts. ',
    `The last column, ${data.columns[data.columns.length - 1]}, is conformance's kill -9 at the process step with a restart on the same database.`),
  table, view);

let current: StepperHandle | undefined;
let shown = '';
function open(row: string, col: string, step: number): void {
  const cell = data.cells[row]?.[col];
  if (cell === undefined) return;
  const id = `${col}/${row}`;
  if (shown !== id) {
    current?.destroy();
    buttons.forEach((td, k) => td.classList.toggle('selected', k === id));
    const root = el('div');
    view.replaceChildren(root);
    shown = id;
    current = mountStepper(root, cell.run, { start: step, onStep: (i) => writeHash({ cell: id, step: String(i + 1) }) });
    view.scrollIntoView({ block: 'start' });
  } else {
    current?.go(step);
  }
}

function fromHash(): void {
  const h = readHash();
  const id = h.get('cell');
  if (id === undefined) return;
  const col = id.slice(0, id.indexOf('/'));
  const row = id.slice(id.indexOf('/') + 1);
  const n = Number(h.get('step') ?? '1');
  open(row, col, Number.isInteger(n) ? n - 1 : 0);
}
window.addEventListener('hashchange', fromHash);
fromHash();
markReady();
