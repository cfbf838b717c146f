/** The pages' styles, inline in each page (no external stylesheet, no web fonts). */

/** Shared by every page. */
export const BASE_CSS = `
:root { --fg:#1d2330; --muted:#5b6475; --line:#d7dbe3; --bg:#ffffff; --panel:#f6f7f9; --accent:#2457c5; --bad:#c62828; --badbg:#fde8e8; --ok:#2e7d32; --okbg:#e6f4ea; --warn:#b26a00; --warnbg:#fff3dc; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--fg); background: var(--bg); }
#app { padding: 14px 20px 30px; }
h1 { font-size: 20px; margin: 4px 0 6px; }
h2 { font-size: 18px; margin: 2px 0 4px; }
h3 { font-size: 13px; margin: 12px 0 4px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code { font: 12px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; background: var(--panel); padding: 1px 4px; border-radius: 3px; }
button { font: inherit; padding: 4px 10px; border: 1px solid var(--line); background: #fff; border-radius: 5px; cursor: pointer; }
button:hover { border-color: var(--accent); }
button:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { border: 1px solid var(--line); padding: 3px 7px; text-align: left; white-space: nowrap; }
th { background: var(--panel); font-weight: 600; }
.crumb { color: var(--muted); margin: 0 0 4px; font-size: 12px; }
.muted, .hint { color: var(--muted); font-size: 12px; }
`;

/** The stepper (its own page and inside the matrix page). */
export const STEPPER_CSS = `
.st-head .meta { margin: 0 0 4px; color: var(--muted); }
.st-head .desc { margin: 2px 0 6px; max-width: 70em; }
.st-head .replay { margin: 4px 0; }
.st-head .ok { color: var(--ok); font-weight: 600; margin: 4px 0; }
.violations { list-style: none; padding: 0; margin: 6px 0; }
.violations li { background: var(--badbg); border-left: 4px solid var(--bad); padding: 4px 8px; margin: 3px 0; }
.violations .jump { border-color: var(--bad); color: var(--bad); font-weight: 600; padding: 1px 8px; }
.st-controls { display: flex; gap: 8px; align-items: center; margin: 8px 0; position: sticky; top: 0; background: var(--bg); padding: 6px 0; z-index: 3; border-bottom: 1px solid var(--line); }
.st-pos { font-variant-numeric: tabular-nums; min-width: 17em; text-align: center; font-weight: 600; }
.st-main { display: flex; gap: 16px; align-items: flex-start; }
.st-left { flex: 0 1 auto; min-width: 0; }
.st-diagram { max-height: 74vh; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
.st-diagram .sticky { position: sticky; top: 0; background: #fff; z-index: 2; border-bottom: 1px solid var(--line); }
.st-diagram svg { display: block; font-size: 11.5px; }
.lane-head rect { fill: var(--panel); stroke: var(--line); }
.lane-head.worker rect { fill: #e8effc; } .lane-head.server rect { fill: #eef6ea; } .lane-head.db rect { fill: #fbf1e3; } .lane-head.network rect { fill: #f2f2f2; }
.lane-head text, .th { font-weight: 600; fill: var(--fg); }
.lifeline { stroke: #c5cad4; stroke-dasharray: 3 3; }
.row { cursor: pointer; }
.row .bg { fill: transparent; }
.row:hover .bg { fill: #f1f4fa; }
.row.current .bg { fill: #dfe8fb; }
.row.future { opacity: .38; }
.row .time { fill: var(--muted); font-variant-numeric: tabular-nums; }
.row .msg { stroke: #38445a; stroke-width: 1.4; }
#arrow path, marker path { fill: #38445a; }
.row .box { fill: #fff; stroke: #9aa3b2; }
.row .lbl { fill: var(--fg); }
.k-request .msg { stroke: var(--accent); } .k-request .lbl { fill: var(--accent); font-weight: 600; }
.k-db .msg { stroke: #b26a00; } .k-db .lbl { fill: #8a5200; font-weight: 600; }
.k-answer .msg, .k-delivered .msg { stroke: #2e7d32; }
.k-lost .box, .k-kill .box, .k-killed .box, .k-error .box { fill: var(--badbg); stroke: var(--bad); } .k-lost .lbl, .k-kill .lbl, .k-killed .lbl { fill: var(--bad); font-weight: 600; }
.k-restart .box { fill: var(--okbg); stroke: var(--ok); }
.k-lease .box { fill: var(--warnbg); stroke: var(--warn); } .k-lease .lbl { fill: var(--warn); font-weight: 600; }
.k-timeout .box { fill: var(--warnbg); stroke: var(--warn); }
.k-decision .box { fill: #f3f0fb; stroke: #8f7fc7; } .k-decision .lbl { fill: #5a4a9c; }
.k-decision.preempted .box { fill: #ffe9c7; stroke: #e08a00; stroke-width: 2; } .k-decision.preempted .lbl { fill: #9a5b00; font-weight: 700; }
.check-pass .box { stroke: var(--accent); stroke-width: 2; }
.row.violation .bg, .row.violation.current .bg { fill: var(--badbg); }
.row .vmark { fill: var(--bad); font-weight: 700; } .row .pmark { fill: #9a5b00; font-weight: 700; } .row .cmark { fill: var(--muted); }
.st-log { margin-top: 8px; } .st-log summary { cursor: pointer; color: var(--muted); }
.st-texts { font-size: 12.5px; margin: 6px 0; padding-left: 3.2em; max-height: 40vh; overflow: auto; }
.st-texts li { cursor: pointer; } .st-texts li.current { background: #dfe8fb; } .st-texts .chg { color: #8a5200; }
.st-panel { flex: 1 1 380px; min-width: 340px; max-width: 640px; position: sticky; top: 56px; }
.st-now { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.st-now .when { color: var(--muted); font-size: 12px; } .st-now .what { font-weight: 600; margin: 2px 0 4px; } .st-now .line { display: block; white-space: pre-wrap; word-break: break-all; }
.st-decision { margin-top: 8px; border: 1px solid #cfc6ee; background: #f7f5fd; border-radius: 6px; padding: 6px 10px; }
.st-decision.preempted { border: 2px solid #e08a00; background: #fff6e6; }
.st-decision .title { font-weight: 600; } .st-decision ol { margin: 4px 0 0; padding-left: 2.2em; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.st-decision li.chosen { font-weight: 700; color: #5a4a9c; }
.st-violation { margin-top: 8px; border-radius: 6px; padding: 6px 10px; }
.st-violation.active { background: var(--badbg); border: 2px solid var(--bad); color: #7f1515; }
.st-violation.past { background: #fff; border: 1px dashed var(--bad); color: var(--bad); font-size: 12px; }
.st-change { margin-top: 8px; font-size: 12.5px; color: #8a5200; }
.db-table { overflow-x: auto; }
.db-table td { max-width: 15em; overflow: hidden; text-overflow: ellipsis; }
.db-table .empty { color: var(--muted); margin: 2px 0; font-size: 12px; }
.db-table tr.changed td { background: #fff3c4; }
.db-table table.reports.broken { outline: 2px solid var(--bad); }
.db-table tr.in_progress .status { color: var(--warn); font-weight: 600; } .db-table tr.done .status { color: var(--ok); font-weight: 600; }
.db-table tr.expired td { color: var(--bad); }
.db-table .fence { font-weight: 700; }
`;

