import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { CampaignResult } from '../../campaign/run.js';
import type { RunOptions } from '../../scenario/run.js';
import type { Scenario } from '../../scenario/schema.js';
import { judge } from '../../campaign/judge.js';
import { neverReached, type Coverage } from '../../campaign/coverage.js';
import { escapeHtml } from './page.js';
import { BASE_CSS } from './styles.js';
import { stoppedPages, writeStepperPage } from './write.js';
import { loadScenario } from '../../scenario/load.js';
import type { StepperSource } from './stepper-data.js';

/**
 * `retrysim check --html DIR`: one stepper page per counterexample (named
 * after its scenario file) and an index of every claim linking to them.
 * Each page replays the counterexample's recorded schedule strictly, so it
 * shows the very run the campaign found.
 */
export async function writeCheckPages(dir: string, results: readonly CampaignResult[]): Promise<string[]> {
  // Made when there is something to write (the CLI checked up front that it can be).
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const rows: string[] = [];
  for (const r of results) {
    const cx = r.counterexample;
    let link = '—';
    if (cx !== undefined) {
      const name = `${cx.file !== undefined ? basename(cx.file, '.json') : r.claim.id}.html`;
      await writeStepperPage(join(dir, name), cx.scenario, { ...(cx.file !== undefined ? { file: cx.file } : {}), replay: cx.replay, index: 'index.html' }, { strictReplay: true });
      written.push(join(dir, name));
      link = `<a href="${escapeHtml(encodeURIComponent(name))}">${escapeHtml(cx.violations.map((v) => v.invariant).filter((v, i, a) => a.indexOf(v) === i).join(', ') || 'run')}</a>`;
    }
    // The same judgement as the text table and --json (an inconclusive row is ?, never ✓).
    const j = judge(r);
    rows.push(`<tr class="${j.ok ? 'ok' : 'bad'}"><td>${j.ok ? '✓' : j.inconclusive ? '?' : '✗'}</td><td>${escapeHtml(r.claim.variant)} / ${escapeHtml(r.claim.keySource)}</td><td>${escapeHtml(r.claim.title)}</td><td>${r.claim.expected}</td><td>${r.verdict}</td><td>${r.runs}${r.bounded ? ` + ${r.bounded.schedules} schedules${r.bounded.complete ? ' (all)' : ''}` : ''}</td><td>${link}</td><td>${coverageCell(r.coverage, r.verdict)}</td></tr>`);
  }
  const index = join(dir, 'index.html');
  writeFileSync(index, [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>retrysim check — counterexamples</title><style>${BASE_CSS} tr.bad td { background: #fde8e8; } a { color: #2457c5; font-weight: 600; } .wide { overflow-x: auto; max-width: 100%; }</style></head><body><div id="app">`,
    '<p class="crumb">retrysim · check</p><h1>Claims and their counterexamples</h1>',
    '<p>Each "fails" claim links to its shrunk counterexample, drawn step by step. A ✓ means the verdict is the expected one; ? an inconclusive search (fewer runs than asked). A claim without a failure says which situations its runs reached.</p>',
    '<div class="wide"><table><thead><tr><th></th><th>variant / key source</th><th>claim</th><th>expected</th><th>verdict</th><th>runs</th><th>counterexample</th><th>coverage</th></tr></thead><tbody>',
    ...rows,
    '</tbody></table></div></div></body></html>',
    '',
  ].join('\n'));
  written.push(index);
  return written;
}

/**
 * Draws a counterexample's run to a page (a user's retry client: its own
 * run, replayed strictly); the default draws the harness's run of `opts`.
 */
export type DrawRun = (out: string, s: Scenario, source: StepperSource) => Promise<unknown>;

/** One user service's (or client's) campaign, as {@link writeServiceCheckPages} draws it. */
export interface ServiceCheckRow {
  /** e.g. `service payments (examples/payments/service.ts)`. */
  subject: string;
  verdict: string;
  runs: number;
  ok: boolean;
  counterexample?: { scenario: Scenario; file?: string; replay: string; violations: readonly { invariant: string; op?: string; detail?: string }[] };
  /** What the runs reached (a campaign that keeps count): folded into the row, as `check --html` does for a claim. */
  coverage?: Coverage;
  /** A campaign a run stopped (exit 2): what stopped it, and the file that replays that run up to the stop. */
  error?: { message: string; file?: string; replay?: string };
  /** The reasons block the text table prints under it (why a campaign is inconclusive, an expectation unmet), one line each. */
  reasons?: string;
}

/**
 * `retrysim check --service … --html DIR`: the counterexample's stepper
 * page (the recorded schedule replayed strictly, through `opts` — the
 * user's service) and an index with the one row, as `check --html` writes
 * them for built-in claims.
 */
export async function writeServiceCheckPages(dir: string, row: ServiceCheckRow, opts: RunOptions | DrawRun): Promise<{ written: string[]; problem?: string }> {
  // Made when there is something to write (the CLI checked up front that it can be).
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const cx = row.counterexample;
  let link = '—';
  let problem: string | undefined;
  if (cx !== undefined) {
    const name = `${cx.file !== undefined ? basename(cx.file, '.json') : 'counterexample'}.html`;
    try {
      const source = { ...(cx.file !== undefined ? { file: cx.file } : {}), replay: cx.replay, index: 'index.html' };
      if (typeof opts === 'function') await opts(join(dir, name), cx.scenario, source);
      else await writeStepperPage(join(dir, name), cx.scenario, source, { ...opts, strictReplay: true });
      written.push(join(dir, name));
      link = `<a href="${escapeHtml(encodeURIComponent(name))}">${escapeHtml(cx.violations.map((v) => v.invariant).filter((v, i, a) => a.indexOf(v) === i).join(', ') || 'run')}</a>`;
    } catch (e) {
      // The verdict stands without its picture; the index and the caller say why there is none.
      problem = `the counterexample's page could not be drawn: ${(e as Error).message.split('\n')[0]}`;
      link = escapeHtml(problem);
    }
  }
  // A run that stopped the campaign, drawn up to the stop as `replay --html` draws it (the draw ends in the stop).
  let stopLink: string | undefined;
  const stopFile = row.error?.file;
  if (stopFile !== undefined) {
    const name = `${basename(stopFile, '.json')}.html`;
    const out = join(dir, name);
    try {
      const scenario = loadScenario(stopFile);
      const source = { file: stopFile, ...(row.error!.replay !== undefined ? { replay: row.error!.replay } : {}), index: 'index.html' };
      if (typeof opts === 'function') await opts(out, scenario, source);
      else await writeStepperPage(out, scenario, source, { ...opts, strictReplay: true });
      // A run that ends is not the run that stopped: its page would show another story.
      problem = "the stopped run's page could not be drawn: replayed, its run did not stop";
      rmSync(out, { force: true });
    } catch (e) {
      if (!(e instanceof Error) || stoppedPages.get(e) !== out) problem = `the stopped run's page could not be drawn: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`;
    }
    if (problem === undefined) {
      written.push(out);
      stopLink = `<a href="${escapeHtml(encodeURIComponent(name))}">the run up to the stop</a>`;
    }
  }
  const index = join(dir, 'index.html');
  writeFileSync(index, [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    // A replay command and a violation's detail are long unbroken lines: they wrap rather than widen a phone's page.
    `<title>retrysim check — ${escapeHtml(row.subject)}</title><style>${BASE_CSS} tr.bad td { background: #fde8e8; } a { color: #2457c5; font-weight: 600; } .wide { overflow-x: auto; max-width: 100%; } p, li, code { overflow-wrap: anywhere; }</style></head><body><div id="app">`,
    `<p class="crumb">retrysim · check</p><h1>${escapeHtml(row.subject)}</h1>`,
    '<div class="wide"><table><thead><tr><th></th><th>verdict</th><th>runs</th><th>counterexample</th><th>coverage</th></tr></thead><tbody>',
    `<tr class="${row.ok ? 'ok' : 'bad'}"><td>${row.ok ? '✓' : row.verdict === 'inconclusive' ? '?' : '✗'}</td><td>${escapeHtml(row.verdict)}</td><td>${row.runs}</td><td>${stopLink ?? (row.error?.file !== undefined ? escapeHtml(basename(row.error.file)) : link)}</td><td>${coverageCell(row.coverage, row.verdict)}</td></tr>`,
    '</tbody></table></div>',
    // Why the verdict is what it is, as the text says it: a "?" alone did not say why it was inconclusive.
    ...(row.reasons !== undefined ? [`<div class="reasons">${row.reasons.split('\n').map((l) => `<p>${escapeHtml(l.trim())}</p>`).join('')}</div>`] : []),
    // What the counterexample breaks and the command that replays it, as the text table's lines under it say.
    ...(cx !== undefined ? [
      `<ul class="violations">${cx.violations.map((x) => `<li><strong>${escapeHtml(x.invariant)}</strong>${x.op !== undefined ? ` (${escapeHtml(x.op)})` : ''}${x.detail !== undefined ? `: ${escapeHtml(x.detail)}` : ''}</li>`).join('')}</ul>`,
      `<p>replay: <code>${escapeHtml(cx.replay)}</code></p>`,
    ] : []),
    // Not a verdict: the run that stopped the campaign, and how to see it up to the stop.
    ...(row.error !== undefined ? [
      `<h2>The campaign stopped at run ${row.runs}</h2><p class="stop">${escapeHtml(row.error.message)}</p>`,
      row.error.replay !== undefined ? `<p>Its run is written to <code>${escapeHtml(row.error.file ?? '')}</code>; replayed with its timeline up to the stop: <code>${escapeHtml(row.error.replay)}</code>${stopLink !== undefined ? `; drawn step by step: ${stopLink}` : ''}</p>` : '<p>The run was not written (it did not stop again when run once more).</p>',
    ] : []),
    '</div></body></html>',
    '',
  ].join('\n'));
  written.push(index);
  return { written, ...(problem !== undefined ? { problem } : {}) };
}

/** What a campaign without a failure reached: the situations never reached, and the whole table folded. */
function coverageCell(c: Coverage | undefined, verdict: string): string {
  if (c === undefined || verdict === 'fails') return '—';
  const never = neverReached(c);
  const head = never.length === 0 ? 'every situation reached' : `never reached: ${never.map((x) => escapeHtml(x.what)).join('; ')}`;
  const table = c.rows.map((x) => `<tr><td>${escapeHtml(x.what)}</td><td>${x.runs}</td></tr>`).join('');
  return `<details><summary>${head}</summary><table><thead><tr><th>situation</th><th>runs of ${c.runs}</th></tr></thead><tbody>${table}</tbody></table></details>`;
}
