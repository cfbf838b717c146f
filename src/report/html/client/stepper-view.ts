import type { DbState, KeyView, Step, StepperData, TableView } from '../stepper-types.js';
import { el, svg } from './dom.js';
import { shortLabel } from '../short-label.js';
import { plural } from '../../../service/noun.js';

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
  /** Moves keyboard focus to the stepper (its first control), without scrolling the page. */
  focus(): void;
  /** Removes the keyboard listener and stops playing (the matrix page mounts one stepper after another). */
  destroy(): void;
}

/** Lane width on a wide screen; on a narrow one lanes shrink to fit, down to LANE_MIN_W. */
const LANE_W = 118;
const LANE_MIN_W = 60;
const TIME_W = 78;
const TIME_NARROW_W = 40;
/** Below this container width the diagram drops the marks column and narrows its lanes. */
const NARROW_PX = 700;
/** Play: one step per this many ms of real time (the page's own clock, not a simulated one). */
const PLAY_MS = 650;
const ROW_H = 24;
const HEAD_H = 34;
/** Room on the right of the lanes for marks (violation, preemption). */
const MARK_W = 150;

/** Request number → a colour, so two requests on one server lane are told apart. */
const REQUEST_COLOURS = ['#2457c5', '#c2410c', '#0f766e', '#7c3aed', '#b91c1c', '#4d7c0f'];
function requestColour(s: Step): string | undefined {
  const label = s.kind === 'decision' ? s.decision!.of[s.decision!.chosen]! : s.actor;
  const n = /#(\d+)/.exec(label)?.[1];
  return n === undefined ? undefined : REQUEST_COLOURS[(Number(n) - 1) % REQUEST_COLOURS.length];
}

/** Mounts a stepper for `d` into `root`. */
let mounted = 0;