/** The herd explorer. */
export const HERD_CSS = `
.herd-form { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-end; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin: 10px 0; }
.herd-form label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
.herd-form input, .herd-form select { font: inherit; padding: 3px 6px; width: 9em; }
.herd-form select { width: 11em; }
.herd-form .primary { background: var(--accent); color: #fff; border-color: var(--accent); }
.herd-out table td.num { text-align: right; font-variant-numeric: tabular-nums; }
.herd-out .status { margin: 6px 0; color: var(--muted); }
.herd-out pre { background: var(--panel); border: 1px solid var(--line); padding: 8px; border-radius: 6px; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
.herd-out .svg { overflow-x: auto; margin-top: 10px; }
.herd-intro { max-width: 62em; }
`;

/** The fault matrix. */
export const MATRIX_CSS = `
.matrix td.cell { padding: 0; }
.matrix td.cell button { width: 100%; border: 0; border-radius: 0; padding: 6px 12px; font-weight: 700; font-size: 14px; font-variant-numeric: tabular-nums; }
.matrix td.cell.good button { background: var(--okbg); color: var(--ok); }
.matrix td.cell.dup button { background: var(--badbg); color: var(--bad); }
.matrix td.cell.none button { background: var(--warnbg); color: var(--warn); }
.matrix td.cell.selected button { outline: 3px solid var(--accent); outline-offset: -3px; }
.matrix td.cell .diff { color: #8a5200; }
.matrix th.col { white-space: normal; max-width: 9em; font-size: 12px; }
.matrix-intro { max-width: 64em; }
#cell-view { margin-top: 16px; border-top: 2px solid var(--line); padding-top: 8px; }
`;
