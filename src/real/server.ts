import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { errorResponse, jsonResponse, type TrackerResponse } from '../tracker/messages.js';
import { realEnv } from '../tracker/real-env.js';
import type { StepEnv } from '../tracker/env.js';
import { headerValueProblem, MAX_BODY_BYTES } from '../net/http-limits.js';
import { builtinDeploymentProblem, builtinService, DEFAULT_CLIENT_TIMEOUT_MS, DEFAULT_LEASE_MS, type BuiltinName as Variant } from '../tracker/builtin.js';
import type { ServiceDefinition } from '../service/definition.js';
import { ServiceDatabase } from '../service/db.js';
import { ServiceHost } from '../service/host.js';
import { ServiceError } from '../service/errors.js';
import { tablesOf } from '../service/validate.js';

/**
 * A service over node:http, on loopback, with a SQLite file: the built-in
 * tracker (a variant) or a user's {@link ServiceDefinition}. Both run
 * through the same {@link ServiceHost} the simulation uses — the tracker as
 * its own definition (tracker/service.ts) — with the real-mode env: wall-clock
 * `sim.now()`, real timers for `sim.sleep`, and `sim.step` an immediate
 * yield (interleaving is up to the event loop). In-process memory lives as
 * long as the process; the database file outlives it. This file only turns
 * HTTP into requests and back, enforces the body limit while reading (so a
 * huge body is never buffered), and honours `dropConnection` by destroying
 * the socket before a byte is written.
 *
 * Test-only fault switches live behind `/_admin/*`, enabled with `admin: true`
 * and answered only to loopback peers.
 */

/** Options of {@link startServer}. */
export interface ServeOptions {
  /** A built-in tracker variant... */
  variant?: Variant;
  /** ...or a user's service (exactly one of the two). */
  service?: ServiceDefinition;
  /** SQLite file (WAL mode). */
  dbPath: string;
  /** 0 picks a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Tracker only: lease of an in-progress key (default 5000). A user's lease is their own code. */
  leaseMs?: number;
  /** Tracker only: the clients' timeout, for the lease check (default 2000). */
  clientTimeoutMs?: number;
  slowMs?: number;
  /** Tracker only: skip the lease check. */
  allowUnsafeLease?: boolean;
  /** Tracker only (memory_singleflight). */
  completedTtlMs?: number;
  clockOffsetMs?: number;
  name?: string;
  /** Enable the `/_admin/*` routes (loopback peers only). Default false. */
  admin?: boolean;
}

/** HTTP-level faults, besides the service host's own (`host.faults`). */
export interface HttpFaults {
  /** Drop the next N responses of any kind after the handler ran (the request's work stays done). */
  dropResponses: number;
  /** SIGKILL this process when a request first reaches this step label (then the knob clears). */
  killAtStep: string | undefined;
  /** With killAtStep: reaches of the step left before the kill (1: the next one; as `kill.nth` of a scenario). */
  killAtStepReach: number;
  /** SIGKILL this process when the n-th handler from now has returned, before its answer leaves (0: off; counts down). */
  killAtAnswer: number;
}

/** A running server. */
export interface RunningServer {
  readonly port: number;
  /** The service hosted (the tracker's definition for a variant). */
  readonly def: ServiceDefinition;
  readonly host: ServiceHost;
  readonly db: ServiceDatabase;
  /** The tracker's lease, ms (undefined for a user's service). */
  readonly leaseMs: number | undefined;
  readonly httpFaults: HttpFaults;
  /** Requests being handled right now. */
  inflight(): number;
  /** Stops accepting, waits for in-flight requests (at most `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>;
}

/** A startup problem with a message fit for the user (busy port, unwritable database). */
export class ServeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServeError';
  }
}

