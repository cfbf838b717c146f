import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { KvStore, setupKv } from './store.js';

function store(): KvStore {
  const db = new Database(':memory:');
  setupKv(db);
  return new KvStore(db);
}

describe('the simulated key-value store (Redis semantics on virtual time)', () => {
  it('SET NX writes only a missing key; XX only an existing one', () => {
    const s = store();
    expect(s.set('k', 'a', { NX: true }, 0)).toBe('OK');
    expect(s.set('k', 'b', { NX: true }, 0)).toBeNull();
    expect(s.get('k', 0)).toBe('a');
    expect(s.set('missing', 'x', { XX: true }, 0)).toBeNull();
    expect(s.get('missing', 0)).toBeNull();
    expect(s.set('k', 'c', { XX: true, GET: true }, 0)).toBe('a');
    expect(s.get('k', 0)).toBe('c');
  });

  it('PX and EX expire on the given clock, and an expired key is free for NX again', () => {
    const s = store();
    s.set('lease', 'me', { NX: true, PX: 100 }, 1_000);
    expect(s.pttl('lease', 1_040)).toBe(60);
    expect(s.get('lease', 1_099)).toBe('me');
    expect(s.get('lease', 1_100)).toBeNull();
    expect(s.set('lease', 'you', { NX: true, EX: 2 }, 1_100)).toBe('OK');
    expect(s.pttl('lease', 1_100)).toBe(2_000);
  });

  it('SET clears the expiry unless KEEPTTL; PTTL says -1 without one and -2 when missing', () => {
    const s = store();
    s.set('k', 'a', { PX: 50 }, 0);
    s.set('k', 'b', { KEEPTTL: true }, 10);
    expect(s.pttl('k', 10)).toBe(40);
    s.set('k', 'c', {}, 20);
    expect(s.pttl('k', 20)).toBe(-1);
    expect(s.pttl('nope', 20)).toBe(-2);
  });

  it('DEL counts the keys that existed; INCR counts from 0; PEXPIRE needs the key', () => {
    const s = store();
    s.set('a', '1', {}, 0);
    expect(s.del(['a', 'b'], 0)).toBe(1);
    expect(s.incr('n', 0)).toBe(1);
    expect(s.incr('n', 0)).toBe(2);
    expect(s.pexpire('missing', 10, 0)).toBe(0);
    expect(s.pexpire('n', 10, 0)).toBe(1);
    expect(s.get('n', 10)).toBeNull();
  });

  it('a conditional put writes only when its condition holds for the current value', () => {
    const s = store();
    expect(s.putIf('item', 'v1', (old) => old === undefined, undefined, 0)).toBe(true);
    expect(s.putIf('item', 'v2', (old) => old === undefined, undefined, 0)).toBe(false);
    expect(s.putIf('item', 'v2', (old) => old === 'v1', undefined, 0)).toBe(true);
    expect(s.get('item', 0)).toBe('v2');
  });

  it('refuses NX with XX and a non-positive expiry, as Redis does', () => {
    const s = store();
    expect(() => s.set('k', 'v', { NX: true, XX: true }, 0)).toThrow(/syntax/);
    expect(() => s.set('k', 'v', { PX: 0 }, 0)).toThrow(/invalid expire/);
  });
});

describe('what Redis refuses, the store refuses', () => {
  it('a fractional EX, PX or PEXPIRE is an error (as Redis: ERR value is not an integer), and nothing is written', () => {
    const s = store();
    expect(() => s.set('k', 'v', { EX: 1.5 }, 0)).toThrow(/ERR value is not an integer or out of range/);
    expect(() => s.set('k', 'v', { PX: 2.5 }, 0)).toThrow(/ERR value is not an integer or out of range/);
    expect(s.get('k', 0)).toBeNull();
    s.set('k', 'v', { EX: 2 }, 0);
    expect(() => s.pexpire('k', 0.5, 0)).toThrow(/ERR value is not an integer or out of range/);
    expect(s.pttl('k', 0)).toBe(2_000);
  });
});

describe('PEXPIRE with a mode (node-redis: expire(key, seconds, mode))', () => {
  it('NX sets only without an expiry, XX only with one, GT/LT only a later/earlier one (no expiry is infinite)', () => {
    const s = store();
    s.set('k', 'v', {}, 0);
    expect(s.pexpire('k', 1_000, 0, 'XX')).toBe(0);
    expect(s.pexpire('k', 1_000, 0, 'GT')).toBe(0);
    expect(s.pttl('k', 0)).toBe(-1);
    expect(s.pexpire('k', 1_000, 0, 'NX')).toBe(1);
    expect(s.pexpire('k', 5_000, 0, 'NX')).toBe(0);
    expect(s.pttl('k', 0)).toBe(1_000);
    expect(s.pexpire('k', 500, 0, 'GT')).toBe(0);
    expect(s.pexpire('k', 2_000, 0, 'GT')).toBe(1);
    expect(s.pexpire('k', 3_000, 0, 'LT')).toBe(0);
    expect(s.pexpire('k', 100, 0, 'XX')).toBe(1);
    expect(s.pttl('k', 0)).toBe(100);
    expect(() => s.pexpire('k', 100, 0, 'ZZ' as 'NX')).toThrow(/Unsupported option ZZ/);
  });
});
