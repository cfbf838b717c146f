import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServeOptions } from './server.js';
import { httpJson } from './http-transport.js';

/**
 * A `retrysim serve` child process, controlled from a test or a runner:
 * start (port 0 the first time), a real `kill -9`, restart on the same port
 * and the same database file, and a graceful SIGTERM stop.
 */

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'retrysim.js');
const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

/** Options of a server child: those of {@link ServeOptions} (which `retrysim serve` takes as flags), plus how to start it. */
export interface ChildServeOptions extends Omit<ServeOptions, 'port' | 'host' | 'admin' | 'service'> {
  /** A user's service module (`--service PATH`), instead of `variant`. */
  module?: string;
  /** Enable the admin fault routes. Default true (that is what a child is for). */
  admin?: boolean;
  /** Extra arguments, appended as they are. */
  extraArgs?: string[];
  /** Startup limit. Default 20 s. */
  startTimeoutMs?: number;
}

/** How a child ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Arguments of `retrysim serve` for these options. */
export function serveArgs(o: ChildServeOptions, port: number): string[] {
  if ((o.variant === undefined) === (o.module === undefined)) throw new Error('serveArgs: give exactly one of variant or module');
  const a = ['serve', ...(o.module !== undefined ? ['--service', o.module] : ['--variant', o.variant!]), '--db', o.dbPath, '--port', String(port)];
  if (o.leaseMs !== undefined) a.push('--lease-ms', String(o.leaseMs));
  if (o.clientTimeoutMs !== undefined) a.push('--client-timeout-ms', String(o.clientTimeoutMs));
  if (o.slowMs !== undefined) a.push('--slow-ms', String(o.slowMs));
  if (o.allowUnsafeLease) a.push('--allow-unsafe-lease');
  if (o.completedTtlMs !== undefined) a.push('--completed-ttl-ms', String(o.completedTtlMs));
  if (o.clockOffsetMs !== undefined) a.push('--clock-offset-ms', String(o.clockOffsetMs));
  if (o.name !== undefined) a.push('--name', o.name);
  if (o.admin ?? true) a.push('--admin');
  return [...a, ...(o.extraArgs ?? [])];
}

/** Runs `node bin/retrysim.js <args>` to completion and collects its output (for CLI tests). */
export function runCli(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c) => (stdout += c));
    p.stderr.on('data', (c) => (stderr += c));
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`retrysim ${args.join(' ')}: no exit within ${timeoutMs} ms`));
    }, timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A spawned `retrysim serve` process and its output. */
interface Launched {
  proc: ChildProcess;
  exit: Promise<ChildExit>;
  /** Resolves with the first match of `re` in stdout; rejects on exit or after `limitMs`. */
  waitFor(re: RegExp, limitMs: number): Promise<RegExpExecArray>;
}

/** One server child; restartable on the same port and database, optionally from a warm standby. */
export class ServerProcess {
  private cur: Launched | undefined;
  private spare: Promise<Launched> | undefined;
  private portNo = 0;
  /** Output of all generations, for failure messages. */
  output = '';
  /** How many times this server was SIGKILLed (by us or by its own killAtStep fault). */
  kills = 0;
  starts = 0;

  constructor(readonly opts: ChildServeOptions) {}

  /** The bound port (0 before the first start). */
  get port(): number {
    return this.portNo;
  }

  /** True while the child runs. */
  get alive(): boolean {
    const p = this.cur?.proc;
    return p !== undefined && p.exitCode === null && p.signalCode === null;
  }

