import { relative, resolve, sep } from 'node:path';
import type { ServiceDefinition } from './definition.js';

/**
 * Loaded user services by module path. A scenario names its service by the
 * path it was loaded from; the runner (and the minimiser, and worker
 * threads, which all call `runScenario` with the scenario alone) find the
 * definition here, as Node's own module cache finds a module.
 */
const byModule = new Map<string, ServiceDefinition>();

/** The key a module path is filed under: relative to the working directory, `/`-separated. */
export function moduleKey(path: string): string {
  const r = relative(process.cwd(), resolve(path));
  return (r === '' ? '.' : r).split(sep).join('/');
}

/** Files a loaded definition under its module path. */
export function registerService(path: string, def: ServiceDefinition): void {
  byModule.set(moduleKey(path), def);
}

/** The definition loaded from this module path, if any. */
export function registeredService(path: string): ServiceDefinition | undefined {
  return byModule.get(moduleKey(path));
}
