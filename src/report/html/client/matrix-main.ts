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
// A user's service or app (matrix --service PATH) counts its own effects, by key source; the built-in tracker counts reports, by variant and key source.
const subject = data.subject;
const held = (n: number): string => `${n} ${subject ? (n === 1 ? subject.noun : subject.nouns) : n === 1 ? 'report' : 'reports'}`;
const view = el('section', { id: 'cell-view', 'aria-label': 'the chosen cell, step by step' }, el('p', { class: 'muted' }, 'Click a cell to step through its run.'));
const buttons = new Map<string, HTMLTableCellElement>();
const table = el('table', { class: 'matrix', id: 'matrix' },
  el('thead', {}, el('tr', {}, el('th', {}, subject ? 'scenario / key source' : 'variant / key source'), ...data.columns.map((c) => el('th', { class: 'col' }, c.replace(/_/g, ' '), subject && !subject.judged.includes(c) ? el('span', { class: 'muted' }, ' (not judged)') : null)))),
  el('tbody', {}, ...data.rows.map((row) => el('tr', {}, el('th', { scope: 'row' }, ...row.split('/').flatMap((part, i) => (i === 0 ? [part] : ['/', el('wbr'), part]))), ...data.columns.map((col) => {
    const c = data.cells[row]![col];
    // Without a key there is no key to reuse: nothing was run there.
    if (c === undefined) return el('td', { class: 'cell absent', title: `${row}, ${col.replace(/_/g, ' ')}: not run (no key to reuse)` }, '-');
    const differs = subject ? c.ok === false : c.expected !== undefined && c.expected !== c.reports;
    // The accessible name says what the cell is, not just its number.
    const goal = subject ? (c.judged ? `, judged: ${differs ? 'missed' : 'met'}` : ', not judged (no stable key)') : c.expected !== undefined ? `, documented ${c.expected}${differs ? ' (differs)' : ''}` : ', no documented expectation';
    const said = `${row}, ${col.replace(/_/g, ' ')}: ${held(c.reports)} held${goal}${c.violations.length ? `; broken: ${c.violations.join(', ')}` : '; no invariant broken'}. Opens its run.`;
    const b = el('button', { type: 'button', 'data-row': row, 'data-col': col, 'aria-label': said, title: said },
      String(c.reports), differs ? el('span', { class: 'diff', 'aria-hidden': 'true' }, ' !') : null);
    b.addEventListener('click', () => open(row, col, 0));
    // A judged cell of a user's service that broke an invariant with the right count (a replay answered otherwise, a reused key accepted) is a miss: red too.
    const td = el('td', { class: `cell ${differs && subject ? 'dup' : cellClass(c.reports)}` }, b);
    buttons.set(`${col}/${row}`, td);
    return td;
  })))));

const intro = subject
  ? el('p', { class: 'matrix-intro' },
    `Each cell is one deterministic run (seed ${data.seed}) of one of retrysim conformance's scenarios (rows) against ${subject.kind} ${subject.name} (${subject.module}), its built-in client taking the Idempotency-Key from the column's key source, on the simulated network and clock — one schedule per cell, not a search (retrysim check ${subject.flag} ${subject.module} searches); `,
    `the number is how many ${subject.nouns} the operation left at the end — counted from that run by the ${subject.kind}'s own effects. `,
    `The columns ${subject.judged.join(' and ')} keep one key across a call's retries and are judged: the goal is never a second one and no invariant broken ("!" marks a miss; none is a client that gave up without being told it succeeded). The others send a retry as a new operation: shown, not judged. `,
    'Green: exactly one. Red: a duplicate, or a judged cell that broke an invariant. Amber: none. Every cell can be saved as a scenario file and replayed.')
  : el('p', { class: 'matrix-intro' },
    `Each cell is one deterministic run (seed ${data.seed}) of a canonical scenario (columns) against a write strategy and key source (rows), on the simulated network and real SQLite; `,
    'the number is how many reports the server holds at the end — counted from that run, not copied from a table. ',
    'Green: exactly one. Red: a duplicate. Amber: none (the client never learned the outcome). "!" marks a cell that differs from the documented expectation in src/scenario/canonical.ts. ',
    `The last column, ${data.columns[data.columns.length - 1]}, is conformance's kill -9 at the process step with a restart on the same database.`);

app.append(
  el('p', { class: 'crumb' }, subject ? `retrysim · the fault matrix of ${subject.kind} ${subject.name}` : 'retrysim · the fault matrix'),
  el('h1', {}, subject ? `${subject.nouns[0]!.toUpperCase()}${subject.nouns.slice(1)} held for one logical operation (goal with a stable key: never two, no invariant broken)` : 'Reports held for one logical operation (goal: 1)'),
  intro,
  el('div', { class: 'matrix-wrap' }, table), view);

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
    const back = el('button', { type: 'button', class: 'back' }, '↑ back to the matrix');
    back.addEventListener('click', () => buttons.get(id)?.querySelector('button')?.focus());
    const save = cell.save === undefined ? null : saveLink(cell.save.file, cell.save.text);
    view.replaceChildren(el('div', { class: 'cell-bar' }, back, save === null ? null : el('span', { class: 'save' },
      subject ? 'This run as a scenario file, schedule included: ' : 'No checked-in scenario file for this column (its real side is a real SIGKILL, run by retrysim conformance). The simulated run, schedule included: ', save)), root);
    shown = id;
    current = mountStepper(root, cell.run, { start: step, onStep: (i) => writeHash({ cell: id, step: String(i + 1) }) });
    reveal(buttons.get(id)!);
    current.focus();
  } else {
    current?.go(step);
  }
}

/** A link that saves `text` as `file` (a blob URL made here: the page still fetches nothing). */
function saveLink(file: string, text: string): HTMLAnchorElement {
  const a = el('a', { download: file, href: URL.createObjectURL(new Blob([text], { type: 'application/json' })) }, `save ${file}`);
  return a;
}

/**
 * Shows the start of the cell view without scrolling the clicked cell off
 * the screen: scroll only as far as the cell allows (it stays at the top at
 * worst), so the matrix is not scrolled away from under the reader.
 */
function reveal(cell: HTMLElement): void {
  const want = view.getBoundingClientRect().top - (innerHeight - 260); // the view's first ~260 px in sight
  const keep = cell.getBoundingClientRect().top - 8; // the clicked cell stays in sight
  const by = Math.min(want, keep);
  if (by > 0) scrollBy({ top: by, behavior: 'instant' as ScrollBehavior });
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