export function mountStepper(root: HTMLElement, d: StepperData, opts: { onStep?: (i: number) => void; start?: number } = {}): StepperHandle {
  const uid = ++mounted;
  root.replaceChildren();
  root.classList.add('stepper');
  const steps = d.steps;
  const violationAt = new Map(d.violations.map((v) => [v.step, v]));

  // ---- header: what this run is and what broke
  // A run that stopped before it ended judges nothing: no ✓ for it.
  const verdict = d.stopped !== undefined
    ? el('p', { class: 'stopped', role: 'alert' }, `■ the run stopped before it ended; nothing is judged: ${d.stopped}`)
    : d.violations.length === 0
    ? el('p', { class: 'ok' }, '✓ every invariant holds in this run')
    : el('ul', { class: 'violations' }, ...d.violations.map((v) =>
      el('li', {}, el('button', { class: 'jump', 'data-step': v.step, type: 'button' }, `✗ ${v.invariant} (${v.op})`), ` ${v.detail} — breaks at step ${v.step + 1}: ${v.why}`)));
  const expectText = d.expect.met ? 'expect: met' : `expect: NOT met — ${d.expect.problems.join('; ')}`;
  root.append(el('header', { class: 'st-head' },
    el('h2', { tabindex: -1 }, d.name),
    el('p', { class: 'summary', 'data-summary': '' }, ...d.summary.flatMap((t, i) => (i === 0 ? [t] : [' ', t]))),
    el('p', { class: 'meta' },
      `${d.variant} / ${d.keySource} · run seed ${d.seed}${d.leaseMs === null ? '' : ` · lease ${d.leaseMs} ms`}${d.moduleLoads === 'per-process' ? ' · modules loaded once per simulated process' : ''}${d.clientModuleLoads === 'per-process' ? ' · client module loaded once per simulated client process' : ''} · ${d.decisions} decision${d.decisions === 1 ? '' : 's'}, `,
      el('strong', {}, `${d.preemptions} preemption${d.preemptions === 1 ? '' : 's'}`),
      ` · ${plural(d.noun)} held: ${d.stopped !== undefined ? 'not counted (the run stopped)' : Object.entries(d.reports).map(([k, v]) => `${k}=${v}`).join(', ')} · ${expectText}`),
    d.setup ? el('p', { class: 'meta setup' }, d.setup.join(' · ')) : null,
    d.description ? el('p', { class: 'desc' }, d.description) : null,
    verdict,
    // The steps are the main run; a progress violation is judged on what came after the faults stopped.
    d.recovery ? el('details', { class: 'recovery' }, el('summary', {}, `recovery after the faults stopped (${d.recovery.length} lines): what progress is judged on`), el('pre', {}, d.recovery.join('\n'))) : null,
    el('p', { class: 'replay' }, 'reproduce: ', el('code', {}, d.replay))));
  const decisionCount = steps.filter((s) => s.kind === 'decision' && !s.decision?.preempted).length;

  // ---- controls
  const pos = el('span', { class: 'st-pos', 'aria-live': 'polite' });
  const btn = (act: string, label: string, title: string) => el('button', { type: 'button', 'data-act': act, title }, label);
  const play = el('button', { type: 'button', 'data-act': 'play', title: 'play the run one step at a time (space)', 'aria-pressed': 'false' }, '▶ play');
  const hide = el('input', { type: 'checkbox', id: `hide-${uid}`, 'data-act': 'hide-decisions' });
  root.append(el('div', { class: 'st-controls' },
    el('div', { class: 'st-buttons' },
      btn('first', '|◀', 'first step (Home)'), btn('prev', '◀ back', 'previous step (←)'), play, btn('next', 'forward ▶', 'next step (→)'), btn('last', '▶|', 'last step (End)')),
    pos,
    el('label', { class: 'st-hide', for: `hide-${uid}` }, hide, ` hide ${decisionCount} scheduler decision${decisionCount === 1 ? '' : 's'} (preemptions stay)`),
    el('span', { class: 'hint' }, 'keys: ← → step · Home/End · space play · click a row')));

  // ---- diagram (redrawn when scheduler rows are hidden or shown, so the rows stay contiguous)
  const lanes = d.lanes;
  const store = storeOf(d);
  const texts = el('ol', { class: 'st-texts' });
  const diagram = el('div', { class: 'st-diagram' });
  const panel = el('aside', { class: 'st-panel', 'aria-label': `the ${store} and the decision at this step` });
  root.append(el('div', { class: 'st-main' }, el('div', { class: 'st-left' }, diagram, el('details', { class: 'st-log' }, el('summary', {}, 'every step as a sentence'), texts)), panel));
  let rows: Array<Element | undefined> = [];
  let textRows: Array<HTMLElement | undefined> = [];
  let visible: number[] = steps.map((_, i) => i);
  const shows = (s: Step): boolean => !(hide.checked && s.kind === 'decision' && !s.decision?.preempted);

  function draw(): void {
    visible = steps.flatMap((s, i) => (shows(s) ? [i] : []));
    // Lanes share the room there is; on a phone they narrow and the marks column goes (the panel says the same).
    const room = Math.max(root.clientWidth, 300);
    const narrow = room < NARROW_PX;
    const timeW = narrow ? TIME_NARROW_W : TIME_W;
    const markW = narrow ? 0 : MARK_W;
    const laneW = narrow ? Math.max(LANE_MIN_W, Math.floor((room - 2 - timeW) / lanes.length)) : LANE_W;
    const width = timeW + lanes.length * laneW + markW;
    const x = (lane: number) => timeW + lane * laneW + laneW / 2;
    const head = svg('svg', { class: 'lanes-head', width, height: HEAD_H, viewBox: `0 0 ${width} ${HEAD_H}`, role: 'img', 'aria-label': `lanes: ${lanes.map((l) => l.label).join(', ')}` },
      svg('text', { x: 4, y: 21, class: 'th' }, narrow ? 'ms' : 't (ms)'),
      ...lanes.map((l, i) => svg('g', { class: `lane-head ${l.kind}` },
        svg('rect', { x: x(i) - laneW / 2 + 3, y: 4, width: laneW - 6, height: HEAD_H - 8, rx: 5 }),
        svg('text', { x: x(i), y: 22, 'text-anchor': 'middle' }, narrow ? l.label.replace(/^server /, '').replace('database', 'db').replace('network', 'net') : l.label))));
    const height = visible.length * ROW_H + 8;
    const body = svg('svg', { class: `lanes-body${narrow ? ' narrow' : ''}`, width, height, viewBox: `0 0 ${width} ${height}` },
      ...lanes.map((l, i) => svg('line', { class: `lifeline ${l.kind}`, x1: x(i), x2: x(i), y1: 0, y2: height })),
      svg('defs', {}, svg('marker', { id: `arrow-${uid}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, svg('path', { d: 'M0,0 L10,5 L0,10 z' }))));
    rows = [];
    textRows = [];
    texts.replaceChildren();
    visible.forEach((i, row) => {
      const s = steps[i]!;
      const y = row * ROW_H + ROW_H / 2 + 4;
      const g = svg('g', { class: rowClass(s, violationAt.has(i)), 'data-step': i, 'data-kind': s.kind, 'data-actor': s.actor, 'data-event': s.event, ...(s.check ? { 'data-check': s.check.outcome } : {}) },
        svg('rect', { class: 'bg', x: 0, y: y - ROW_H / 2, width, height: ROW_H }),
        svg('text', { class: 'time', x: 4, y: y + 4 }, fmtMs(s.t)));
      const x1 = x(s.from);
      const colour = requestColour(s);
      const tint = colour === undefined ? {} : { style: `stroke:${colour}` };
      if (s.to !== undefined) {
        const x2 = x(s.to);
        g.append(svg('line', { class: 'msg', x1, y1: y, x2: x2 + (x2 > x1 ? -4 : 4), y2: y, 'marker-end': `url(#arrow-${uid})`, ...tint }),
          svg('text', { class: 'lbl', x: (x1 + x2) / 2, y: y - 4, 'text-anchor': 'middle', ...(colour ? { style: `fill:${colour}` } : {}) }, shortLabel(s)));
      } else {
        g.append(svg('rect', { class: 'box', x: x1 - laneW / 2 + 5, y: y - 9, width: laneW - 10, height: 18, rx: 4, ...tint }),
          svg('text', { class: 'lbl in', x: x1, y: y + 4, 'text-anchor': 'middle' }, shortLabel(s)));
      }
      const v = violationAt.get(i);
      const mark = v ? `✗ ${v.invariant}` : s.decision?.preempted ? '⚡ preemption' : s.check?.outcome === 'pass' ? `${s.event} passed` : s.dbChange ? `${store} changes` : '';
      if (mark && markW > 0) g.append(svg('text', { class: v ? 'vmark' : s.decision ? 'pmark' : 'cmark', x: width - markW + 8, y: y + 4 }, mark));
      g.addEventListener('click', () => go(i));
      body.append(g);
      rows[i] = g;
      const li = el('li', { class: rowClass(s, violationAt.has(i)), 'data-step': i, value: i + 1 }, s.text, s.dbChange ? el('span', { class: 'chg' }, ` [${s.dbChange.join('; ')}]`) : null);
      li.addEventListener('click', () => go(i));
      texts.append(li);
      textRows[i] = li;
    });
    diagram.replaceChildren(el('div', { class: 'sticky' }, head), body);
    paint();
  }

  // ---- behaviour
  let cur = -1;
  function paint(): void {
    if (cur < 0) return;
    for (const i of visible) {
      rows[i]!.classList.toggle('current', i === cur);
      rows[i]!.classList.toggle('future', i > cur);
      textRows[i]!.classList.toggle('current', i === cur);
    }
  }
  function go(i: number): void {
    const n = Math.max(0, Math.min(steps.length - 1, i));
    if (n === cur) return;
    cur = n;
    paint();
    pos.textContent = `step ${n + 1} / ${steps.length} · t = ${fmtMs(steps[n]!.t)} ms`;
    drawPanel(panel, d, n);
    const row = rows[n] as SVGGElement | undefined;
    if (row !== undefined) {
      const box = diagram.getBoundingClientRect();
      const top = row.getBoundingClientRect().top - box.top;
      if (top < HEAD_H + 10 || top > box.height - 40) diagram.scrollTop += top - box.height / 2;
    }
    opts.onStep?.(n);
  }
  /** The next shown step after (dir 1) or before (dir −1) the current one; hidden scheduler rows are skipped. */
  function step(dir: 1 | -1): number {
    const at = visible.indexOf(cur);
    if (at < 0) {
      const after = visible.find((i) => i > cur);
      const before = [...visible].reverse().find((i) => i < cur);
      return (dir > 0 ? after : before) ?? cur;
    }
    return visible[Math.max(0, Math.min(visible.length - 1, at + dir))]!;
  }
  let timer: number | undefined;
  function stop(): void {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    play.textContent = '▶ play';
    play.setAttribute('aria-pressed', 'false');
  }
  function toggle(): void {
    if (timer !== undefined) return stop();
    if (cur === visible[visible.length - 1]) go(visible[0]!);
    play.textContent = '❚❚ pause';
    play.setAttribute('aria-pressed', 'true');
    // The page's own clock paces the replay for the eye; the run itself was simulated long before.
    timer = window.setInterval(() => { // real-time: allowed (the page's Play button, not simulated code)
      const next = step(1);
      if (next === cur) stop();
      else go(next);
    }, PLAY_MS);
  }
  root.querySelectorAll<HTMLButtonElement>('button[data-act]').forEach((b) => b.addEventListener('click', () => {
    const a = b.dataset.act;
    if (a === 'play') return toggle();
    stop();
    go(a === 'first' ? visible[0]! : a === 'last' ? visible[visible.length - 1]! : a === 'prev' ? step(-1) : step(1));
  }));
  hide.addEventListener('change', () => {
    draw();
    if (!shows(steps[cur]!)) go(step(-1) === cur ? step(1) : step(-1));
  });
  root.querySelectorAll<HTMLButtonElement>('button.jump').forEach((b) => b.addEventListener('click', () => go(Number(b.dataset.step))));
  const onKey = (e: KeyboardEvent): void => {
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === ' ' && !(t instanceof HTMLButtonElement) && !(t instanceof HTMLAnchorElement) && !(t instanceof HTMLElement && t.tagName === 'SUMMARY')) {
      e.preventDefault();
      toggle();
      return;
    }
    const to = e.key === 'ArrowRight' || e.key === 'ArrowDown' || e.key === 'j' ? step(1)
      : e.key === 'ArrowLeft' || e.key === 'ArrowUp' || e.key === 'k' ? step(-1)
        : e.key === 'Home' ? visible[0] : e.key === 'End' ? visible[visible.length - 1] : undefined;
    if (to === undefined) return;
    e.preventDefault();
    stop();
    go(to);
  };
  document.addEventListener('keydown', onKey);
  draw();
  go(opts.start ?? 0);
  let width = root.clientWidth;
  const onResize = (): void => {
    // Redraw only when the width crosses what the lanes were laid out for.
    if (Math.abs(root.clientWidth - width) < 24) return;
    width = root.clientWidth;
    draw();
  };
  window.addEventListener('resize', onResize);
  return {
    go,
    current: () => cur,
    focus: () => root.querySelector<HTMLButtonElement>('button[data-act=next]')!.focus({ preventScroll: true }),
    destroy: () => {
      stop();
      document.removeEventListener('keydown', onKey);
      window.removeEventListener('resize', onResize);
    },
  };
}

