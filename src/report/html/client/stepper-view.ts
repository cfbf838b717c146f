import type { DbState, KeyView, Step, StepperData } from '../stepper-types.js';
import { el, svg } from './dom.js';

/**
 * The counterexample stepper: a sequence diagram (a lane per worker, the
 * network, each server and the database; one row per step) beside the
 * database rows after the current step, the decision taken there (with its
 * candidates and whether it preempted the running task) and, at the step
 * that breaks it, the violated invariant. Used by the stepper page and,
 * for one cell at a time, by the matrix page.
 */

/** Control over a mounted stepper. */
export interface StepperHandle {
  /** Shows step i (0-based; clamped). */
  go(i: number): void;
  current(): number;
  /** Removes the keyboard listener (the matrix page mounts one stepper after another). */
  destroy(): void;
}

const LANE_W = 118;
const TIME_W = 78;
const ROW_H = 24;
const HEAD_H = 34;
/** Room on the right of the lanes for marks (violation, preemption). */
const MARK_W = 150;

/** Short label drawn on the diagram for a step; the full sentence is in the text column. */
function shortLabel(s: Step): string {
  const n = /#\d+/.exec(s.text)?.[0] ?? '';
  switch (s.kind) {
    case 'request': return `${n} POST`;
    case 'phase': {
      const fence = s.dbChange?.join(' ').match(/fence (\d+)/)?.[1];
      return `${n} ${s.event}${s.check ? (s.check.outcome === 'pass' ? ' ✓' : ' ✗') : ''}${fence ? ` f${fence}` : ''}`;
    }
    case 'db': return `${n} ${s.event.replace(/^db: /, '')}`;
    case 'answer': return `${n} ${s.event.slice(7)}`;
    case 'lost': return `✕ ${n} lost`;
    case 'delivered': return s.text.includes('receives') ? 'answer' : s.text.includes('close') ? 'closed' : s.text.includes('refusal') ? 'refused' : 'end';
    case 'refused': return `${n} refused`;
    case 'timeout': return 'timeout';
    case 'decision': return `${s.decision?.preempted ? '⚡' : '◆'} ${taskShort(s.decision!.of[s.decision!.chosen]!)}`;
    case 'kill': return '✕ kill -9';
    case 'restart': return '↻ restart';
    case 'killed': return '✝ killed';
    case 'lease': return 'lease over';
    case 'error': return '! threw';
    default: return s.event.startsWith('result') ? s.event.replace('result ', '') : s.event;
  }
}

/** A candidate label (`s0/op1.w0#1:check`) as a short task name (`#1`, or the worker's name). */
function taskShort(label: string): string {
  const task = label.slice(0, label.indexOf(':'));
  return /#\d+$/.exec(task)?.[0] ?? task;
}

/** Request number → a colour, so two requests on one server lane are told apart. */
const REQUEST_COLOURS = ['#2457c5', '#c2410c', '#0f766e', '#7c3aed', '#b91c1c', '#4d7c0f'];
function requestColour(s: Step): string | undefined {
  const label = s.kind === 'decision' ? s.decision!.of[s.decision!.chosen]! : s.actor;
  const n = /#(\d+)/.exec(label)?.[1];
  return n === undefined ? undefined : REQUEST_COLOURS[(Number(n) - 1) % REQUEST_COLOURS.length];
}

