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
  operation: z.object({ method: z.string().min(1).optional(), path: z.string().startsWith('/'), body: fn, resultId: fn.optional() }),
  effects: z.object({ of: fn, owner: fn.optional(), total: fn.optional(), noun: z.string().regex(/^[a-z][a-z _-]{0,31}$/, 'noun must be a lower-case word').optional() }),
  progress: z.object({ settleMs: z.number().finite().nonnegative(), leased: z.boolean(), query: fn, found: fn }).optional(),
});

/**
 * Checks that `value` (a module's default export) is a service definition,
 * with one clear message naming the first problem and where it is.
 */
export function validateDefinition(value: unknown, source: string): ServiceDefinition {
  const r = definitionShape.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const at = issue.path.length === 0 ? 'the default export' : issue.path.join('.');
    const name = typeof (value as { name?: unknown } | undefined)?.name === 'string' ? (value as { name: string }).name : source;
    throw new ServiceError(name, `${source}: ${at}: ${issue.message}`);
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
