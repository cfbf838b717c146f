import { flags } from './args.js';
import { headerValueProblem } from '../net/http-limits.js';
import { BUILTIN_SERVICES as VARIANTS, type BuiltinName as Variant } from '../tracker/builtin.js';
import { ServeError, startServer, type ServeOptions } from '../real/server.js';
import { loadService } from '../service/load.js';
import { isHostedApp } from '../app/define.js';
import { ServiceError } from '../service/errors.js';
import { startWatchdog } from '../sim/watchdog.js';

const HELP = `retrysim serve (--variant V | --service PATH | --app PATH) --db FILE [options]

Runs the bug tracker (SPEC §3), your own service or your app, over HTTP on loopback
with a SQLite file in WAL mode. Prints "listening on http://127.0.0.1:PORT"
once bound; SIGTERM or SIGINT drains in-flight requests and exits 0.

  --variant V            ${VARIANTS.join(' | ')}
  --service PATH         your service module (TypeScript or JavaScript, default
                         export a ServiceDefinition; no build step). Its setup
                         runs on a file without its tables; an existing file
                         keeps its data. sim.now() is the wall clock, sim.sleep
                         a real timer, sim.step an immediate yield; memory()
                         is rebuilt when the process starts. A broken module
                         exits 2 with one line naming the problem; a handler
                         that throws answers 500 and is named on stderr.
  --app PATH             an unmodified Node app (a module whose default export is
                         an app descriptor): --service for it; its key-value
                         store is a table in the --db file
  --db FILE              SQLite database file (created if missing)
  --port N               port to listen on; 0 = any free port (default 0)
  --lease-ms N           tracker: lease of an in-progress key (default 5000)
  --client-timeout-ms N  tracker: the clients' timeout, for the lease check (default 2000)
  --slow-ms N            processing time of every request, spent after the slow
                         step (tracker: process; a service: its slowStep) (fault; default 0)
  --allow-unsafe-lease   tracker: skip the lease check (SPEC §4 scenario 6)
  --completed-ttl-ms N   tracker: memory_singleflight replay window
  --clock-offset-ms N    this instance's clock skew
  --name NAME            x-instance header value, printable ASCII (default tracker,
                         or the service's name)
  --listen-not-before T  bind no earlier than epoch ms T (used by the conformance
                         runner to restart exactly restartAfterMs after a kill)
  --standby              load everything, print "standby ready", then wait for a
                         line "go" on stdin before opening the database and binding
                         (a warm spare, so a restart after kill -9 is not delayed
                         by node's startup time)
  --admin                enable POST/GET /_admin/faults and GET /_admin/counts
                         (loopback peers only; test fault switches)

Tracker routes: POST /reports (content-type application/json, else 415; body limit
65536 bytes, larger → 413; Idempotency-Key 1–255 characters of UTF-8, sent
once — a repeated Idempotency-Key, X-Tenant or Content-Type is 400),
GET /reports/:id, GET /reports?run_id=R.

Exit: 0 after SIGTERM or SIGINT, 1 the port cannot be bound or the database
file opened, 2 bad flags or a broken module.`;

/**
 * Longest duration a flag may name: one day. Node's timers hold at most
 * 2^31 − 1 ms (~24.8 days) and silently fire after 1 ms beyond that, so
 * `--slow-ms 1e10` would quietly mean 1 ms.
 */
const MS_MAX = 86_400_000;