/** Mounts a stepper for `d` into `root`. */
export function mountStepper(root: HTMLElement, d: StepperData, opts: { onStep?: (i: number) => void; start?: number } = {}): StepperHandle {
  root.replaceChildren();
  root.classList.add('stepper');
  const steps = d.steps;
  const violationAt = new Map(d.violations.map((v) => [v.step, v]));

  // ---- header: what this run is and what broke
  const verdict = d.violations.length === 0
    ? el('p', { class: 'ok' }, '✓ every invariant holds in this run')
    : el('ul', { class: 'violations' }, ...d.violations.map((v) =>
      el('li', {}, el('button', { class: 'jump', 'data-step': v.step, type: 'button' }, `✗ ${v.invariant} (${v.op})`), ` ${v.detail} — breaks at step ${v.step + 1}: ${v.why}`)));
  const expectText = d.expect.met ? 'expect: met' : `expect: NOT met — ${d.expect.problems.join('; ')}`;
  root.append(el('header', { class: 'st-head' },
    el('h2', {}, d.name),
    el('p', { class: 'meta' },
      `${d.variant} / ${d.keySource} · seed ${d.seed} · lease ${d.leaseMs} ms · ${d.decisions} decision${d.decisions === 1 ? '' : 's'}, `,
      el('strong', {}, `${d.preemptions} preemption${d.preemptions === 1 ? '' : 's'}`),
      ` · reports held: ${Object.entries(d.reports).map(([k, v]) => `${k}=${v}`).join(', ')} · ${expectText}`),
    d.description ? el('p', { class: 'desc' }, d.description) : null,
    verdict,
    el('p', { class: 'replay' }, 'reproduce: ', el('code', {}, d.replay))));

  // ---- controls
  const pos = el('span', { class: 'st-pos', 'aria-live': 'polite' });
  const btn = (act: string, label: string, title: string) => el('button', { type: 'button', 'data-act': act, title }, label);
  root.append(el('div', { class: 'st-controls' },
    btn('first', '|◀', 'first step (Home)'), btn('prev', '◀ back', 'previous step (←)'), pos, btn('next', 'forward ▶', 'next step (→)'), btn('last', '▶|', 'last step (End)'),
    el('span', { class: 'hint' }, 'keys: ← → step · Home/End · click a row')));

  // ---- diagram
  const lanes = d.lanes;
  const width = TIME_W + lanes.length * LANE_W + MARK_W;
  const x = (lane: number) => TIME_W + lane * LANE_W + LANE_W / 2;
  const head = svg('svg', { class: 'lanes-head', width, height: HEAD_H, viewBox: `0 0 ${width} ${HEAD_H}` },
    svg('text', { x: 6, y: 21, class: 'th' }, 't (ms)'),
    ...lanes.map((l, i) => svg('g', { class: `lane-head ${l.kind}` },
      svg('rect', { x: x(i) - LANE_W / 2 + 4, y: 4, width: LANE_W - 8, height: HEAD_H - 8, rx: 5 }),
      svg('text', { x: x(i), y: 22, 'text-anchor': 'middle' }, l.label))));
  const height = steps.length * ROW_H + 8;
  const body = svg('svg', { class: 'lanes-body', width, height, viewBox: `0 0 ${width} ${height}` },
    ...lanes.map((l, i) => svg('line', { class: `lifeline ${l.kind}`, x1: x(i), x2: x(i), y1: 0, y2: height })),
    svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, svg('path', { d: 'M0,0 L10,5 L0,10 z' }))));
  const texts = el('ol', { class: 'st-texts', start: 1 });
  const rows: Element[] = [];
  const textRows: HTMLElement[] = [];
  steps.forEach((s, i) => {
    const y = i * ROW_H + ROW_H / 2 + 4;
    const g = svg('g', { class: rowClass(s, violationAt.has(i)), 'data-step': i, 'data-kind': s.kind, 'data-actor': s.actor, 'data-event': s.event, ...(s.check ? { 'data-check': s.check.outcome } : {}) },
      svg('rect', { class: 'bg', x: 0, y: y - ROW_H / 2, width, height: ROW_H }),
      svg('text', { class: 'time', x: 6, y: y + 4 }, fmtMs(s.t)));
    const x1 = x(s.from);
    const colour = requestColour(s);
    const tint = colour === undefined ? {} : { style: `stroke:${colour}` };
    if (s.to !== undefined) {
      const x2 = x(s.to);
      g.append(svg('line', { class: 'msg', x1, y1: y, x2: x2 + (x2 > x1 ? -4 : 4), y2: y, 'marker-end': 'url(#arrow)', ...tint }),
        svg('text', { class: 'lbl', x: (x1 + x2) / 2, y: y - 4, 'text-anchor': 'middle', ...(colour ? { style: `fill:${colour}` } : {}) }, shortLabel(s)));
    } else {
      g.append(svg('rect', { class: 'box', x: x1 - LANE_W / 2 + 8, y: y - 9, width: LANE_W - 16, height: 18, rx: 4, ...tint }),
        svg('text', { class: 'lbl in', x: x1, y: y + 4, 'text-anchor': 'middle' }, shortLabel(s)));
    }
    const v = violationAt.get(i);
    const mark = v ? `✗ ${v.invariant}` : s.decision?.preempted ? '⚡ preemption' : s.check?.outcome === 'pass' ? `${s.event} passed` : '';
    if (mark) g.append(svg('text', { class: v ? 'vmark' : s.decision ? 'pmark' : 'cmark', x: width - MARK_W + 8, y: y + 4 }, mark));
    g.addEventListener('click', () => go(i));
    body.append(g);
    rows.push(g);
    const li = el('li', { class: rowClass(s, violationAt.has(i)), 'data-step': i }, s.text, s.dbChange ? el('span', { class: 'chg' }, ` [${s.dbChange.join('; ')}]`) : null);
    li.addEventListener('click', () => go(i));
    texts.append(li);
    textRows.push(li);
  });
  const diagram = el('div', { class: 'st-diagram' }, el('div', { class: 'sticky' }, head), body);
  const panel = el('aside', { class: 'st-panel' });
  root.append(el('div', { class: 'st-main' }, el('div', { class: 'st-left' }, diagram, el('details', { class: 'st-log' }, el('summary', {}, 'every step as a sentence'), texts)), panel));

  // ---- behaviour
  let cur = -1;
  function go(i: number): void {
    const n = Math.max(0, Math.min(steps.length - 1, i));
    if (n === cur) return;
    cur = n;
    rows.forEach((r, j) => {
      r.classList.toggle('current', j === n);
      r.classList.toggle('future', j > n);
    });
    textRows.forEach((r, j) => r.classList.toggle('current', j === n));
    pos.textContent = `step ${n + 1} / ${steps.length} · t = ${fmtMs(steps[n]!.t)} ms`;
    drawPanel(panel, d, n);
    const row = rows[n] as SVGGElement;
    const box = diagram.getBoundingClientRect();
    const top = row.getBoundingClientRect().top - box.top;
    if (top < HEAD_H + 10 || top > box.height - 40) diagram.scrollTop += top - box.height / 2;
    opts.onStep?.(n);
  }
  root.querySelectorAll<HTMLButtonElement>('button[data-act]').forEach((b) => b.addEventListener('click', () => {
    const a = b.dataset.act;
    go(a === 'first' ? 0 : a === 'last' ? steps.length - 1 : a === 'prev' ? cur - 1 : cur + 1);
  }));
  root.querySelectorAll<HTMLButtonElement>('button.jump').forEach((b) => b.addEventListener('click', () => go(Number(b.dataset.step))));
  const onKey = (e: KeyboardEvent): void => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.altKey || e.ctrlKey || e.metaKey) return;
    const to = e.key === 'ArrowRight' || e.key === 'ArrowDown' || e.key === 'j' ? cur + 1
      : e.key === 'ArrowLeft' || e.key === 'ArrowUp' || e.key === 'k' ? cur - 1
        : e.key === 'Home' ? 0 : e.key === 'End' ? steps.length - 1 : undefined;
    if (to === undefined) return;
    e.preventDefault();
    go(to);
  };
  document.addEventListener('keydown', onKey);
  go(opts.start ?? 0);
  return { go, current: () => cur, destroy: () => document.removeEventListener('keydown', onKey) };
}