/** Body of `POST /_admin/faults`: any subset of the knobs. */
const adminFaultsSchema = z.strictObject({
  loseResponseAfterCommit: z.number().int().nonnegative().optional(),
  crashMidRequest: z.number().int().nonnegative().optional(),
  slowMs: z.number().finite().nonnegative().optional(),
  clockOffsetMs: z.number().finite().optional(),
  pause: z.strictObject({ atStep: z.string().min(1), ms: z.number().finite().nonnegative(), count: z.number().int().nonnegative(), thenCrash: z.boolean().optional(), nth: z.number().int().min(1).optional() }).nullable().optional(),
  crashAt: z.string().min(1).nullable().optional(),
  crashAtNth: z.number().int().min(1).nullable().optional(),
  slowAtStep: z.string().min(1).nullable().optional(),
  slowAtStepNth: z.number().int().min(1).nullable().optional(),
  dropResponses: z.number().int().nonnegative().optional(),
  killAtStep: z.string().min(1).nullable().optional(),
  killAtStepNth: z.number().int().min(1).optional(),
  killAtAnswer: z.number().int().nonnegative().optional(),
});

function isLoopback(addr: string | undefined): boolean {
  return addr === '127.0.0.1' || addr === '::1' || addr === '::ffff:127.0.0.1';
}

/**
 * Opens the database file for writing, or a {@link ServeError} naming the
 * file: a read-only file fails here, at startup, not on the first POST.
 */
function openFile(path: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(path);
    // WAL lets readers run beside the single writer when several processes share the file.
    db.pragma('journal_mode = WAL');
    db.exec('BEGIN IMMEDIATE; COMMIT;');
    return db;
  } catch (e) {
    db?.close();
    const err = e as { code?: string; message: string };
    throw new ServeError(`cannot open database file '${path}' for writing: ${err.code ? err.code + ': ' : ''}${err.message}`);
  }
}

/** What is hosted: the definition, and for the tracker its lease and the rule a re-armed slowMs must pass. */
interface Deployment {
  def: ServiceDefinition;
  leaseMs: number | undefined;
  /** Why processing of `slowMs` would break the deployment's lease rule, or null. */
  slowMsProblem(slowMs: number): string | null;
}

/**
 * The deployment of these options. The tracker's lease rule (SPEC §3) is
 * checked here, as `TrackerInstance` checks it: a lease that does not
 * outlast the client's timeout plus processing is refused at startup.
 */
function deployment(opts: ServeOptions, name: string): Deployment {
  if ((opts.variant === undefined) === (opts.service === undefined)) throw new ServeError('serve needs exactly one of a variant (the built-in tracker) or a service');
  if (opts.service !== undefined) return { def: opts.service, leaseMs: undefined, slowMsProblem: () => null };
  const variant = opts.variant!;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const clientTimeoutMs = opts.clientTimeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS;
  const slowMsProblem = (slowMs: number): string | null => {
    if (opts.allowUnsafeLease) return null;
    const p = builtinDeploymentProblem(variant, { leaseMs, clientTimeoutMs, processingMs: slowMs });
    return p === null ? null : `${name} (${variant}): ${p}`;
  };
  const problem = slowMsProblem(opts.slowMs ?? 0);
  if (problem !== null) throw new ServeError(problem);
  return { def: builtinService(variant, { leaseMs, ...(opts.completedTtlMs !== undefined ? { completedTtlMs: opts.completedTtlMs } : {}) }), leaseMs, slowMsProblem };
}

/** Past this many bytes the server stops draining an oversized body and closes the connection. */
const DRAIN_BYTES_MAX = 64 * 1024 * 1024;

/**
 * Reads a body up to the limit; `null` when it is larger. An oversized body
 * is still drained (and discarded) before the 413 goes out: answering while
 * the client is still writing makes it see a reset instead of the 413.
 */
function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number.isFinite(declared) && declared > limit;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > DRAIN_BYTES_MAX) req.socket.destroy();
      if (over) return;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Headers that carry one value each: a second copy would be merged by node into `"a, b"`, a key nobody sent. */
const SINGLE_HEADERS = ['idempotency-key', 'x-tenant', 'content-type'] as const;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request's headers as the tracker reads them, or the 400 to answer
 * with. Node hands header bytes over as Latin-1; they are decoded as UTF-8
 * here, so a key's length is counted in characters (as documented), not in
 * bytes. A repeated single-valued header, or bytes that are not UTF-8, are
 * refused rather than guessed at.
 */
