import type { EffectId, ServiceDb, ServiceDefinition } from '../service/definition.js';
import { markApp, ServiceError } from '../service/errors.js';
import { KV_COMMANDS } from '../kv/client.js';
import { KV_TABLE, KvStore, setupKv } from '../kv/store.js';
import type { AppDescriptor, KvView } from './descriptor.js';
import { AppInstance, serveRequest } from './serve-request.js';

/** The interleaving points of every hosted app: one per store command. */
export const APP_STEPS: readonly string[] = KV_COMMANDS.map((c) => `kv.${c}`);
/** Where the crash fault strikes a hosted app: the answer of a store command is lost after it ran. */
export const APP_CRASH_POINTS: readonly string[] = APP_STEPS.map((s) => `${s}: answer lost`);

const stores = new WeakMap<ServiceDb, KvStore>();

function storeOf(db: ServiceDb): KvStore {
  let s = stores.get(db);
  if (s === undefined) {
    s = new KvStore(db);
    stores.set(db, s);
  }
  return s;
}

function viewOf(db: ServiceDb): KvView {
  const s = storeOf(db);
  return { get: (k) => s.scan(k).find(([key]) => key === k)?.[1] ?? null, scan: (p) => s.scan(p) };
}

/**
 * Turns an unmodified Node HTTP app (a listener factory plus its
 * descriptor) into a {@link ServiceDefinition}: check, replay, serve,
 * conformance, the pages and the vitest helper then run it through the one
 * service path. Its database holds the simulated key-value store (one
 * table, shared by every instance, kept across kills); its steps are the
 * store's commands; its in-process memory is the app process itself.
 */
/** Whether a definition is a hosted app's (made by {@link appService}). */
export function isHostedApp(def: Pick<ServiceDefinition, 'steps'>): boolean {
  return def.steps === APP_STEPS;
}

/** The flag that names this module on a command line as its user gave it: `--app` for a hosted app, else `--service`. */
export function moduleFlag(def: Pick<ServiceDefinition, 'steps'> | undefined): '--app' | '--service' {
  return def !== undefined && isHostedApp(def) ? '--app' : '--service';
}

/** The definitions {@link appService} made with one module load per simulated process. */
const perProcessApps = new WeakSet<object>();

/**
 * How a definition loads its modules for a run: `per-process` for a hosted
 * app made with a fresh load per simulated process, else `once`. A file
 * found with it says so (`service.moduleLoads`), and replay loads it so.
 */
export function moduleLoadsOf(def: ServiceDefinition): 'once' | 'per-process' {
  return perProcessApps.has(def) ? 'per-process' : 'once';
}

/**
 * `fresh`, when given, loads a new copy of the app's module for each
 * simulated process (src/app/per-process.ts): its module-level state is
 * then that process's, as in separate Node processes.
 */
export function appService(desc: AppDescriptor, fresh?: () => Promise<AppDescriptor>): ServiceDefinition<AppInstance> {
  markApp(String(desc.name)); // its problems, from here on, are the app's
  if (typeof desc.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(desc.name)) throw new ServiceError(String(desc.name), 'the app descriptor needs a name of 1–64 letters, digits, _ or -');
  // `app: expressApp` instead of a factory: called as app({ redis }), Express took the env for a request and threw inside itself.
  const l = desc.app as unknown as { request?: { app?: unknown }; handle?: unknown; use?: unknown };
  if (l.request?.app === l || (typeof l.handle === 'function' && typeof l.use === 'function')) {
    throw new ServiceError(desc.name, "the descriptor's app is an Express app itself; app is the factory that builds one: app: ({ redis }) => { const app = express(); …; return app; }");
  }
  const e = desc.effects;
  if (typeof e?.of !== 'function') throw new ServiceError(desc.name, 'the app descriptor needs effects.of(kv, op) => ids (how to count the effects of one operation in the store)');
  const def: ServiceDefinition<AppInstance> = {
    name: desc.name,
    tables: [KV_TABLE],
    setup: setupKv,
    steps: APP_STEPS,
    crashPoints: APP_CRASH_POINTS,
    // The slow fault's processing time passes after the first SET: where a claim (SET NX) is taken.
    slowStep: 'kv.set',
    memory: () => new AppInstance(fresh),
    handle: (req, sim) => serveRequest(desc, sim.memory, storeOf(sim.db), req, sim),
    operation: desc.operation,
    effects: {
      // An of that disagrees with owner (one ignoring op.tenant) is refused where every definition's is (effectsOf).
      of: (db, op) => e.of(viewOf(db), op),
      ...(e.owner ? { owner: (db: ServiceDb, id: EffectId) => e.owner!(viewOf(db), id) } : {}),
      ...(e.total ? { total: (db: ServiceDb) => e.total!(viewOf(db)) } : {}),
      ...(e.noun !== undefined ? { noun: e.noun } : {}),
    },
    ...(desc.progress ? { progress: desc.progress } : {}),
  };
  if (fresh !== undefined) perProcessApps.add(def);
  return def;
}