function rowClass(s: Step, violation: boolean): string {
  return `row k-${s.kind}${s.decision?.preempted ? ' preempted' : ''}${s.check ? ` check-${s.check.outcome}` : ''}${violation ? ' violation' : ''}`;
}

function fmtMs(t: number): string {
  return Number.isInteger(t) ? String(t) : t.toFixed(3);
}

/** What the page calls the storage: its lane's label ('database', or 'redis' for a hosted app's store). */
function storeOf(d: StepperData): string {
  return d.lanes.find((l) => l.kind === 'db')?.label ?? 'database';
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
  if (s.kind === 'resumed') parts.push(el('p', { class: 'st-resumed' }, `The scheduler resumed ${s.actor} here, and it went on with its ${s.event} step: what it changes lands now, after the steps above ran in between.`));
  if (s.decision) {
    const dec = s.decision;
    parts.push(el('div', { class: `st-decision${dec.preempted ? ' preempted' : ''}` },
      el('div', { class: 'title' }, dec.preempted ? '⚡ a preemption: the task that just ran could have gone on; the scheduler ran another instead' : '◆ the scheduler picks who runs next'),
      el('ul', {}, ...dec.said.map((c, i) => el('li', { class: i === dec.chosen ? 'chosen' : '', title: dec.of[i] }, c)))));
  }
  for (const v of d.violations) {
    if (v.step === n) {
      parts.push(el('div', { class: 'st-violation active', role: 'status' },
        el('strong', {}, `✗ ${v.invariant} breaks here`), ` — ${v.why}. `, el('span', {}, `${v.detail} (${v.op})`)));
    } else if (v.step < n) {
      parts.push(el('div', { class: 'st-violation past' }, `✗ ${v.invariant} broken since step ${v.step + 1}`));
    }
  }
  if (s.dbChange) parts.push(el('div', { class: 'st-change' }, el('strong', {}, `${storeOf(d)} change: `), s.dbChange.join('; ')));
  if (db.tables !== undefined) parts.push(...db.tables.map((t) => anyTable(t, prev.tables?.find((p) => p.name === t.name))));
  else {
    parts.push(reportsTable(db, prev, d.violations.filter((v) => v.step <= n && v.invariant === 'exactly-one').length > 0));
    parts.push(keysTable(db, prev, s.t));
  }
  panel.replaceChildren(...parts);
}

/** A user service's table: its columns and rows, rows new or changed at this step highlighted. */
function anyTable(t: TableView, prev: TableView | undefined): HTMLElement {
  const old = new Set((prev?.rows ?? []).map((r) => JSON.stringify(r)));
  return el('section', { class: 'db-table' },
    el('h3', {}, `${t.name} (${t.rows.length})`),
    t.rows.length === 0 ? el('p', { class: 'empty' }, 'no rows') : el('table', { class: `any ${t.name}` },
      el('thead', {}, el('tr', {}, ...t.columns.map((c) => el('th', {}, c)))),
      el('tbody', {}, ...t.rows.map((r) => el('tr', { class: old.has(JSON.stringify(r)) ? '' : 'changed' }, ...r.map((v) => el('td', {}, v === null ? '—' : short(String(v)))))))));
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