export function headersOf(req: IncomingMessage): { ok: true; headers: Record<string, string | undefined> } | { ok: false; response: TrackerResponse } {
  for (const h of SINGLE_HEADERS) {
    const n = req.headersDistinct[h]?.length ?? 0;
    if (n > 1) return { ok: false, response: errorResponse(400, `header '${h}' given ${n} times; send it once`) };
  }
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    const text = Array.isArray(v) ? v.join(', ') : v;
    try {
      out[k] = utf8.decode(Buffer.from(text, 'latin1'));
    } catch {
      return { ok: false, response: errorResponse(400, `header '${k}' is not valid UTF-8`) };
    }
  }
  return { ok: true, headers: out };
}

/**
 * Writes an answer. Headers are checked by node before a byte goes out; a
 * value it refuses (it should never happen: the instance name is checked at
 * start-up) must not become a 500 after a commit, so the connection is
 * dropped instead — "outcome unknown", which a keyed retry replays.
 */
function send(res: ServerResponse, r: TrackerResponse): void {
  const body = Buffer.from(r.body, 'utf8');
  try {
    res.writeHead(r.status, { ...r.headers, 'content-length': body.length });
  } catch (e) {
    console.error(`retrysim serve: cannot write a ${r.status} answer (${(e as Error).message}); connection dropped`);
    res.socket?.destroy();
    return;
  }
  res.end(body);
}

/**
 * Opens the database (running the service's setup on a fresh file), builds
 * the host and listens. Rejects with a {@link ServeError} for a busy port,
 * an unwritable database file or an unsafe tracker lease, and with a
 * {@link ServiceError} for a broken service (setup throws, tables differ).
 *
 * @example
 * const s = await startServer({ variant: 'key_atomic', dbPath: '/tmp/t.db' });
 * console.log(s.port);
 */
/**
 * Timers a handler armed and did not await (a 202 whose work a setTimeout
 * finishes, an eviction): counted with `background` in `/_admin/counts`, so
 * a real run reads the effects once that work is done, as the simulation
 * does (it fires a one-shot timer armed before the run ended). Uncounted, a
 * conformance column read the file before the timer wrote it and reported a
 * difference the service did not have. A Timeout is destroyed once it fired
 * or was cleared; an interval stays pending until cleared (the settle limit
 * then says the process never went idle).
 */
const inHandler = new AsyncLocalStorage<true>();
const handlerTimers = new Map<number, { hasRef?: () => boolean }>();
let timerHook: ReturnType<typeof createHook> | undefined;

/**
 * The handler-armed timers still pending that keep the process busy: one
 * `unref()`ed (an LRU cache's TTL purge, a library's sweep) says it is no
 * work to wait for, and the simulation does not wait for it either
 * (src/sim/fake-timers.ts); counted, a service whose cache armed a 30 s
 * purge per entry kept every wall-clock run of `flaky` waiting out its 10 s
 * settle limit and then said the server was still at work.
 */
function pendingHandlerTimers(): number {
  let n = 0;
  for (const t of handlerTimers.values()) if (t.hasRef?.() !== false) n++;
  return n;
}

