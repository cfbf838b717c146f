import { describe, expect, test } from 'vitest';
import { hash } from 'node:crypto';
import { Prng } from '../random/prng.js';
import { attemptKey, businessKey, businessKeyCacheSize, isStableKeySource, KEY_SOURCES, normalizeTitle, toolCallKey } from './keys.js';

describe('key sources (SPEC §4)', () => {
  test('only tool_call and business keys are stable across attempts', () => {
    expect(KEY_SOURCES.filter(isStableKeySource)).toEqual(['tool_call', 'business']);
  });

  test('normalizeTitle: case, runs of whitespace, surrounding space and trailing punctuation do not make a new bug', () => {
    expect(normalizeTitle('  Login  Button\tbroken\n')).toBe('login button broken');
    expect(normalizeTitle('Login button broken!?.')).toBe('login button broken');
    expect(normalizeTitle('Login button broken;:,')).toBe('login button broken');
    // Only *trailing* punctuation goes; inside a title it is content.
    expect(normalizeTitle('v1.2: crash, then hang.')).toBe('v1.2: crash, then hang');
    // A reworded title is a new key — the point of scenario 5.
    expect(normalizeTitle('Login button does nothing')).not.toBe(normalizeTitle('Login button broken'));
  });

  test('businessKey: biz_ + the first 32 hex digits of SHA-256 over [run, normalised module, normalised title]', () => {
    const c = { runId: 'run-7', module: ' Auth ', title: 'Login  button broken.' };
    const expected = 'biz_' + hash('sha256', JSON.stringify(['run-7', 'auth', 'login button broken']), 'hex').slice(0, 32);
    expect(businessKey(c)).toBe(expected);
    expect(businessKey({ runId: 'run-7', module: 'AUTH', title: 'login button broken' })).toBe(expected);
  });

  test('businessKey: the cache of derived keys is bounded at 256 and starts over when full; a cached key is the same key', () => {
    const before = businessKeyCacheSize();
    const fresh = (i: number) => ({ runId: `cache-run-${i}`, module: 'm', title: 't' });
    // Fill it to the bound from wherever earlier tests left it, then 44 more: the 257th distinct key clears it.
    const toFull = 256 - before;
    for (let i = 0; i < toFull + 44; i++) businessKey(fresh(i));
    expect(businessKeyCacheSize()).toBe(44);
    const k = businessKey(fresh(toFull + 43));
    expect(businessKeyCacheSize()).toBe(44); // a hit adds nothing
    expect(k).toBe(businessKey(fresh(toFull + 43)));
  });

  test('businessKey: the run, the module and the title each make a different key', () => {
    const base = { runId: 'r', module: 'm', title: 't' };
    const keys = [base, { ...base, runId: 'r2' }, { ...base, module: 'm2' }, { ...base, title: 't2' }].map(businessKey);
    expect(new Set(keys).size).toBe(4);
    // The three parts are delimited: shifting text between them is another key.
    expect(businessKey({ runId: 'ab', module: 'c', title: 't' })).not.toBe(businessKey({ runId: 'a', module: 'bc', title: 't' }));
  });

  test('businessKey: the same answers after many other keys went through the bounded cache', () => {
    const first = businessKey({ runId: 'first', module: 'm', title: 't' });
    for (let i = 0; i < 600; i++) businessKey({ runId: `r${i}`, module: 'm', title: 't' });
    expect(businessKey({ runId: 'first', module: 'm', title: 't' })).toBe(first);
  });

  test('toolCallKey is "<run_id>:<tool_use_id>"', () => {
    expect(toolCallKey('run-1', 'toolu_run-1_3')).toBe('run-1:toolu_run-1_3');
  });

  test('attemptKey per source: none sends no key; per_attempt a fresh seeded UUID each time; the stable ones the same key every time', () => {
    const ctx = (rng: Prng) => ({ runId: 'r1', module: 'm', title: 'T', toolUseId: 'toolu_r1_1', rng });
    const rng = new Prng(5);
    expect(attemptKey('none', ctx(rng))).toBeUndefined();
    const a = attemptKey('per_attempt', ctx(rng));
    const b = attemptKey('per_attempt', ctx(rng));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b).not.toBe(a);
    // Seeded: the same generator state gives the same key (replayable).
    expect(attemptKey('per_attempt', ctx(new Prng(5)))).toBe(a);
    expect(attemptKey('tool_call', ctx(rng))).toBe('r1:toolu_r1_1');
    expect(attemptKey('business', ctx(rng))).toBe(businessKey({ runId: 'r1', module: 'm', title: 'T' }));
    expect(attemptKey('business', ctx(rng))).toBe(attemptKey('business', ctx(new Prng(9))));
  });
});
