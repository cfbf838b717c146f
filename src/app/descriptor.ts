import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EffectId, EffectOwner, ServiceDefinition } from '../service/definition.js';
import type { KvClient } from '../kv/client.js';

/** What the host hands the app factory: the clients of the simulated stores. */
export interface AppEnv {
  /** A `@redis/client`-shaped client of the simulated key-value store (shared by every instance, kept across kills). */
  redis: KvClient;
}

/** A standard Node request listener: what `express()`, Koa's `app.callback()` or a plain `node:http` handler is. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => unknown;

/** A read-only view of the simulated key-value store, for counting effects. */
export interface KvView {
  /** The value of a key (expiry ignored: effects do not expire), or null; a hash's is the JSON of its fields. */
  get(key: string): string | null;
  /** Every key with this prefix and its value (a hash's as the JSON of its fields), in key order. */
  scan(prefix: string): Array<[string, string]>;
}

/**
 * An unmodified Node HTTP app plus what retrysim needs to know about it.
 * The app factory takes its store client as a parameter (as a testable app
 * takes its Redis client): `env.redis`, a `@redis/client`-shaped client of
 * the simulated key-value store. retrysim delivers each request in
 * process as a real `IncomingMessage`/`ServerResponse` pair and turns every
 * store command into an interleaving point.
 *
 * @example
 * import express from 'express';
 * import type { AppDescriptor } from 'retrysim';
 * export default {
 *   name: 'orders',
 *   app: ({ redis }) => { const app = express(); ...; return app; },
 *   operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
 *   // An operation is its runId *and* its tenant: two tenants may send the same runId.
 *   effects: { noun: 'order', of: (kv, op) => kv.scan('order:').filter(([, v]) => JSON.parse(v).order === op.runId && JSON.parse(v).tenant === op.tenant).map(([k]) => Number(k.slice(6))) },
 * } satisfies AppDescriptor;
 */
export interface AppDescriptor {
  /** Short name for messages and file names (letters, digits, `_`, `-`). */
  name: string;
  /**
   * Builds one process of the app and returns its listener. Called on an
   * instance's first request and again after every kill/restart: whatever
   * it keeps in memory (an in-process cache, a library's default
   * in-memory store) is lost with the process, as it would be.
   */
  app(env: AppEnv): RequestListener | Promise<RequestListener>;
  /** The logical operation the built-in client performs (as for a ServiceDefinition). */
  operation: ServiceDefinition['operation'];
  /** How to count effects, read from the store. */
  effects: {
    /** The ids of one operation's effects: numbers or non-empty strings (a UUID the app stored), as for a ServiceDefinition. */
    of(kv: KvView, op: EffectOwner): EffectId[];
    owner?(kv: KvView, id: EffectId): EffectOwner | undefined;
    total?(kv: KvView): number;
    noun?: string;
  };
  /** Opt in to invariant 5 (progress), as for a ServiceDefinition. */
  progress?: ServiceDefinition['progress'];
  /**
   * The app keeps no state in process memory that one request can see
   * another leave behind (default false). Only then may exhaustive
   * exploration treat two requests' phases on the same instance as
   * independent when their store commands touch different keys.
   */
  stateless?: boolean;
}

/** Whether a module's default export is an app descriptor (it has `app`, not `handle`). */
export function isAppDescriptor(v: unknown): v is AppDescriptor {
  return typeof v === 'object' && v !== null && typeof (v as { app?: unknown }).app === 'function' && (v as { handle?: unknown }).handle === undefined;
}