function num(name: string, v: string | undefined, min = 0, max = MS_MAX): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}, got '${v}'`);
  return n;
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = flags('serve', argv, {
    variant: { type: 'string' },
    service: { type: 'string' },
    db: { type: 'string' },
    port: { type: 'string' },
    'lease-ms': { type: 'string' },
    'client-timeout-ms': { type: 'string' },
    'slow-ms': { type: 'string' },
    'allow-unsafe-lease': { type: 'boolean' },
    'completed-ttl-ms': { type: 'string' },
    'clock-offset-ms': { type: 'string' },
    name: { type: 'string' },
    admin: { type: 'boolean' },
    'listen-not-before': { type: 'string' },
    standby: { type: 'boolean' },
  }, HELP);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values;
  let opts: ServeOptions;
  try {
    if (values.service !== undefined) {
      if (values.variant !== undefined) throw new Error('give --variant (the built-in tracker) or --service (your own), not both');
      // The tracker's lease knobs have no meaning for a user's service: its lease, if any, is its own code.
      for (const f of ['lease-ms', 'client-timeout-ms', 'allow-unsafe-lease', 'completed-ttl-ms'] as const) {
        if (values[f] !== undefined) throw new Error(`--${f} configures the built-in tracker; a --service keeps its own settings in its module`);
      }
    } else if (values.variant === undefined || !(VARIANTS as readonly string[]).includes(values.variant)) {
      throw new Error(`--variant must be one of ${VARIANTS.join(', ')}, got ${values.variant === undefined ? 'nothing' : `'${values.variant}'`}`);
    }
    if (values.db === undefined || values.db === '') throw new Error('--db FILE is required');
    const port = num('port', values.port);
    if (port !== undefined && (!Number.isInteger(port) || port > 65535)) throw new Error(`--port must be an integer 0–65535, got '${values.port}'`);
    const offset = values['clock-offset-ms'];
    if (offset !== undefined) num('clock-offset-ms', offset, -MS_MAX, MS_MAX);
    const nameProblem = values.name === undefined ? null : headerValueProblem(values.name);
    if (nameProblem !== null) throw new Error(`--name ${nameProblem}`);
    opts = {
      ...(values.service === undefined ? { variant: values.variant as Variant } : {}),
      dbPath: values.db,
      port: port ?? 0,
      leaseMs: num('lease-ms', values['lease-ms']),
      clientTimeoutMs: num('client-timeout-ms', values['client-timeout-ms']),
      slowMs: num('slow-ms', values['slow-ms']),
      allowUnsafeLease: values['allow-unsafe-lease'] ?? false,
      completedTtlMs: num('completed-ttl-ms', values['completed-ttl-ms']),
      clockOffsetMs: offset === undefined ? 0 : Number(offset),
      name: values.name,
      admin: values.admin ?? false,
    };
  } catch (e) {
    // One line naming the flag, as every command says it (retrysim serve --help has the rest).
    console.error(`retrysim serve: ${(e as Error).message}`);
    return 2;
  }
  if (values.service !== undefined) {
    // Loaded before the standby line, so a warm spare has nothing left to load.
    try {
      opts.service = await loadService(values.service, { clock: 'real' }); // served for real: its top level reads the machine's clock
    } catch (e) {
      if (e instanceof ServiceError) {
        console.error(`retrysim serve: ${e.message}`);
        return 2;
      }
      throw e;
    }
  }
  if (values.standby) {
    console.log(`retrysim serve: standby ready (pid ${process.pid})`);
    const go = await waitForGo();
    if (!go) {
      console.error('retrysim serve: standby: stdin closed before "go"; exiting');
      return 0;
    }
  }
  const notBefore = values['listen-not-before'] === undefined ? 0 : Number(values['listen-not-before']);
  if (!Number.isFinite(notBefore)) {
    console.error(`retrysim serve: --listen-not-before must be epoch ms, got '${values['listen-not-before']}'`);
    return 2;
  }
  const waitMs = notBefore - Date.now();
  if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
  let server;
  try {
    server = await startServer(opts);
  } catch (e) {
    if (e instanceof ServeError) {
      console.error(`retrysim serve: ${e.message}`);
      return 1;
    }
    if (e instanceof ServiceError) {
      console.error(`retrysim serve: ${e.message}`);
      return 2;
    }
    throw e;
  }
  const what = opts.variant !== undefined ? `variant ${opts.variant}, lease ${server.leaseMs} ms` : `${isHostedApp(server.def) ? 'app' : 'service'} ${server.def.name} (${values.service})`;
  // The handlers go in before the listening line: a script that stops the server as soon as it reads the line
  // (a CI job, a test's teardown) sent SIGTERM while the watchdog thread was starting, and the process died of
  // Node's default action (exit 143) instead of draining and exiting 0.
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  // A handler that never returns the thread (a busy loop) would leave this
  // process deaf to SIGTERM forever: the watchdog thread ends it after
  // RETRYSIM_WATCHDOG_MS (default 10 s) without a heartbeat, in one line.
  const limitMs = Number(process.env.RETRYSIM_WATCHDOG_MS ?? 10_000);
  if (Number.isFinite(limitMs) && limitMs > 0) {
    const dog = startWatchdog(limitMs, 'retrysim serve: ');
    dog.enter(`the server (${what}; a request handler that never returns?)`);
    setInterval(() => dog.beat(), Math.min(200, limitMs / 4)).unref();
  }
  console.log(`retrysim serve: listening on http://127.0.0.1:${server.port} (${what}, db ${opts.dbPath}, pid ${process.pid})`);
  const signal = await stopped;
  console.error(`retrysim serve: ${signal}: stopping; draining ${server.inflight()} in-flight request(s)`);
  await server.close();
  console.error('retrysim serve: stopped');
  // Stopped means the process ends: a timer the service started and never
  // cleared (a sweeper's setInterval, as a server that runs until it is
  // stopped has) would keep it alive and tick against the closed database,
  // ending it seconds later with a stack trace and exit 1.
  process.exit(0);
}

/** Resolves true on a line "go" on stdin, false when stdin ends first. */
function waitForGo(): Promise<boolean> {
  return new Promise((resolve) => {
    let buf = '';
    const onData = (c: Buffer) => {
      buf += c.toString('utf8');
      if (/^go$/m.test(buf)) {
        process.stdin.off('data', onData);
        process.stdin.destroy();
        resolve(true);
      }
    };
    process.stdin.on('data', onData);
    process.stdin.once('end', () => resolve(false));
  });
}
