import { flags } from './args.js';
import { textTable } from '../report/table.js';
import { CONFORMANCE_COLUMNS, runConformance, type ConformanceCell } from '../real/conformance.js';

const HELP = `retrysim conformance [--json] [--seed N] [--rows R,R] [--columns C,C]

Runs every canonical scenario (the cells of \`retrysim matrix\`) twice: in the
simulation, and for real against \`retrysim serve\` child processes on a
SQLite file, with real faults, real time and real processes (the kill column
is a real SIGKILL of the server, restarted on the same database file). Prints
both tables side by side, as "sim | real" per cell, and exits 1 on any
difference (reports held, or the set of broken invariants).

  --json          one JSON object: {"seed", "columns", "cells": [...], "differences"}
  --seed N        seed of both worlds (default 1)
  --rows R,...    only these rows, e.g. key_atomic/tool_call
  --columns C,... only these columns (${CONFORMANCE_COLUMNS.join(', ')})

A full run takes about a minute (one server process per cell).`;

function list(v: string | undefined): string[] | undefined {
  return v === undefined ? undefined : v.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** The side-by-side table: one row per matrix row, "sim | real" per column; '≠' marks a difference. */
export function conformanceTable(cells: readonly ConformanceCell[]): string {
  const columns = [...new Set(cells.map((c) => c.column))];
  const rows = [...new Set(cells.map((c) => c.row))];
  return textTable(['variant/keySource (sim | real)', ...columns], rows.map((r) => [r, ...columns.map((col) => {
    const c = cells.find((x) => x.row === r && x.column === col);
    if (!c) return '';
    return `${c.sim.reports} | ${c.real.reports}${c.same ? '' : ' ≠'}`;
  })]));
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = flags('conformance', argv, {
      json: { type: 'boolean' }, seed: { type: 'string' }, rows: { type: 'string' }, columns: { type: 'string' },
    }, HELP);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values;
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isSafeInteger(seed)) {
    console.error(`retrysim conformance: --seed must be an integer, got '${values.seed}'`);
    return 2;
  }
  const columns = list(values.columns);
  for (const c of columns ?? []) {
    if (!CONFORMANCE_COLUMNS.includes(c)) {
      console.error(`retrysim conformance: unknown column '${c}'; columns: ${CONFORMANCE_COLUMNS.join(', ')}`);
      return 2;
    }
  }
  const t0 = Date.now();
  let cells: ConformanceCell[];
  try {
    cells = await runConformance({
      seed,
      rows: list(values.rows),
      columns,
      onCell: values.json ? undefined : (c, i, n) => process.stderr.write(`\r[${i}/${n}] ${c.row} ${c.column}`.padEnd(70)),
    });
  } catch (e) {
    if (!values.json) process.stderr.write('\n');
    console.error(`retrysim conformance: ${(e as Error).message}`);
    return 2;
  }
  const diffs = cells.filter((c) => !c.same);
  if (values.json) {
    console.log(JSON.stringify({ seed, columns: [...new Set(cells.map((c) => c.column))], cells, differences: diffs.length }));
    return diffs.length === 0 ? 0 : 1;
  }
  process.stderr.write('\n');
  console.log(`retrysim conformance — seed ${seed}; reports held for one logical operation, simulation | real processes\n`);
  console.log(conformanceTable(cells));
  const kills = cells.reduce((n, c) => n + c.real.kills, 0);
  console.log(`\n${cells.length} cells in ${((Date.now() - t0) / 1000).toFixed(1)} s wall time; ${kills} real SIGKILL(s) survived.`);
  for (const d of diffs) {
    console.log(`DIFFERENT ${d.row} × ${d.column}: sim ${d.sim.reports} report(s) [${d.sim.violations.join(', ')}], ` +
      `real ${d.real.reports} [${d.real.violations.join(', ')}]`);
  }
  console.log(diffs.length === 0 ? 'No differences: the model predicts the real service in every cell.' : `${diffs.length} difference(s).`);
  return diffs.length === 0 ? 0 : 1;
}
