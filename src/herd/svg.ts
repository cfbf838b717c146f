import type { CellResult } from './cells.js';

/**
 * Small multiples of write-arrival-time histograms: one row per strategy,
 * one column per client count, each panel the writes arriving at the server
 * over all runs of its cell, per ms and per run. Columns share an x range
 * (the median over strategies of the 95th-percentile arrival time), so the
 * comb of spikes that `expo` (no jitter) and `codex` (±10 % jitter) leave
 * behind sits next to the smear of the full-jitter strategies; the panel's
 * own tail beyond the range is noted in its corner. Self-made SVG, no
 * dependencies; pure function of the cells, so deterministic.
 */
export function herdSvg(cells: readonly CellResult[]): string {
  const strategies = [...new Set(cells.map((c) => c.strategy))];
  const clients = [...new Set(cells.map((c) => c.clients))];
  const pw = 260; // panel width
  const ph = 90; // panel height
  const left = 110;
  const top = 84;
  const gapX = 30;
  const gapY = 48;
  const bins = 130;
  const width = left + clients.length * (pw + gapX) + 10;
  const height = top + strategies.length * (ph + gapY) + 40;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${left}" y="22" font-size="15" font-weight="bold">When do the writes hit the server? Write-arrival histograms, OCC thundering herd</text>`);
  out.push(
    `<text x="${left}" y="40" fill="#444">Writes per ms per run, all runs of each cell; columns share the time axis. Spikes = clients still in lock-step (little or no jitter). Model has no server overload.</text>`,
  );
  clients.forEach((n, j) => {
    const colCells = cells.filter((c) => c.clients === n);
    const p95s = colCells.map((c) => quantileMs(c.hist, 0.95)).sort((a, b) => a - b);
    const xMax = niceCeil(p95s[Math.floor((p95s.length - 1) / 2)] ?? 1);
    const x0 = left + j * (pw + gapX);
    out.push(`<text x="${x0 + pw / 2}" y="${top - 26}" text-anchor="middle" font-weight="bold">${n} clients</text>`);
    strategies.forEach((s, i) => {
      const cell = colCells.find((c) => c.strategy === s);
      const y0 = top + i * (ph + gapY);
      if (j === 0) out.push(`<text x="${left - 10}" y="${y0 + ph / 2 + 4}" text-anchor="end" font-weight="bold">${s}</text>`);
      out.push(`<rect x="${x0}" y="${y0}" width="${pw}" height="${ph}" fill="#f7f7f7" stroke="#ccc"/>`);
      if (cell === undefined) return;
      const hist = cell.hist;
      const perBin = xMax / bins;
      const counts = new Float64Array(bins);
      let beyond = 0;
      for (let t = 0; t < hist.length; t++) {
        const c = hist[t]!;
        if (c === 0) continue;
        const b = Math.floor((t + 0.5) / perBin);
        if (b < bins) counts[b]! += c;
        else beyond += c;
      }
      const total = hist.reduce((a, b) => a + b, 0);
      // Every strategy starts with the same burst (all first writes near
      // t = 20 ms); scale to the tallest bar after it so the later structure
      // is visible, and clip the burst.
      let peak = 0;
      let peakAfter = 0;
      for (let b = 0; b < bins; b++) {
        peak = Math.max(peak, counts[b]!);
        if ((b + 0.5) * perBin > FIRST_BURST_MS) peakAfter = Math.max(peakAfter, counts[b]!);
      }
      const scaleTo = peakAfter > 0 ? peakAfter : peak;
      const scale = scaleTo > 0 ? (ph - 4) / scaleTo : 0;
      const bw = pw / bins;
      const path: string[] = [];
      for (let b = 0; b < bins; b++) {
        const h = Math.min(ph, counts[b]! * scale);
        if (h <= 0) continue;
        path.push(`M${(x0 + b * bw).toFixed(2)} ${(y0 + ph).toFixed(2)}h${bw.toFixed(2)}v${(-h).toFixed(2)}h${(-bw).toFixed(2)}z`);
      }
      out.push(`<path d="${path.join('')}" fill="#2b6cb0"/>`);
      const rate = scaleTo / perBin / cell.runs;
      out.push(`<text x="${x0}" y="${y0 - 5}" fill="#333">${fmt(cell.calls)} calls, done ${fmtMs(cell.ms)}</text>`);
      if (beyond > 0) {
        out.push(`<text x="${x0 + pw - 4}" y="${y0 + 26}" text-anchor="end" fill="#b7410e">+${((100 * beyond) / total).toFixed(0)}% of writes later, to ${fmtMs(hist.length)}</text>`);
      }
      out.push(`<text x="${x0 + pw - 4}" y="${y0 + 12}" text-anchor="end" fill="#555">top = ${fmt(rate)} writes/ms/run</text>`);
      // x axis ticks
      for (const f of [0, 0.5, 1]) {
        const x = x0 + f * pw;
        out.push(`<line x1="${x}" y1="${y0 + ph}" x2="${x}" y2="${y0 + ph + 4}" stroke="#888"/>`);
        out.push(`<text x="${x}" y="${y0 + ph + 15}" text-anchor="${f === 0 ? 'start' : f === 1 ? 'end' : 'middle'}" fill="#555">${fmtMs(f * xMax)}</text>`);
      }
    });
  });
  out.push(`<text x="${left}" y="${height - 26}" fill="#444">x: virtual time since all clients started. Above each panel: mean write calls and completion time per run.</text>`);
  out.push(`<text x="${left}" y="${height - 12}" fill="#444">The first burst (t &lt; 35 ms, the same for every strategy) is clipped so the later structure shows.</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** The time (ms, bin upper edge) below which fraction q of the writes arrived. */
/** All clients' first writes land before this; the bars there are clipped. */
const FIRST_BURST_MS = 35;

function quantileMs(hist: Uint32Array, q: number): number {
  let total = 0;
  for (let i = 0; i < hist.length; i++) total += hist[i]!;
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i]!;
    if (acc >= q * total) return i + 1;
  }
  return Math.max(1, hist.length);
}

function niceCeil(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

function fmt(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${+ms.toFixed(0)} ms`;
}
