/** The pages' styles, inline in each page (no external stylesheet, no web fonts). */

/** Shared by every page. */
export const BASE_CSS = `
:root { --fg:#1d2330; --muted:#5b6475; --line:#d7dbe3; --bg:#ffffff; --panel:#f6f7f9; --accent:#2457c5; --bad:#c62828; --badbg:#fde8e8; --ok:#27692b; --okbg:#e6f4ea; --warn:#8f5600; --warnbg:#fff3dc; }
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
.crumb a, a { color: var(--accent); }
@media (max-width: 760px) {
  #app { padding: 10px 12px 24px; }
  h1 { font-size: 18px; }
  .hint { display: none; }
}
.muted, .hint { color: var(--muted); font-size: 12px; }
`;

/** The stepper (its own page and inside the matrix page). */
export const STEPPER_CSS = `
.st-head .meta { margin: 0 0 4px; color: var(--muted); }
.st-head .desc { margin: 2px 0 6px; max-width: 70em; color: var(--muted); font-size: 12.5px; }
.st-head .summary { margin: 6px 0 8px; max-width: 70em; font-size: 15px; line-height: 1.5; background: var(--panel); border-left: 4px solid var(--accent); padding: 6px 10px; }
.st-head .replay code { word-break: break-all; }
.st-head .replay { margin: 4px 0; }
.st-head .recovery { margin: 4px 0; }
.st-head .recovery pre { max-width: 100%; max-height: 20em; overflow: auto; font-size: 12px; background: var(--panel); padding: 6px; }
.st-head .ok { color: var(--ok); font-weight: 600; margin: 4px 0; }
.st-head .stopped { background: var(--warnbg); border-left: 4px solid var(--warn); color: var(--fg); padding: 4px 8px; margin: 6px 0; }
.violations { list-style: none; padding: 0; margin: 6px 0; }
.violations li { background: var(--badbg); border-left: 4px solid var(--bad); padding: 4px 8px; margin: 3px 0; }
.violations .jump { border-color: var(--bad); color: var(--bad); font-weight: 600; padding: 1px 8px; }
.st-controls { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; margin: 8px 0; position: sticky; top: 0; background: var(--bg); padding: 6px 0; z-index: 3; border-bottom: 1px solid var(--line); }
.st-buttons { display: flex; gap: 6px; flex-wrap: nowrap; }
.st-buttons button[data-act=play] { min-width: 6.2em; }
.st-pos { font-variant-numeric: tabular-nums; min-width: 14em; font-weight: 600; }
.st-hide { font-size: 12.5px; display: inline-flex; gap: 4px; align-items: center; cursor: pointer; }
.st-main { display: flex; gap: 16px; align-items: flex-start; }
.stepper { min-width: 0; }
.st-left { flex: 0 1 auto; min-width: 0; }
.st-diagram { max-height: 74vh; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
.st-diagram .sticky { position: sticky; top: 0; background: #fff; z-index: 2; border-bottom: 1px solid var(--line); }
.st-diagram svg { display: block; font-size: 11.5px; }
.st-diagram svg.narrow { font-size: 10px; }
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
.k-note .box { fill: var(--warnbg); stroke: var(--warn); stroke-dasharray: 3 2; } .k-note .lbl { fill: var(--warn); font-weight: 600; }
.k-resumed .lbl { font-weight: 600; }
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
.st-panel { flex: 1 1 420px; min-width: 340px; max-width: 680px; position: sticky; top: 56px; }
.st-resumed { font-size: 12.5px; margin: 6px 0 0; }
.st-now { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
.st-now .when { color: var(--muted); font-size: 12px; } .st-now .what { font-weight: 600; margin: 2px 0 4px; } .st-now .line { display: block; white-space: pre-wrap; word-break: break-all; }
.st-decision { margin-top: 8px; border: 1px solid #cfc6ee; background: #f7f5fd; border-radius: 6px; padding: 6px 10px; }
.st-decision.preempted { border: 2px solid #e08a00; background: #fff6e6; }
.st-decision .title { font-weight: 600; } .st-decision ul { margin: 4px 0 0; padding-left: 1.4em; font-size: 12.5px; }
.st-decision li.chosen { font-weight: 700; color: #5a4a9c; }
.st-violation { margin-top: 8px; border-radius: 6px; padding: 6px 10px; }
.st-violation.active { background: var(--badbg); border: 2px solid var(--bad); color: #7f1515; }
.st-violation.past { background: #fff; border: 1px dashed var(--bad); color: var(--bad); font-size: 12px; }
.st-change { margin-top: 8px; font-size: 12.5px; color: #8a5200; }
.db-table { overflow-x: auto; }
/* Cells wrap instead of clipping: a key table fits its panel at 1280 px and on a phone. */
.db-table table { width: 100%; table-layout: auto; }
.db-table th, .db-table td { white-space: normal; overflow-wrap: anywhere; }
.db-table .empty { color: var(--muted); margin: 2px 0; font-size: 12px; }
.db-table tr.changed td { background: #fff3c4; }
.db-table table.reports.broken { outline: 2px solid var(--bad); }
.db-table tr.in_progress .status { color: var(--warn); font-weight: 600; } .db-table tr.done .status { color: var(--ok); font-weight: 600; }
.db-table tr.expired td { color: var(--bad); }
.db-table .fence { font-weight: 700; }
/* A phone: the panel goes under the diagram, full width; the controls wrap onto two lines. */
@media (max-width: 760px) {
  .st-main { flex-direction: column; gap: 10px; }
  .st-left, .st-panel { width: 100%; min-width: 0; max-width: none; }
  .st-panel { position: static; }
  .st-diagram { max-height: 55vh; }
  .st-pos { min-width: 0; }
  .st-head .summary { font-size: 14px; }
}
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
.herd-form .legend { align-self: center; }
.herd-form button:disabled { opacity: .6; cursor: default; }
.herd-out .cmd { word-break: break-all; }
.formulas { max-width: 62em; margin: 6px 0; } .formulas summary { cursor: pointer; color: var(--accent); }
.formulas th, .formulas td { white-space: normal; vertical-align: top; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 12px; max-width: 1200px; }
.chart { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px; }
.chart figcaption { font-weight: 600; font-size: 13px; }
.chart .tick, .hist text { font-size: 11px; fill: var(--muted); } .chart .axis { font-size: 12px; fill: var(--fg); }
.legend-line { display: flex; flex-wrap: wrap; gap: 6px 14px; } .legend-line .key { display: inline-flex; align-items: center; gap: 5px; }
.swatch { display: inline-block; width: 18px; height: 4px; border-radius: 2px; }
.hists { display: grid; gap: 10px; max-width: 1200px; }
.hist { margin: 0; } .hist figcaption { font-size: 12.5px; }
.wide { overflow-x: auto; max-width: 100%; }
@media (max-width: 760px) {
  .herd-form input, .herd-form select { width: 7em; }
}
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
.matrix tbody th { white-space: normal; }
.matrix-intro { max-width: 64em; }
#cell-view { margin-top: 16px; border-top: 2px solid var(--line); padding-top: 8px; }
.matrix-wrap { overflow-x: auto; max-width: 100%; }
/* The row names stay put while the columns scroll under them (a phone shows three columns at a time). */
.matrix tbody th, .matrix thead th:first-child { position: sticky; left: 0; z-index: 1; background: var(--panel); }
.cell-bar { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: baseline; font-size: 12.5px; }
.cell-bar .save { color: var(--muted); }
@media (max-width: 760px) {
  .matrix td.cell button { padding: 6px 6px; }
  .matrix th { white-space: normal; }
  .matrix tbody th { font-size: 11px; padding: 3px 4px; }
  .matrix td.cell { height: 1px; } .matrix td.cell button { height: 100%; }
}
`;
