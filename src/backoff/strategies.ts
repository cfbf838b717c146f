import type { Prng } from '../random/prng.js';

/**
 * The six backoff strategies of SPEC §1, as used by the herd model (and
 * matching the AWS Architecture Blog simulator, backoff_simulator.py):
 *
 * | name           | delay before retry n                         |
 * |----------------|----------------------------------------------|
 * | `none`         | 0                                            |
 * | `expo`         | v_n = min(cap, base · 2^n)                   |
 * | `codex`        | v_n · U[0.9, 1.1)  (jitter after the cap)    |
 * | `equal`        | v_n/2 + U[0, v_n/2)                          |
 * | `full`         | U[0, v_n)                                    |
 * | `decorrelated` | prev = min(cap, U[base, 3·prev)), prev₀ = base |
 *
 * `n` is the number of failed attempts so far (the herd's first backoff uses
 * n = 1, as the reference increments its attempt counter before backing off).
 */
export const STRATEGY_NAMES = ['none', 'expo', 'codex', 'equal', 'full', 'decorrelated'] as const;

/** One of {@link STRATEGY_NAMES}. */
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** Numeric codes of the strategies, for hot loops that switch instead of calling through objects. */
export const StrategyCode = { None: 0, Expo: 1, Codex: 2, Equal: 3, Full: 4, Decorrelated: 5 } as const;
/** A value of {@link StrategyCode}. */
export type StrategyCode = (typeof StrategyCode)[keyof typeof StrategyCode];

/** Maps a strategy name to its code; throws on an unknown name. */
export function strategyCode(name: string): StrategyCode {
  const i = (STRATEGY_NAMES as readonly string[]).indexOf(name);
  if (i < 0) throw new RangeError(`unknown backoff strategy '${name}' (known: ${STRATEGY_NAMES.join(', ')})`);
  return i as StrategyCode;
}

/** True when `name` is one of {@link STRATEGY_NAMES}. */
export function isStrategyName(name: string): name is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(name);
}

/** POW2[i] = 2^i exactly (doubling is exact up to 2^1023). */
const POW2 = new Float64Array(1024);
POW2[0] = 1;
for (let i = 1; i < 1024; i++) POW2[i] = POW2[i - 1]! * 2;

/**
 * v_n = min(cap, base · 2^n), safe for any n ≥ 0: the exponent is clamped at
 * 1023 so 2^n stays finite, and base = 0 gives 0 rather than 0 · ∞ = NaN.
 */
export function expoMs(n: number, baseMs: number, capMs: number): number {
  if (baseMs === 0) return 0;
  const e = n < 0 ? 0 : n > 1023 ? 1023 : n;
  // Integer exponents (every caller's) read the table: the same bits as
  // 2 ** e, without V8's out-of-line pow (5-8 % of the herd's time).
  const v = baseMs * ((e | 0) === e ? POW2[e]! : 2 ** e);
  return v < capMs ? v : capMs;
}

/**
 * The delay before retry `n` for strategy `code` — the single implementation
 * used by both the herd's hot loop and the {@link Backoff} objects.
 * `prevMs` is the decorrelated strategy's state (ignored by the others); the
 * decorrelated result is the new state, which the caller stores.
 * Uniform draws use 53-bit `rng.next()`, like Python's `random.uniform`.
 */
export function strategyDelayMs(code: StrategyCode, n: number, baseMs: number, capMs: number, rng: Prng, prevMs: number): number {
  // Literal cases (the StrategyCode values): V8 compiles them to a jump
  // table, where `case StrategyCode.X` would be a property load per case
  // whose first use deoptimises the hot loop once per strategy.
  switch (code) {
    case 0: // None
      return 0;
    case 1: // Expo
      return expoMs(n, baseMs, capMs);
    case 2: // Codex
      return expoMs(n, baseMs, capMs) * (0.9 + 0.2 * rng.next());
    case 3: {
      // Equal
      const v = expoMs(n, baseMs, capMs);
      return v / 2 + (v / 2) * rng.next();
    }
    case 4: // Full
      return expoMs(n, baseMs, capMs) * rng.next();
    case 5: {
      // Decorrelated
      // random.uniform(base, prev * 3); then min with cap.
      const s = baseMs + (prevMs * 3 - baseMs) * rng.next();
      return s < capMs ? s : capMs;
    }
  }
  throw new RangeError(`unknown strategy code ${code as number}`);
}

/** Options of {@link createBackoff}. */
export interface BackoffOptions {
  /** base, ms. Herd default 5. */
  baseMs: number;
  /** cap, ms. Herd default 2000. */
  capMs: number;
}

/**
 * One client's backoff: a strategy plus its state (only `decorrelated` has
 * any: the previous sleep). Create one per client.
 *
 * @example
 * const b = createBackoff('full', { baseMs: 5, capMs: 2000 });
 * b.delayMs(1, rng); // U[0, 10)
 */
export interface Backoff {
  readonly name: StrategyName;
  readonly baseMs: number;
  readonly capMs: number;
  /** Delay before retry `n` (n = failed attempts so far, ≥ 1). Updates the state of `decorrelated`. */
  delayMs(n: number, rng: Prng): number;
  /** Forgets the state (decorrelated's previous sleep goes back to base). */
  reset(): void;
}

class StrategyBackoff implements Backoff {
  private readonly code: StrategyCode;
  private prevMs: number;

  constructor(
    readonly name: StrategyName,
    readonly baseMs: number,
    readonly capMs: number,
  ) {
    if (!(baseMs >= 0) || !(capMs >= 0)) throw new RangeError(`backoff needs baseMs >= 0 and capMs >= 0, got ${baseMs}, ${capMs}`);
    this.code = strategyCode(name);
    this.prevMs = baseMs;
  }

  delayMs(n: number, rng: Prng): number {
    const d = strategyDelayMs(this.code, n, this.baseMs, this.capMs, rng, this.prevMs);
    if (this.code === StrategyCode.Decorrelated) this.prevMs = d;
    return d;
  }

  reset(): void {
    this.prevMs = this.baseMs;
  }
}

/** A fresh {@link Backoff} (with its own state) for one client. Defaults: the herd's base 5 ms, cap 2000 ms. */
export function createBackoff(name: StrategyName | string, opts: BackoffOptions = { baseMs: 5, capMs: 2000 }): Backoff {
  if (!isStrategyName(name)) strategyCode(name); // throws with the list of known names
  return new StrategyBackoff(name as StrategyName, opts.baseMs, opts.capMs);
}
