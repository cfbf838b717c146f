import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledTs } from './ts-cache.js';
import { commonJsTs, importUserModule } from './load.js';
import { describeThrow } from './errors.js';

/** A fresh `"type": "module"` project folder with these files. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'retrysim-ts-cache-'));
  writeFileSync(join(dir, 'package.json'), '{"name":"p","type":"module"}');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** Runs `f` as the CLI runs: vitest formats stacks itself (its Error.prepareStackTrace), and then the cache is not used. */
async function natively<T>(f: () => Promise<T>): Promise<T> {
  const E = Error as { prepareStackTrace?: unknown };
  const vitests = E.prepareStackTrace;
  delete E.prepareStackTrace;
  try {
    return await f();
  } finally {
    E.prepareStackTrace = vitests;
  }
}

describe('TypeScript user modules compiled into a cache and imported natively (no loader thread)', () => {
  it('a graph of .ts (imported as .js, extensionless), .mjs and JSON files loads with each file\'s own import.meta and one instance per file', async () => {
    const dir = project({
      'lib/helper.ts': "import { readFileSync } from 'node:fs';\nexport const sql: string = readFileSync(new URL('../schema.sql', import.meta.url), 'utf8').trim();\nexport const where = [import.meta.filename, import.meta.dirname];\n",
      'shared.ts': 'const g = globalThis as { __tsCacheLoads?: number };\ng.__tsCacheLoads = (g.__tsCacheLoads ?? 0) + 1;\nexport const loads = (): number => g.__tsCacheLoads!;\n',
      'other.ts': "import { loads } from './shared';\nexport const fromOther = loads;\n",
      'plain.mjs': 'export const twice = (x) => x * 2;\n',
      'config.json': '{"limit": 7}',
      'schema.sql': 'CREATE TABLE t (id INTEGER);\n',
      'entry.ts': "import { sql, where } from './lib/helper.js';\nimport { twice } from './plain.mjs';\nimport config from './config.json';\nimport { loads } from './shared.ts';\nimport { fromOther } from './other.js';\nconst n: number = await Promise.resolve(twice(config.limit));\nexport default { sql, where, n, url: import.meta.url, loads: loads(), same: fromOther === loads };\n",
    });
    const entry = join(dir, 'entry.ts');
    const out = await compiledTs(entry, commonJsTs);
    expect(out).toMatch(/node_modules\/\.cache\/retrysim\/ts\/[0-9a-f]{24}\.mjs$/);
    const mod = (await natively(() => importUserModule(entry))).default as Record<string, unknown>;
    expect(mod).toEqual({ sql: 'CREATE TABLE t (id INTEGER);', where: [join(dir, 'lib', 'helper.ts'), join(dir, 'lib')], n: 14, url: pathToFileURL(entry).href, loads: 1, same: true });
  });

  it('a changed source, or a new file beside one, is compiled again; an unchanged graph is not', async () => {
    const dir = project({ 'util.js': 'export const v = "js";\n', 'entry.ts': "import { v } from './util';\nexport const value: string = v;\n" });
    const entry = join(dir, 'entry.ts');
    const out = (await compiledTs(entry, commonJsTs))!;
    const manifest = out.replace(/\.mjs$/, '.json');
    const first = readFileSync(manifest, 'utf8');
    expect(await compiledTs(entry, commonJsTs)).toBe(out);
    expect(readFileSync(manifest, 'utf8')).toBe(first); // a hit rewrites nothing
    expect(readFileSync(out, 'utf8')).toContain(pathToFileURL(join(dir, 'util.js')).href);
    // util.ts beside util.js: the extensionless import now means it (esbuild and tsx both prefer .ts).
    writeFileSync(join(dir, 'util.ts'), 'export const v: string = "ts";\n');
    await compiledTs(entry, commonJsTs);
    expect(readFileSync(out, 'utf8')).not.toContain(pathToFileURL(join(dir, 'util.js')).href);
    writeFileSync(entry, "import { v } from './util';\nexport const value: string = v + '!';\n");
    await compiledTs(entry, commonJsTs);
    expect(readFileSync(out, 'utf8')).toContain("v + \"!\"");
  });

  it('a package resolves to the file Node picks (its "import" export, not a "module" one; "main", not "module")', async () => {
    const dir = project({
      'node_modules/dual/package.json': '{"name":"dual","exports":{".":{"module":"./bundler.js","import":"./node.mjs","default":"./node.mjs"}}}',
      'node_modules/dual/bundler.js': 'export const who = "bundler";\n',
      'node_modules/dual/node.mjs': 'export const who = "node";\n',
      'node_modules/old/package.json': '{"name":"old","main":"./main.cjs","module":"./module.mjs"}',
      'node_modules/old/main.cjs': 'exports.who = "main";\n',
      'node_modules/old/module.mjs': 'export const who = "module";\n',
      'entry.ts': "import { who } from 'dual';\nimport old from 'old';\nexport const picked: string[] = [who, old.who];\n",
    });
    const entry = join(dir, 'entry.ts');
    expect(await compiledTs(entry, commonJsTs)).toBeDefined();
    expect((await natively(() => importUserModule(entry))).picked).toEqual(['node', 'main']);
  });

  it('a compiled file of the graph gone (another process pruned it) is a miss, compiled again', async () => {
    const dir = project({ 'dep.ts': 'export const d: number = 1;\n', 'entry.ts': "import { d } from './dep.js';\nexport const e = d;\n" });
    const entry = join(dir, 'entry.ts');
    const out = (await compiledTs(entry, commonJsTs))!;
    const dep = readFileSync(out, 'utf8').match(/from "(file:[^"]+\.mjs)"/)![1]!;
    rmSync(fileURLToPath(dep));
    expect(await compiledTs(entry, commonJsTs)).toBe(out);
    expect(existsSync(fileURLToPath(dep))).toBe(true);
  });

  it('what only a loader can do goes to tsx: import.meta.resolve, a computed import(), CommonJS TypeScript, a syntax error, RETRYSIM_TS_CACHE=0', async () => {
    const dir = project({
      'resolve.ts': "export const r = import.meta.resolve('./x.js');\n",
      'computed.ts': "const name = './x.js';\nexport const m = () => import(name);\n",
      'cjs/package.json': '{"type":"commonjs"}',
      'cjs/old.ts': 'export const old = 1;\n',
      'uses-cjs.ts': "import { old } from './cjs/old.js';\nexport const o = old;\n",
      'broken.ts': 'export const x = (1;\n',
      'fine.ts': 'export const fine: number = 1;\n',
    });
    for (const f of ['resolve.ts', 'computed.ts', 'uses-cjs.ts', 'broken.ts']) expect(await compiledTs(join(dir, f), commonJsTs), f).toBeUndefined();
    const before = process.env.RETRYSIM_TS_CACHE;
    process.env.RETRYSIM_TS_CACHE = '0';
    try {
      expect(await compiledTs(join(dir, 'fine.ts'), commonJsTs)).toBeUndefined();
    } finally {
      if (before === undefined) delete process.env.RETRYSIM_TS_CACHE;
      else process.env.RETRYSIM_TS_CACHE = before;
    }
    expect(await compiledTs(join(dir, 'fine.ts'), commonJsTs)).toBeDefined();
    process.env.RETRYSIM_TS_CACHE = 'off';
    try {
      await expect(natively(() => importUserModule(join(dir, 'fine.ts')))).rejects.toThrow("RETRYSIM_TS_CACHE must be 0 (load TypeScript through tsx) or 1 (the compile cache, the default), got 'off'");
    } finally {
      if (before === undefined) delete process.env.RETRYSIM_TS_CACHE;
      else process.env.RETRYSIM_TS_CACHE = before;
    }
    // A name the other module does not export is a link error of the compiled file: tsx says it of the user's.
    const missing = project({ 'helper.ts': 'export const here = 1;\n', 'entry.ts': "import { nope } from './helper.js';\nexport const x = nope;\n" });
    expect(await compiledTs(join(missing, 'entry.ts'), commonJsTs)).toBeDefined();
    await expect(natively(() => importUserModule(join(missing, 'entry.ts')))).rejects.toThrow(/The requested module '\.\/helper\.js' does not provide an export named 'nope'/);
    // The fallback still loads them, with tsx's own words for the broken one.
    expect((await importUserModule(join(dir, 'uses-cjs.ts'))).o).toBe(1);
    await expect(importUserModule(join(dir, 'broken.ts'))).rejects.toThrow(/SyntaxError: Expected "\)" but found ";" \(at .*broken\.ts:1:\d+\)/);
  });

  it('a throw in a compiled module is placed at its .ts file and line (source maps), as under tsx', async () => {
    const dir = project({ 'lib/price.ts': 'export function price(cents: number): string {\n  if (cents > 100) throw new RangeError(`price ${cents} over the limit`);\n  return (cents / 100).toFixed(2);\n}\n', 'entry.ts': "import { price } from './lib/price.js';\nexport const run = (): string => price(1999);\n" });
    const entry = join(dir, 'entry.ts');
    expect(await compiledTs(entry, commonJsTs)).toBeDefined();
    const thrown = await natively(async () => {
      const mod = await importUserModule(entry);
      try {
        (mod.run as () => string)();
      } catch (e) {
        void (e as Error).stack; // V8 formats a stack when it is first read
        return e;
      }
      return undefined;
    });
    expect(describeThrow(thrown)).toBe(`RangeError: price 1999 over the limit (at price (${join(dir, 'lib', 'price.ts')}:2:26))`);
  });
});