function rowClass(s: Step, violation: boolean): string {
  return `row k-${s.kind}${s.decision?.preempted ? ' preempted' : ''}${s.check ? ` check-${s.check.outcome}` : ''}${violation ? ' violation' : ''}`;
}

function fmtMs(t: number): string {
  return Number.isInteger(t) ? String(t) : t.toFixed(3);
}

/** The right-hand panel for step n: what happened, the decision, the violation, the database rows. */
function drawPanel(panel: HTMLElement, d: StepperData, n: number): void {
  const s = d.steps[n]!;
  const prev = n > 0 ? d.dbStates[d.steps[n - 1]!.db]! : { reports: [], keys: [] };
  const db = d.dbStates[s.db]!;
  const parts: Node[] = [];
  parts.push(el('div', { class: 'st-now' },
    el('div', { class: 'when' }, `step ${n + 1} · t = ${fmtMs(s.t)} ms · ${s.actor}`),
    el('div', { class: 'what' }, s.text),
    s.line ? el('code', { class: 'line' }, s.line.trim()) : null));
  if (s.decision) {
    const dec = s.decision;
    parts.push(el('div', { class: `st-decision${dec.preempted ? ' preempted' : ''}` },
      el('div', { class: 'title' }, dec.preempted ? '⚡ decision — a preemption: the task that just ran could have continued, another runs instead' : '◆ decision — who runs next'),
      el('ol', { start: 0 }, ...dec.of.map((c, i) => el('li', { class: i === dec.chosen ? 'chosen' : '' }, c, i === dec.chosen ? ' ← runs' : i === 0 ? ' (could continue)' : '')))));
  }
  for (const v of d.violations) {
    if (v.step === n) {
      parts.push(el('div', { class: 'st-violation active', role: 'alert' },
        el('strong', {}, `✗ ${v.invariant} breaks here`), ` — ${v.why}. `, el('span', {}, `${v.detail} (${v.op})`)));
    } else if (v.step < n) {
      parts.push(el('div', { class: 'st-violation past' }, `✗ ${v.invariant} broken since step ${v.step + 1}`));
    }
  }
  if (s.dbChange) parts.push(el('div', { class: 'st-change' }, el('strong', {}, 'database change: '), s.dbChange.join('; ')));
  parts.push(reportsTable(db, prev, d.violations.filter((v) => v.step <= n && v.invariant === 'exactly-one').length > 0));
  parts.push(keysTable(db, prev, s.t));
  panel.replaceChildren(...parts);
}