  /**
   * Why the child is no longer running, in one line, when it died on its own
   * (not stopped by us): its exit and the last lines it wrote (an unhandled
   * rejection's message). Undefined while it runs. For a lab whose server
   * died mid-run: a request failing on the closed port says nothing of why.
   */
  async death(): Promise<string | undefined> {
    if (this.cur === undefined || this.alive) return undefined;
    const e = await this.exited();
    // Node's report of an uncaught error: the source line, a caret, `Error: message`, the stack. The message line says it.
    const lines = this.output.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/^at /.test(l) && !/^Node\.js v/.test(l));
    const error = lines.filter((l) => /^[\w.]*(Error|Exception)\b[^:]*:/.test(l)).at(-1);
    const tail = (error ?? lines.slice(-2).join(' | ')).slice(0, 400);
    return `its server process (retrysim serve) exited (${e.signal !== null ? `signal ${e.signal}` : `code ${e.code}`})${tail === '' ? '' : `: ${tail}`}`;
  }

  /**
   * Resolves with the first match of `re` in the output of all generations
   * (stdout and stderr), waiting up to `limitMs`. For a line the server
   * writes while answering: its stderr pipe and the client's socket are two
   * channels, so the answer can arrive before the line does.
   */
  async outputMatching(re: RegExp, limitMs = 5_000): Promise<string> {
    const until = Date.now() + limitMs;
    while (!re.test(this.output)) {
      if (Date.now() > until) return this.output;
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.output;
  }

  /** Resolves when the current child exits. */
  exited(): Promise<ChildExit> {
    return this.cur?.exit ?? Promise.resolve({ code: null, signal: null });
  }

  private launch(args: string[]): Launched {
    const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const waiters: Array<() => void> = [];
    proc.stdout!.on('data', (c: Buffer) => {
      out += c;
      this.output += c;
      for (const w of waiters.slice()) w();
    });
    proc.stderr!.on('data', (c: Buffer) => (this.output += c));
    proc.stdin!.on('error', () => undefined); // the child may die before reading it
    // 'close', not 'exit': 'exit' can come before the last of its stdout and stderr is read, and tests read both after it.
    const exit = new Promise<ChildExit>((resolve) => proc.on('close', (code, signal) => {
      if (signal === 'SIGKILL') this.kills++;
      resolve({ code, signal });
    }));
    const waitFor = (re: RegExp, limitMs: number) => new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (!m) return;
        clearTimeout(timer);
        waiters.splice(waiters.indexOf(check), 1);
        resolve(m);
      };
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`retrysim serve: no '${re.source}' within ${limitMs} ms:\n${this.output}`));
      }, limitMs);
      waiters.push(check);
      check();
      void exit.then((e) => {
        clearTimeout(timer);
        if (!re.exec(out)) reject(new Error(`retrysim serve exited during startup (code ${e.code}, signal ${e.signal}):\n${this.output}`));
      });
    });
    return { proc, exit, waitFor };
  }

  /**
   * Spawns a warm spare: a process that has loaded everything and waits for
   * "go" to open the database and bind (see `retrysim serve --standby`).
   * The next {@link start} uses it, so a restart costs milliseconds, not
   * node's startup time. Call after the first start (the port must be known).
   */
  async prepareStandby(): Promise<void> {
    if (this.spare) return;
    const l = this.launch([...serveArgs(this.opts, this.portNo), '--standby']);
    this.spare = l.waitFor(/standby ready/, this.opts.startTimeoutMs ?? 20_000).then(() => l);
    this.spare.catch(() => undefined);
    await this.spare;
  }

  /**
   * Starts the server (the same port after the first start) and waits until
   * it listens. With `notBeforeEpochMs` it binds no earlier than then.
   */
  async start(notBeforeEpochMs?: number): Promise<number> {
    if (this.alive) throw new Error('ServerProcess.start: already running');
    const limit = this.opts.startTimeoutMs ?? 20_000;
    let l: Launched;
    if (this.spare) {
      l = await this.spare;
      this.spare = undefined;
      const waitMs = (notBeforeEpochMs ?? 0) - Date.now();
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
      l.proc.stdin!.end('go\n');
    } else {
      const args = serveArgs(this.opts, this.portNo);
      if (notBeforeEpochMs !== undefined) args.push('--listen-not-before', String(Math.round(notBeforeEpochMs)));
      l = this.launch(args);
      l.proc.stdin!.end();
    }
    this.cur = l;
    this.starts++;
    const m = await l.waitFor(LISTENING, limit);
    this.portNo = Number(m[1]);
    return this.portNo;
  }

  /** `kill -9` and wait for the exit. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.cur!.proc.kill('SIGKILL');
    await this.exited();
  }

  /** SIGTERM (graceful) and wait for the exit; SIGKILL after `graceMs`. Also ends a standby. */
  async stop(graceMs = 10_000): Promise<ChildExit> {
    if (this.spare) {
      const spare = this.spare;
      this.spare = undefined;
      // Closing its stdin makes an unused spare exit by itself (no kill to count).
      await spare.then(async (l) => {
        l.proc.stdin!.end();
        const t = setTimeout(() => l.proc.kill('SIGTERM'), graceMs);
        await l.exit;
        clearTimeout(t);
      }, () => undefined);
    }
    if (!this.alive) return this.exited();
    const p = this.cur!.proc;
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), graceMs);
    const e = await this.exited();
    clearTimeout(t);
    return e;
  }

  /** Sets fault switches through the admin route. */
  async setFaults(f: Record<string, unknown>): Promise<void> {
    const r = await httpJson(this.portNo, 'POST', '/_admin/faults', f);
    if (r.status !== 200) throw new Error(`setting faults ${JSON.stringify(f)} failed: ${r.status} ${JSON.stringify(r.json)}`);
  }
}
