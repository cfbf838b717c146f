import { z } from 'zod';
import { ServiceError } from './errors.js';
import type { ServiceDb, ServiceDefinition } from './definition.js';

const label = z.string().min(1).max(64);
const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { message: 'expected a function' });

/** The shape a service module's default export must have. */
const definitionShape = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'name must be 1–64 letters, digits, _ or -'),
  tables: z.array(z.string().min(1)).min(1, 'declare at least one table the service writes'),
  setup: fn,
  steps: z.array(label).min(1, 'declare the steps (interleaving points) the handler passes to sim.step'),
  crashPoints: z.array(label).optional(),
  situations: z.array(label).optional(),
  slowStep: label.optional(),
  memory: fn.optional(),
  deploy: fn.optional(),
  handle: fn,
  operation: z.object({ method: z.string().min(1).optional(), path: z.union([z.string().startsWith('/'), fn], { message: "path must be a string starting with '/' or a function (op) => path" }), body: fn, headers: fn.optional(), readsKey: z.boolean({ message: 'readsKey must be true or false' }).optional(), resultId: fn.optional() }),
  effects: z.object({ of: fn, owner: fn.optional(), total: fn.optional(), noun: z.string().regex(/^[a-z][a-z _-]{0,31}$/, 'noun must be a lower-case word').optional() }),
  progress: z.object({ settleMs: z.number().finite().nonnegative(), leased: z.boolean(), query: fn, found: fn }).optional(),
});

/**
 * Checks that `value` (a module's default export) is a service definition,
 * with one clear message naming the first problem and where it is.
 */
/** Fields of which a service definition has at least one. */
const SERVICE_FIELDS = ['name', 'tables', 'setup', 'steps', 'handle', 'operation', 'effects'];

export function validateDefinition(value: unknown, source: string): ServiceDefinition {
  const r = definitionShape.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const obj = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
    const named = typeof obj?.name === 'string';
    // Named by its path already: the path is not said twice.
    const name = named ? (obj!.name as string) : source;
    const where = named ? `${source}: ` : '';
    // Nothing of a service at all (a CommonJS module.exports of helpers, a
    // factory not called): say what the export is, not that `name` is missing.
    if (obj === undefined || !SERVICE_FIELDS.some((k) => k in obj)) {
      // `import * as mod` handed to the vitest helper: its namespace holds the definition as `default`.
      const inner = obj?.default as Record<string, unknown> | undefined;
      if (typeof inner === 'object' && inner !== null && typeof inner.name === 'string' && (typeof inner.handle === 'function' || typeof inner.app === 'function')) {
        throw new ServiceError(inner.name, `${source}: got a module's namespace (import * as …), not a ${typeof inner.app === 'function' ? 'app descriptor' : 'service definition'}: pass its default export (import ${typeof inner.app === 'function' ? 'app' : 'service'} from '…')`);
      }
      const what = obj === undefined ? `a ${typeof value}` : Object.keys(obj).length === 0 ? 'an empty object' : `an object of ${Object.keys(obj).slice(0, 5).join(', ')}${Object.keys(obj).length > 5 ? ', …' : ''}`;
      throw new ServiceError(name, `${where}the default export (module.exports in CommonJS) is not a service definition but ${what}; export { name, tables, setup, steps, handle, operation, effects } (an app: { name, app, operation, effects })`);
    }
    const at = issue.path.length === 0 ? 'the default export' : issue.path.join('.');
    // zod's "Invalid input: expected string, received undefined" is a missing field.
    const missing = /^Invalid input: expected (\w+), received undefined$/.exec(issue.message);
    throw new ServiceError(name, `${where}${at}: ${missing !== null ? `missing (expected ${missing[1]})` : issue.message}`);
  }
  const def = value as ServiceDefinition;
  for (const [what, list] of [['steps', def.steps], ['crashPoints', def.crashPoints ?? []], ['situations', def.situations ?? []], ['tables', def.tables]] as const) {
    const dup = list.find((x, i) => list.indexOf(x) !== i);
    if (dup !== undefined) throw new ServiceError(def.name, `${source}: ${what} lists '${dup}' twice`);
  }
  if (def.slowStep !== undefined && !def.steps.includes(def.slowStep)) throw new ServiceError(def.name, `${source}: slowStep '${def.slowStep}' is not one of steps [${def.steps.join(', ')}]`);
  return def;
}

/** The tables of a database, without SQLite's own. */
export function tablesOf(db: ServiceDb): string[] {
  // Temporary tables count too: they are state a request could leave behind.
  return db.prepare("SELECT name FROM (SELECT name, type FROM sqlite_master UNION ALL SELECT name, type FROM sqlite_temp_master) WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
}

/**
 * Checks that setup created exactly the declared tables: an undeclared
 * table is state the checkers and the reset between runs would not know
 * about, so it is refused rather than silently shared between runs.
 */
export function checkTables(def: ServiceDefinition, db: ServiceDb, existing?: string): void {
  const have = tablesOf(db);
  const extra = have.filter((t) => !def.tables.includes(t));
  const missing = def.tables.filter((t) => !have.includes(t));
  if (existing !== undefined && (extra.length > 0 || missing.length > 0)) {
    // A file another service (or an older schema) wrote: refuse rather than mix the two.
    throw new ServiceError(def.name, `${existing} holds tables [${have.join(', ')}], but the service declares [${def.tables.join(', ')}]; use a fresh --db file for this service`);
  }
  if (extra.length > 0) throw new ServiceError(def.name, `writes outside its declared tables: setup created ${extra.map((t) => `'${t}'`).join(', ')}, not in tables [${def.tables.join(', ')}]; declare it or drop it`);
  if (missing.length > 0) throw new ServiceError(def.name, `declares table(s) ${missing.map((t) => `'${t}'`).join(', ')} that setup did not create`);
}