function countHandlerTimers(): void {
  timerHook ??= createHook({
    init(id, type, _trigger, resource) {
      if (type === 'Timeout' && inHandler.getStore() === true) handlerTimers.set(id, resource as { hasRef?: () => boolean });
    },
    destroy(id) {
      handlerTimers.delete(id);
    },
  }).enable();
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const name = opts.name ?? (opts.variant !== undefined ? 'tracker' : opts.service?.name ?? 'service');
  // The name is sent as a header on every answer: a value node refuses to
  // write would turn every answer into a failure after its commit.
  const nameProblem = headerValueProblem(name);
  if (nameProblem !== null) throw new ServeError(`instance name ${JSON.stringify(name)} ${nameProblem}`);
  const dep = deployment(opts, name);
  const def = dep.def;
  const file = openFile(opts.dbPath);
  let sdb: ServiceDatabase;
  let host: ServiceHost;
  try {
    // Setup runs only on a file that has none of the service's tables yet.
    sdb = new ServiceDatabase(def, file);
    host = new ServiceHost(def, sdb, name, { slowMs: opts.slowMs ?? 0, clockOffsetMs: opts.clockOffsetMs ?? 0 });
  } catch (e) {
    if (file.open) file.close();
    throw e; // a ServiceError: the service's own problem, named
  }
  const httpFaults: HttpFaults = { dropResponses: 0, killAtStep: undefined, killAtStepReach: 1, killAtAnswer: 0 };
  const base = realEnv();
  const env: StepEnv = {
    ...base,
    step: (label) => {
      if (httpFaults.killAtStep === label && --httpFaults.killAtStepReach === 0) {
        // A real kill -9 of this very process: nothing after this line runs,
        // no catch, no finally, no response — exactly the simulated kill.
        process.kill(process.pid, 'SIGKILL');
      }
      return base.step(label);
    },
  };
  const steps = def.steps;
  const crashPoints = def.crashPoints ?? [];
  /** Why an admin fault names a label the service never reaches (it would never fire), or null. */
  const undeclared = (f: { pause?: { atStep: string } | null; killAtStep?: string | null; slowAtStep?: string | null; crashAt?: string | null }): string | null => {
    for (const [what, v, list] of [['pause.atStep', f.pause?.atStep, steps], ['killAtStep', f.killAtStep, steps], ['slowAtStep', f.slowAtStep, steps], ['crashAt', f.crashAt, crashPoints]] as const) {
      if (typeof v === 'string' && !list.includes(v)) return `${what} '${v}' is not declared by service '${def.name}' (declared: ${list.join(', ') || 'none'}); the fault would never fire`;
    }
    return null;
  };
  let inflight = 0;
  const drained: Array<() => void> = [];
  const sockets = new Set<Socket>();

  const admin = (req: IncomingMessage, body: string, path: string): TrackerResponse => {
    if (!opts.admin) return errorResponse(404, `no route for ${req.method} ${path}`);
    if (!isLoopback(req.socket.remoteAddress)) return errorResponse(403, 'admin routes answer loopback peers only');
    if (path === '/_admin/faults') {
      if (req.method === 'GET') return jsonResponse(200, { ...host.faults, ...httpFaults });
      if (req.method !== 'POST') return errorResponse(405, `method ${req.method} not allowed on ${path}`, { allow: 'GET, POST' });
      let data: unknown;
      try {
        data = JSON.parse(body);
      } catch (e) {
        return errorResponse(400, `malformed JSON body: ${(e as Error).message}`);
      }
      const p = adminFaultsSchema.safeParse(data);
      if (!p.success) return errorResponse(400, p.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
      const { dropResponses, killAtStep, killAtStepNth, killAtAnswer, pause, crashAt, crashAtNth, slowAtStep, slowAtStepNth, ...counters } = p.data;
      // The lease check ran at start-up against the slowMs given then; a
      // slower processing time armed now must pass it too (nothing is applied otherwise).
      const problem = counters.slowMs === undefined ? null : dep.slowMsProblem(counters.slowMs);
      if (problem !== null) return errorResponse(422, `slowMs ${counters.slowMs} refused: ${problem}`);
      const notDeclared = undeclared(p.data);
      if (notDeclared !== null) return errorResponse(422, notDeclared);
      Object.assign(host.faults, counters);
      if (pause !== undefined) host.faults.pause = pause === null ? undefined : { ...pause };
      if (crashAt !== undefined) host.faults.crashAt = crashAt ?? undefined;
      if (crashAtNth !== undefined) host.faults.crashAtNth = crashAtNth ?? undefined;
      if (slowAtStep !== undefined) host.faults.slowAtStep = slowAtStep ?? undefined;
      if (slowAtStepNth !== undefined) host.faults.slowAtStepNth = slowAtStepNth ?? undefined;
      if (dropResponses !== undefined) httpFaults.dropResponses = dropResponses;
      if (killAtStep !== undefined) {
        httpFaults.killAtStep = killAtStep ?? undefined;
        httpFaults.killAtStepReach = killAtStepNth ?? 1;
      }
      if (killAtAnswer !== undefined) httpFaults.killAtAnswer = killAtAnswer;
      return jsonResponse(200, { ...host.faults, ...httpFaults });
    }
    if (path === '/_admin/counts' && req.method === 'GET') {
      // Rows per declared table, and the service's own effect count when it declares one.
      const rows: Record<string, number> = {};
      for (const t of tablesOf(sdb.db)) rows[t] = sdb.db.prepare(`SELECT count(*) FROM "${t.replaceAll('"', '""')}"`).pluck().get() as number;
      // `background`: the process's own work still running (a hosted app's timers after a 202): a real run waits for it before reading.
      return jsonResponse(200, { effects: host.effectCount() ?? null, rows, inflight, background: host.backgroundLive + pendingHandlerTimers() });
    }
    return errorResponse(404, `no route for ${req.method} ${path}`);
  };

  countHandlerTimers();
  const server: Server = createServer((req, res) => {
    inflight++;
    void (async () => {
      try {
        const path = req.url ?? '/';
        let body: string | null;
        try {
          body = await readBody(req, MAX_BODY_BYTES);
        } catch {
          // The client went away mid-body: nothing was handled, nobody to answer.
          req.socket.destroy();
          return;
        }
        if (body === null) {
          res.setHeader('connection', 'close');
          send(res, errorResponse(413, `body exceeds the limit of ${MAX_BODY_BYTES} bytes`));
          return;
        }
        if (path.startsWith('/_admin/')) {
          send(res, admin(req, body, path.split('?')[0]!));
          return;
        }
        const h = headersOf(req);
        if (!h.ok) {
          send(res, h.response);
          return;
        }
        const r = await inHandler.run(true, () => host.handle({ method: req.method ?? 'GET', path, headers: h.headers, body }, env));
        // The simulated `kill.atAnswer`: the work is done, and not a byte of the answer leaves.
        if (httpFaults.killAtAnswer > 0 && --httpFaults.killAtAnswer === 0) process.kill(process.pid, 'SIGKILL');
        if (r.dropConnection || httpFaults.dropResponses > 0) {
          if (!r.dropConnection) httpFaults.dropResponses--;
          req.socket.destroy(); // not a byte of response
          return;
        }
        send(res, r);
      } catch (e) {
        // A programming error in the handler: answer 500 rather than hang the
        // client. A broken user service (a throw, an undeclared step, a
        // transaction left open) is named in one line; the process serves on,
        // as a real framework would after an uncaught exception in one request.
        // The body never carries the message: it names files (and once quoted
        // a whole compiled module); the details go to this server's stderr.
        if (!res.headersSent) send(res, e instanceof ServiceError && e.answer !== undefined ? e.answer : errorResponse(500, 'internal error'));
        else res.destroy();
        const what = e instanceof ServiceError ? e.message : `internal error: ${(e as Error).message}`;
        console.error(`retrysim serve: ${process.env.RETRYSIM_DEBUG === '1' ? (e as Error).stack : what}`);
      } finally {
        inflight--;
        if (inflight === 0) for (const f of drained.splice(0)) f();
      }
    })();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // A request Node's parser refuses (a body shorter than its content-length, a bad chunk size, a line that is
  // not HTTP) never reaches the handler; Node's default answers a bare 400 with no body, which says nothing of why.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // A client that reset the connection hears nothing any more.
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: `malformed HTTP request (${err.code ?? 'parse error'}): ${err.message}` });
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  server.keepAliveTimeout = 2000;

  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      sdb.close();
      if (e.code === 'EADDRINUSE') reject(new ServeError(`port ${opts.port} on ${opts.host ?? '127.0.0.1'} is already in use; pick another --port (or --port 0 for any free port)`));
      else if (e.code === 'EACCES') reject(new ServeError(`no permission to listen on port ${opts.port}: ${e.message}`));
      else reject(new ServeError(`cannot listen: ${e.message}`));
    });
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

  return {
    port,
    def,
    host,
    db: sdb,
    leaseMs: dep.leaseMs,
    httpFaults,
    inflight: () => inflight,
    close: async (graceMs = 5000) => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      if (inflight > 0) {
        await Promise.race([
          new Promise<void>((r) => drained.push(r)),
          new Promise<void>((r) => setTimeout(r, graceMs).unref()),
        ]);
      }
      for (const s of sockets) s.destroy();
      await closed;
      sdb.close();
    },
  };
}