function reportsTable(db: DbState, prev: DbState, broken: boolean): HTMLElement {
  const old = new Set(prev.reports.map((r) => r.id));
  return el('section', { class: 'db-table' },
    el('h3', {}, `reports (${db.reports.length})`),
    db.reports.length === 0 ? el('p', { class: 'empty' }, 'no rows') : el('table', { class: `reports${broken ? ' broken' : ''}` },
      el('thead', {}, el('tr', {}, ...['id', 'run_id', 'tenant', 'title', 'idem_key'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...db.reports.map((r) => el('tr', { class: old.has(r.id) ? '' : 'changed', 'data-id': r.id },
        el('td', {}, r.id), el('td', {}, r.run_id), el('td', {}, r.tenant), el('td', {}, r.title), el('td', { title: r.idem_key ?? '' }, r.idem_key === null ? '—' : short(r.idem_key)))))));
}

function keysTable(db: DbState, prev: DbState, t: number): HTMLElement {
  const before = new Map(prev.keys.map((k) => [k.key, k]));
  const changed = (k: KeyView): boolean => {
    const o = before.get(k.key);
    return o === undefined || o.status !== k.status || o.fence !== k.fence || o.locked_at !== k.locked_at;
  };
  return el('section', { class: 'db-table' },
    el('h3', {}, `idempotency_keys (${db.keys.length})`),
    db.keys.length === 0 ? el('p', { class: 'empty' }, 'no rows') : el('table', { class: 'keys' },
      el('thead', {}, el('tr', {}, ...['key', 'status', 'locked_at', 'lease until', 'fence', 'response'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...db.keys.map((k) => {
        const expired = k.lease_until !== null && k.lease_until <= t;
        return el('tr', { class: `${changed(k) ? 'changed' : ''} ${k.status}${expired ? ' expired' : ''}`, 'data-key': k.key },
          el('td', { title: k.key }, short(k.key)), el('td', { class: 'status' }, k.status), el('td', {}, k.locked_at ?? '—'),
          el('td', {}, k.lease_until === null ? '—' : `${k.lease_until}${expired ? ' (expired)' : ''}`), el('td', { class: 'fence' }, k.fence ?? '—'),
          el('td', { title: k.response_body ?? '' }, k.response_code === null ? '—' : `${k.response_code} ${k.response_body ?? ''}`));
      }))));
}

/** A scoped key `["tenant","POST","key"]` shown as its key (and tenant when not the default). */
function short(scoped: string): string {
  try {
    const v = JSON.parse(scoped) as unknown;
    if (Array.isArray(v) && v.length === 3) return v[0] === 'default' ? String(v[2]) : `${v[2]} @${v[0]}`;
  } catch {
    // not a scoped key
  }
  return scoped;
}
