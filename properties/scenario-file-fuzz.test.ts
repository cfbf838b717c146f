/**
 * Mutated scenario files through `retrysim replay` (in-process): every file
 * ends in a verdict (exit 0 expect met, 1 not met or did not finish) or in
 * exit 2 with a message naming the file and the bad path — never an escaped
 * error or a stack trace, never a hang (the kernel's event and time limits
 * bound each case), and never exit 0 for a fault the run silently ignored.
 */
import { describe, expect, vi } from 'vitest';
import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run as replay } from '../src/cli/replay.js';
import { builtinService } from '../src/tracker/builtin.js';
import { tempDirs } from '../src/testing/temp-dirs.js';

const tmp = tempDirs();
const dir = tmp('rs-scn-fuzz-');
const root = join(import.meta.dirname, '..');
const BASES = [
  'scenarios/canonical/lost_response/naive--none.json',
  'scenarios/canonical/slow_takeover/key_atomic--tool_call.json',
  'scenarios/canonical/concurrent_duplicate/key_split--tool_call.json',
  'scenarios/canonical/model_new_id/key_atomic--business.json',
].map((f) => readFileSync(join(root, f), 'utf8'));

/** Values that have broken the loader or the kernel before. */
const value = fc.oneof(
  fc.constantFrom<unknown>(0, -1, 0.5, 1, 2, 1e9, 1e300, 3_600_000, 600_001, Number.MAX_SAFE_INTEGER, '', 'process', 'claim', 'respond', 'nowhere', true, false, null, [], {},
    { atStep: 'nowhere' }, { atStep: 'process', ms: 3.6e6 }, { atMs: 3_600_000 }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Fields where a wrong value used to crash or be ignored: edited by name, not only by random path. */
const FIELDS: ReadonlyArray<Array<string | number>> = [
  ['faults', 'pause'], ['faults', 'kill'], ['faults', 'slowMs'], ['faults', 'crashMidRequest'], ['operations', 0, 'startMs'], ['operations', 0, 'staggerMs'],
  ['operations', 0, 'workers'], ['client', 'timeoutMs'], ['client', 'deadlineMs'], ['client', 'maxAttempts'], ['network', 'latencyMeanMs'], ['network', 'loseResponses'],
  ['service', 'leaseMs'], ['service', 'instances'], ['seed'], ['format'],
];
const fieldValue = fc.constantFrom<unknown>(0, 1, 3, 600_000, 600_001, 3_600_000, 1e300, -1, 'x', null, { atStep: 'nowhere', ms: 5, count: 1 }, { atStep: 'process', ms: 5, count: 1 },
  { atStep: 'claim', ms: 5, count: 1 }, { atStep: 'nowhere' }, { atStep: 'respond', restartAfterMs: 10 }, { atMs: 3_599_999 });

type Edit = { kind: 'field'; field: number; value: unknown } | { kind: 'set'; path: number[]; value: unknown } | { kind: 'delete'; path: number[] } | { kind: 'add'; path: number[] } | { kind: 'text'; how: 'bom' | 'truncate' | 'garbage' };

function edit(v: unknown, path: number[], f: (parent: Record<string, unknown> | unknown[], key: string) => void): void {
  if (v === null || typeof v !== 'object') return;
  const keys = Object.keys(v);
  if (keys.length === 0) return;
  const k = keys[path[0]! % keys.length]!;
  const child = (v as Record<string, unknown>)[k];
  if (path.length === 1 || child === null || typeof child !== 'object') f(v as Record<string, unknown>, k);
  else edit(child, path.slice(1), f);
}

function apply(text: string, e: Edit): string {
  if (e.kind === 'text') return e.how === 'bom' ? '\ufeff' + text : e.how === 'truncate' ? text.slice(0, text.length >> 1) : text + '}x';
  if (e.kind === 'field') return setField(text, FIELDS[e.field]!, e.value);
  const bom = text.startsWith('\ufeff') ? '\ufeff' : '';
  let doc: unknown;
  try {
    doc = JSON.parse(text.slice(bom.length));
  } catch {
    return text; // already broken text: nothing to edit structurally
  }
  edit(doc, e.path, (p, k) => {
    if (e.kind === 'set') (p as Record<string, unknown>)[k] = e.value;
    else if (e.kind === 'delete') delete (p as Record<string, unknown>)[k];
    else (p as Record<string, unknown>)[`${k}Extra`] = 1;
  });
  return bom + JSON.stringify(doc, null, 2);
}

function setField(text: string, keys: Array<string | number>, v: unknown): string {
  const bom = text.startsWith('\ufeff') ? '\ufeff' : '';
  let doc: any;
  try {
    doc = JSON.parse(text.slice(bom.length));
  } catch {
    return text;
  }
  let o = doc;
  for (const k of keys.slice(0, -1)) {
    if (o === null || typeof o !== 'object') return text;
    o[k] ??= {};
    o = o[k];
  }
  if (o === null || typeof o !== 'object') return text;
  o[keys[keys.length - 1]!] = v;
  return bom + JSON.stringify(doc, null, 2);
}

const path = fc.array(fc.nat(30), { minLength: 1, maxLength: 4 });
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('field' as const), field: fc.nat(FIELDS.length - 1), value: fieldValue }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), path, value }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), path }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), path }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('text' as const), how: fc.constantFrom('bom' as const, 'truncate' as const, 'garbage' as const) }) },
);

let n = 0;
describe('mutated scenario files', () => {
  test.prop([fc.nat(BASES.length - 1), fc.array(editArb, { minLength: 1, maxLength: 3 })], { numRuns: Number(process.env.SCENARIO_FUZZ_RUNS ?? 200), seed: Number(process.env.FUZZ_SEED ?? 15) })(
    'end in a verdict or in exit 2 naming the file and the path',
    async (base, edits) => {
      const text = edits.reduce(apply, BASES[base]!);
      const file = join(dir, `case-${n++}.json`);
      writeFileSync(file, text);
      let out = '';
      let err = '';
      const log = vi.spyOn(console, 'log').mockImplementation((...a) => void (out += a.join(' ') + '\n'));
      const error = vi.spyOn(console, 'error').mockImplementation((...a) => void (err += a.join(' ') + '\n'));
      let code: number;
      try {
        code = await replay([file]);
      } finally {
        log.mockRestore();
        error.mockRestore();
      }
      expect(err + out).not.toMatch(/^\s+at .*:\d+:\d+/m);
      expect([0, 1, 2, 3]).toContain(code);
      // 3: the edit changed what the recorded schedule meets — divergence, named with the decision.
      if (code === 3) expect(err).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: replay diverged at choice #\\d+`));
      if (code === 2) {
        expect(err).toContain(file);
        expect(err).toMatch(/invalid scenario\n {2}at /);
      }
      if (code === 0) {
        // A fault pinned to a step must name a step the variant reaches, or it never fires.
        const s = JSON.parse(text.replace(/^\ufeff/, ''));
        for (const step of [s.faults?.pause?.atStep, s.faults?.kill?.atStep]) {
          if (step !== undefined) expect(builtinService(s.service.variant!).steps).toContain(step);
        }
        expect(out).toMatch(/expect: met/);
      }
    },
    120_000,
  );
});
