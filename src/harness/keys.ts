import { hash } from 'node:crypto';
import type { Prng } from '../random/prng.js';

/** Where the harness gets the Idempotency-Key of an attempt (SPEC §4). */
export type KeySource = 'none' | 'per_attempt' | 'tool_call' | 'business';

/** Every key source, in the order the docs list them. */
export const KEY_SOURCES: readonly KeySource[] = ['none', 'per_attempt', 'tool_call', 'business'];

/**
 * A key source in words a user's service can be told about: the ids above
 * are the built-in tracker's (a `tool_call` is its agent's tool call), kept
 * as the `--key-source` values and in scenario files, where replay and merge
 * read them back; what `check --service`/`--app`, `conformance --service`,
 * `replay` and the pages print about a user's service is this.
 */
export function keySourceWords(s: KeySource): string {
  switch (s) {
    case 'none':
      return 'no key';
    case 'per_attempt':
      return 'a new key per attempt';
    case 'tool_call':
      return 'one key per operation';
    case 'business':
      return "a key from the operation's content";
  }
}

/** Key sources that give every attempt of one tool call the same key. */
export function isStableKeySource(s: KeySource): boolean {
  return s === 'tool_call' || s === 'business';
}

/** The business content a `business` key is derived from. */
export interface BusinessContent {
  runId: string;
  module: string;
  title: string;
}

/**
 * Normalises a title the way a dedup key should: case, surrounding and
 * repeated whitespace and trailing punctuation do not make a new bug. A
 * reworded title still does — which is exactly why business keys fail when
 * the model rewrites the title.
 */
export function normalizeTitle(title: string): string {
  return title.toLowerCase().replace(/\s+/g, ' ').trim().replace(/[.!?;:,]+$/, '');
}

/** `business` key: SHA-256 of the normalised (run, module, title), hex. */
export function businessKey(c: BusinessContent): string {
  const canonical = JSON.stringify([c.runId, c.module.trim().toLowerCase(), normalizeTitle(c.title)]);
  let key = businessKeys.get(canonical);
  if (key === undefined) {
    key = 'biz_' + hash('sha256', canonical, 'hex').slice(0, 32);
    if (businessKeys.size >= BUSINESS_KEYS_MAX) businessKeys.clear();
    businessKeys.set(canonical, key);
  }
  return key;
}

/**
 * Recently derived business keys: every attempt of a tool call derives the
 * same key again, and a SHA-256 costs more than the lookup. Bounded.
 */
const businessKeys = new Map<string, string>();
const BUSINESS_KEYS_MAX = 256;

/** @internal How many business keys the cache holds now (tests: the bound is kept, and the cache starts over when it is full). */
export function businessKeyCacheSize(): number {
  return businessKeys.size;
}

/** `tool_call` key: `"<run_id>:<tool_use_id>"`, stable across harness retries. */
export function toolCallKey(runId: string, toolUseId: string): string {
  return `${runId}:${toolUseId}`;
}

/**
 * The key for one attempt, or undefined for no header. `per_attempt` draws a
 * fresh UUID from the run's seeded generator every time — the classic
 * mistake, reproducible.
 */
export function attemptKey(
  source: KeySource,
  ctx: { runId: string; module: string; title: string; toolUseId: string; rng: Prng },
): string | undefined {
  switch (source) {
    case 'none':
      return undefined;
    case 'per_attempt':
      return ctx.rng.uuid();
    case 'tool_call':
      return toolCallKey(ctx.runId, ctx.toolUseId);
    case 'business':
      return businessKey(ctx);
  }
}
