import cliProgress from 'cli-progress';

/**
 * Progress of `check --service/--app/--client` for a person: a bar on a
 * terminal, otherwise a line every few seconds on stderr — and then the
 * shrinking, which on a service whose runs are slow (a sweeper interval
 * firing every 250 ms through an hour of virtual time) can take minutes
 * after the failure is found. Before this, both were silent.
 */
const LINE_MS = Number(process.env.RETRYSIM_PROGRESS_LINE_MS ?? 5000); // tests shorten it

export interface ServiceProgress {
  /** `n` runs (or schedules) judged so far. */
  run(n: number): void;
  /** The campaign failed at run `at` (schedule `at`, exhaustive: the table's first failure): `n` runs of the minimiser so far. */
  shrink(n: number, at: number): void;
  stop(): void;
}

/** @param what `service payments` / `client jitter`; @param unit runs or schedules; @param total undefined with a time budget alone. */
export function serviceProgress(o: { what: string; unit: string; total: number | undefined; json: boolean }): ServiceProgress {
  const tty = process.stderr.isTTY === true && !o.json;
  let phase: 'run' | 'shrink' = 'run';
  let n = 0;
  let shrunk = 0;
  let failedAt = 0;
  const t0 = performance.now(); // real-time: allowed (a person's progress line, not the simulation)
  const text = (): string => {
    if (phase === 'shrink') return `${o.what}: failed at ${o.unit === 'schedules' ? 'schedule' : 'run'} ${failedAt}; shrinking the counterexample: ${shrunk} run${shrunk === 1 ? "" : "s"} tried`;
    if (o.total === undefined) return `${n} ${o.unit} ${o.what}`;
    const w = Math.round((20 * Math.min(n, o.total)) / Math.max(o.total, 1));
    return `${'█'.repeat(w)}${'░'.repeat(20 - w)} ${n}/${o.total} ${o.unit} ${o.what}`;
  };
  const bar = tty ? new cliProgress.SingleBar({ format: ' {text}', hideCursor: true, clearOnComplete: true, stream: process.stderr }) : undefined;
  bar?.start(0, 0, { text: text() });
  const line = () => {
    const s = (performance.now() - t0) / 1000; // real-time: allowed (progress line)
    process.stderr.write(phase === 'run'
      ? `check: ${o.what}: ${n}${o.total === undefined ? '' : `/${o.total}`} ${o.unit}, ${Math.round(n / Math.max(s, 1e-3))}/s\n`
      : `check: ${text()}\n`);
  };
  // Pulled by each run, not pushed by a timer: a campaign's runs settle in
  // microtasks one after another, so a setInterval would not fire until the end.
  let last = t0;
  const maybeLine = () => {
    if (tty) return;
    const now = performance.now(); // real-time: allowed (progress line)
    if (now - last < LINE_MS) return;
    last = now;
    line();
  };
  return {
    run(k) {
      n = k;
      bar?.update(0, { text: text() });
      maybeLine();
    },
    shrink(k, at) {
      phase = 'shrink';
      failedAt = at;
      shrunk = k;
      bar?.update(0, { text: text() });
      maybeLine();
    },
    stop() {
      bar?.stop();
    },
  };
}
